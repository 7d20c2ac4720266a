'use strict';
// An https server made without a certificate (no key / cert, falsy ones, a key alone): node
// makes it, and every handshake fails; fast-http's is native and fails them the same way.
const assert = require('node:assert/strict');
const tls = require('node:tls');
const { test } = require('node:test');
const { certs, fastHttps, isFastHttpServer, onBoth, startServer } = require('./helpers');

const T = { timeout: 30000 };

/** A TLS client's outcome: the error code it got (or 'secure'), never rejects. */
function handshake(port, maxVersion) {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, maxVersion });
    socket.on('secureConnect', () => {
      socket.destroy();
      resolve('secure');
    });
    socket.on('error', (err) => resolve(err.code));
  });
}

for (const [label, options] of [
  ['no options', {}],
  ['key and cert false', { key: false, cert: false }],
  ['a key alone', { key: certs.rsa.key }],
]) {
  test(`${label}: a native server whose handshakes fail as node's`, T, async () => {
    assert.ok(isFastHttpServer(fastHttps().createServer(options)), 'made node\'s own server');
    const runs = await onBoth(async (impl) => {
      const srv = await startServer(impl, options, (req, res) => res.end());
      try {
        const clients = [];
        for (const maxVersion of ['TLSv1.3', 'TLSv1.2']) clients.push(await handshake(srv.port, maxVersion));
        // The second client's tlsClientError may come after its own error.
        const deadline = Date.now() + 10000;
        while (srv.events.filter((e) => e.event === 'tlsClientError').length < 2 && Date.now() < deadline) {
          await new Promise((resolve) => setImmediate(resolve));
        }
        return { clients, events: srv.events.filter((e) => e.event !== 'connection') };
      } finally {
        await srv.close();
      }
    });
    assert.deepStrictEqual(runs['fast-http'], runs['node:https']);
  });
}
