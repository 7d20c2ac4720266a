'use strict';
// What a TLS server's listeners get, on node's https and fast-http's: the socket of
// 'tlsClientError' and 'clientError' (a TLSSocket whose handshake did not complete) and the
// servername a resumed session shows.
const assert = require('node:assert/strict');
const tls = require('node:tls');
const { test } = require('node:test');
const { raw } = require('../wire/helpers');
const { onBoth, rawExchange, serverOptions, startServer, tlsExchange, waitForEvent } = require('./helpers');

const T = { timeout: 30000 };
const GET = raw('GET / HTTP/1.1', 'Host: localhost', '', '');

function socketFacts(socket) {
  return {
    tlsSocket: socket instanceof tls.TLSSocket,
    secureEstablished: socket._secureEstablished,
    encrypted: socket.encrypted,
    authorized: socket.authorized,
    authorizationError: socket.authorizationError,
    alpnProtocol: socket.alpnProtocol,
  };
}

test('the socket of tlsClientError and clientError is a TLSSocket, not established', T, async () => {
  const runs = await onBoth(async (impl) => {
    const seen = [];
    const srv = await startServer(impl, serverOptions(), (req, res) => res.end(), (server) => {
      server.on('tlsClientError', (err, socket) => seen.push(['tlsClientError', socketFacts(socket)]));
      server.on('clientError', (err, socket) => {
        seen.push(['clientError', socketFacts(socket)]);
        socket.destroy();
      });
    });
    try {
      await rawExchange(srv.port, Buffer.from('GET / HTTP/1.1\r\n\r\n'));
      await waitForEvent(srv.events, (e) => e.event === 'clientError');
      return seen;
    } finally {
      await srv.close();
    }
  });
  assert.equal(runs['node:https'].length, 2, 'node:https reported no tlsClientError + clientError');
  assert.deepStrictEqual(runs['fast-http'], runs['node:https']);
});

test('servername of a resumed session, TLS 1.3 and TLS 1.2', T, async () => {
  for (const maxVersion of ['TLSv1.3', 'TLSv1.2']) {
    const runs = await onBoth(async (impl) => {
      const seen = [];
      const srv = await startServer(impl, serverOptions(), (req, res) => {
        seen.push([req.socket.isSessionReused(), req.socket.servername]);
        res.end('ok');
      });
      try {
        const first = await tlsExchange(srv.port, GET, { until: 1, wantSession: true, tls: { maxVersion } });
        assert.ok(first.session, 'no session to resume');
        await tlsExchange(srv.port, GET, { until: 1, tls: { maxVersion, session: first.session } });
        return seen;
      } finally {
        await srv.close();
      }
    });
    assert.deepEqual(runs['node:https'].map((s) => s[0]), [false, true], `${maxVersion}: node did not resume`);
    assert.deepStrictEqual(runs['fast-http'], runs['node:https'], maxVersion);
  }
});
