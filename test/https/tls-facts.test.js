'use strict';
// What the app sees of TLS: server events and their order, and the TLS facts on req.socket
// (encrypted, authorized, ALPN, SNI, protocol, cipher, resumption, the peer certificate,
// keying material), on node's https server and fast-http's, for the same clients.
const assert = require('node:assert/strict');
const tls = require('node:tls');
const { test } = require('node:test');
const { raw } = require('../wire/helpers');
const { certs, onBoth, serverOptions, startServer, summarize, tlsExchange } = require('./helpers');

const T = { timeout: 60000 };
const GET = raw('GET / HTTP/1.1', 'Host: localhost', '', '');

/** What an app can read off req.socket, minus values that legitimately change per run. */
function facts(sock) {
  const cipher = sock.getCipher();
  const peer = sock.getPeerCertificate();
  let ekm;
  try {
    ekm = sock.exportKeyingMaterial(32, 'EXPERIMENTAL-fast-http-judge').length;
  } catch (err) {
    ekm = `throws ${err.code}`;
  }
  return {
    instanceofTLSSocket: sock instanceof tls.TLSSocket,
    encrypted: sock.encrypted,
    authorized: sock.authorized,
    authorizationError: sock.authorizationError,
    alpnProtocol: sock.alpnProtocol,
    servername: sock.servername,
    protocol: sock.getProtocol(),
    cipherKeys: cipher && Object.keys(cipher).sort(),
    cipherVersion: cipher && cipher.version,
    cipherNames: cipher && [typeof cipher.name, typeof cipher.standardName],
    reused: sock.isSessionReused(),
    peerCertKeys: peer && Object.keys(peer).sort(),
    peerSubject: peer && peer.subject && { ...peer.subject },
    peerIssuerCN: peer && peer.issuer && peer.issuer.CN,
    ekmLength: ekm,
  };
}

function factsHandler(seen) {
  return (req, res) => {
    seen.push(facts(req.socket));
    res.end('ok');
  };
}

/** One GET with `client` tls options against a server with `server` options, on both. */
async function compareFacts(t, { server = {}, client = {}, check }) {
  const runs = await onBoth(async (impl) => {
    const seen = [];
    const srv = await startServer(impl, serverOptions(server), factsHandler(seen));
    let result;
    try {
      result = await tlsExchange(srv.port, GET, { until: 1, tls: client });
    } finally {
      await srv.close();
    }
    return { client: { ...summarize(result), secure: result.secure }, seen, events: srv.events };
  });
  const a = runs['node:https'];
  if (process.env.HTTPS_JUDGE_DEBUG) t.diagnostic(JSON.stringify(a));
  assert.equal(a.client.timedOut, false, 'node:https itself timed out: the scenario is broken');
  if (check) check(a);
  assert.deepStrictEqual(runs['fast-http'].seen, a.seen, 'TLS facts on req.socket differ from node:https');
  assert.deepStrictEqual(runs['fast-http'].client, a.client, 'what the client got differs from node:https');
  assert.deepStrictEqual(runs['fast-http'].events, a.events, 'server events differ from node:https');
  return a;
}

test('events: raw connection, then secureConnection, then request, then close', T, async (t) => {
  await compareFacts(t, {
    check: (a) => assert.deepEqual(a.events.map((e) => e.event),
      ['connection', 'secureConnection', 'request', 'close']),
  });
});

test('encrypted, TLS 1.3, SNI servername, no ALPN from the client', T, async (t) => {
  await compareFacts(t, {
    check: (a) => {
      assert.equal(a.seen[0].servername, 'localhost');
      assert.equal(a.seen[0].protocol, 'TLSv1.3');
      assert.equal(a.seen[0].alpnProtocol, false);
    },
  });
});

test('no SNI (connecting by IP address)', T, async (t) => {
  await compareFacts(t, {
    client: { servername: undefined },
    check: (a) => assert.equal(a.seen[0].servername, false),
  });
});

test('client ALPN [http/1.1]', T, async (t) => {
  await compareFacts(t, {
    client: { ALPNProtocols: ['http/1.1'] },
    check: (a) => assert.equal(a.seen[0].alpnProtocol, 'http/1.1'),
  });
});

test('client ALPN [h2, http/1.1], server ALPNProtocols [http/1.1]', T, async (t) => {
  await compareFacts(t, {
    server: { ALPNProtocols: ['http/1.1'] },
    client: { ALPNProtocols: ['h2', 'http/1.1'] },
    check: (a) => assert.equal(a.seen[0].alpnProtocol, 'http/1.1'),
  });
});

test('client ALPN [h2] only: no protocol in common', T, async (t) => {
  await compareFacts(t, { client: { ALPNProtocols: ['h2'] } });
});

test('TLS 1.2 (client maxVersion), RSA certificate', T, async (t) => {
  await compareFacts(t, {
    client: { maxVersion: 'TLSv1.2' },
    check: (a) => assert.equal(a.seen[0].protocol, 'TLSv1.2'),
  });
});

test('ECDSA P-256 certificate, TLS 1.3 and TLS 1.2', T, async (t) => {
  for (const maxVersion of ['TLSv1.3', 'TLSv1.2']) {
    await compareFacts(t, {
      server: { key: certs.ecdsa.key, cert: certs.ecdsa.cert },
      client: { maxVersion },
      check: (a) => assert.equal(a.seen[0].protocol, maxVersion),
    });
  }
});

test('server minVersion TLSv1.3 refuses a TLS 1.2-only client', T, async (t) => {
  await compareFacts(t, {
    server: { minVersion: 'TLSv1.3' },
    client: { maxVersion: 'TLSv1.2' },
    check: (a) => assert.ok(a.events.some((e) => e.event === 'tlsClientError')),
  });
});

test('requestCert, rejectUnauthorized false, no client certificate', T, async (t) => {
  await compareFacts(t, {
    server: { requestCert: true, rejectUnauthorized: false, ca: certs.ca },
    check: (a) => {
      assert.equal(a.seen[0].authorized, false);
      assert.equal(typeof a.seen[0].authorizationError, 'string');
    },
  });
});

test('requestCert, rejectUnauthorized false, a client certificate the CA signed', T, async (t) => {
  await compareFacts(t, {
    server: { requestCert: true, rejectUnauthorized: false, ca: certs.ca },
    client: { key: certs.client.key, cert: certs.client.cert },
    check: (a) => {
      assert.equal(a.seen[0].authorized, true);
      assert.equal(a.seen[0].peerSubject.CN, 'fast-http test client');
    },
  });
});

test('requestCert, rejectUnauthorized false, a client certificate of an unknown CA', T, async (t) => {
  await compareFacts(t, {
    server: { requestCert: true, rejectUnauthorized: false },
    client: { key: certs.client.key, cert: certs.client.cert },
    check: (a) => {
      assert.equal(a.seen[0].authorized, false);
      assert.equal(typeof a.seen[0].authorizationError, 'string');
    },
  });
});

test('session resumption: the second connection reuses the first one\'s session', T, async (t) => {
  for (const maxVersion of ['TLSv1.3', 'TLSv1.2']) {
    const runs = await onBoth(async (impl) => {
      const seen = [];
      const srv = await startServer(impl, serverOptions(), factsHandler(seen));
      const clients = [];
      try {
        const first = await tlsExchange(srv.port, GET, { until: 1, wantSession: true, tls: { maxVersion } });
        clients.push({ ...summarize(first), secure: first.secure });
        assert.ok(first.session, `no session from ${impl === require('node:https') ? 'node:https' : 'fast-http'}`);
        const second = await tlsExchange(srv.port, GET, { until: 1, tls: { maxVersion, session: first.session } });
        clients.push({ ...summarize(second), secure: second.secure });
      } finally {
        await srv.close();
      }
      return { seen, clients };
    });
    const a = runs['node:https'];
    assert.deepEqual(a.seen.map((s) => s.reused), [false, true], `${maxVersion}: node:https did not resume`);
    assert.deepStrictEqual(runs['fast-http'].seen, a.seen, `${maxVersion}: TLS facts differ`);
    assert.deepStrictEqual(runs['fast-http'].clients, a.clients, `${maxVersion}: client results differ`);
  }
});

test('mTLS (requestCert + rejectUnauthorized): refused without a certificate, served with one', T, async (t) => {
  const server = { requestCert: true, rejectUnauthorized: true, ca: certs.ca };
  const withCert = await compareFacts(t, {
    server,
    client: { key: certs.client.key, cert: certs.client.cert },
    check: (a) => assert.equal(a.seen[0].authorized, true),
  });
  assert.match(withCert.client.wire, /ok$/);
  const without = await compareFacts(t, {
    server,
    check: (a) => {
      assert.deepEqual(a.seen, [], 'node:https served a client without a certificate');
      assert.ok(a.events.some((e) => e.event === 'tlsClientError'));
    },
  });
  assert.equal(without.client.responses, 0);
});
