'use strict';
// Client certificates checked as node's server (OpenSSL) checks them, on TLS 1.2 and 1.3:
// X.509 v1 certificates and v1 CAs (which OpenSSL takes and webpki cannot read), the
// authorizationError of each failure, rejectUnauthorized's refusal (node's 'tlsClientError'
// and 'clientError' with ECONNRESET, and what the client then sees), and
// getPeerCertificate(true)'s issuer chain completed from the server's `ca`.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const { raw } = require('../wire/helpers');
const {
  FIXTURES, certs, fastHttps, isFastHttpServer, onBoth, serverOptions, startServer, tlsExchange,
} = require('./helpers');

const T = { timeout: 60000 };
const GET = raw('GET /who HTTP/1.1', 'Host: localhost', '', '');
const pem = (name) => fs.readFileSync(path.join(FIXTURES, name));
const chainKey = pem('chain-client-key.pem');
const v1Ca = pem('v1-ca-cert.pem');
const otherCa = pem('other-ca-cert.pem');
const leaf = (name) => ({ key: chainKey, cert: pem(name) });
const v1 = { key: pem('client-v1-key.pem'), cert: pem('client-v1-cert.pem') };

function names(cert) {
  const out = [];
  const seen = new Set();
  for (let c = cert; c && c.subject && !seen.has(c); c = c.issuerCertificate) {
    seen.add(c);
    out.push(c.subject.CN);
  }
  return out;
}

function seeClient(req, res, seen) {
  seen.push({
    authorized: req.socket.authorized,
    authorizationError: req.socket.authorizationError ?? null,
    chain: names(req.socket.getPeerCertificate(true)),
    selfIssuedLast: (() => {
      let c = req.socket.getPeerCertificate(true);
      while (c.issuerCertificate && c.issuerCertificate !== c) c = c.issuerCertificate;
      return c.issuerCertificate === c;
    })(),
  });
  res.end('ok');
}

/** Runs one client against node:https and fast-http; what the app and the client saw. */
async function observe(options, client) {
  return onBoth(async (impl) => {
    const seen = [];
    const srv = await startServer(impl, serverOptions({ requestCert: true, ...options }),
      (req, res) => seeClient(req, res, seen));
    let r;
    try {
      r = await tlsExchange(srv.port, GET, { until: 1, tls: client });
      // The server's events of a refused connection come as its socket closes.
      const settle = Date.now() + 5000;
      while (r.responses === 0 && !srv.events.some((e) => e.event === 'clientError') &&
        options.rejectUnauthorized !== false && Date.now() < settle) {
        await new Promise((res) => setImmediate(res));
      }
    } finally {
      await srv.close();
    }
    return {
      events: srv.events.filter((e) => e.event !== 'close'),
      seen,
      client: {
        secureConnect: r.secure !== null,
        error: r.error && r.error.code,
        responses: r.responses,
        timedOut: r.timedOut,
      },
    };
  });
}

const CASES = [
  // [label, server options, client tls options, what node shows (a sanity check)]
  ['a v1 leaf the ca signed (sent with the ca)', { ca: certs.ca }, { ...v1 }, { authorized: true }],
  ['a v1 leaf the ca signed (sent alone)', { ca: certs.ca },
    { ...v1, ca: undefined, rejectUnauthorized: false }, { authorized: true }],
  ['a v3 leaf a v1 CA signed', { ca: v1Ca }, leaf('client-by-v1-ca-cert.pem'), { authorized: true }],
  ['a v1 leaf a v1 CA signed', { ca: v1Ca }, leaf('client-v1-by-v1-ca-cert.pem'), { authorized: true }],
  ['a v1 leaf a v1 CA signed, its CA sent too', { ca: v1Ca },
    { ...leaf('client-v1-by-v1-ca-cert.pem'), ca: [certs.ca, v1Ca] }, { authorized: true }],
  ['a v1 leaf of another CA', { ca: certs.ca }, leaf('client-v1-other-ca-cert.pem'),
    { authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }],
  ['a v1 leaf of another CA, sent with it', { ca: certs.ca },
    { ...leaf('client-v1-other-ca-cert.pem'), ca: [certs.ca, otherCa] },
    { authorizationError: 'SELF_SIGNED_CERT_IN_CHAIN' }],
  ['an expired v1 leaf', { ca: certs.ca }, leaf('client-v1-expired-cert.pem'),
    { authorizationError: 'CERT_HAS_EXPIRED' }],
  // The client's ca completes its chain: what it sends ends in the untrusted CA.
  ['a v1 leaf whose CA is not the one trusted', { ca: v1Ca }, { ...v1 },
    { authorizationError: 'SELF_SIGNED_CERT_IN_CHAIN' }],
  ['a v3 leaf of another CA', { ca: certs.ca }, leaf('client-other-ca-cert.pem'),
    { authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }],
  ['an expired v3 leaf', { ca: certs.ca }, leaf('client-expired-cert.pem'),
    { authorizationError: 'CERT_HAS_EXPIRED' }],
  ['a self-signed leaf', { ca: certs.ca },
    { key: pem('self-signed-key.pem'), cert: pem('self-signed-cert.pem') },
    { authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT' }],
  ['the v3 leaf the ca signed', { ca: certs.ca }, { ...certs.client }, { authorized: true }],
  ['no certificate', { ca: certs.ca }, {}, { authorizationError: 'UNABLE_TO_GET_ISSUER_CERT' }],
];

for (const version of ['TLSv1.2', 'TLSv1.3']) {
  for (const [label, options, client, expect] of CASES) {
    for (const rejectUnauthorized of [false, true]) {
      test(`${version}, rejectUnauthorized ${rejectUnauthorized}: ${label}`, T, async (t) => {
        assert.ok(isFastHttpServer(fastHttps().createServer(
          serverOptions({ requestCert: true, ...options, rejectUnauthorized }))), 'made node\'s server');
        const runs = await observe({ ...options, rejectUnauthorized },
          { maxVersion: version, ...client });
        const a = runs['node:https'];
        const b = runs['fast-http'];
        if (process.env.HTTPS_JUDGE_DEBUG) t.diagnostic(JSON.stringify(a));
        assert.equal(a.client.timedOut, false, 'node:https timed out: the scenario is broken');
        if (a.seen.length > 0) {
          for (const [k, v] of Object.entries(expect)) assert.equal(a.seen[0][k], v, k);
        }
        assert.deepStrictEqual(b.client, a.client, 'the client saw otherwise than node:https\'s');
        assert.deepStrictEqual(b.events, a.events, 'server events differ from node:https');
        assert.deepStrictEqual(b.seen, a.seen, 'what the handler saw differs from node:https');
      });
    }
  }
}
