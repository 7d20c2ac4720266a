'use strict';
// node's `pfx` (PKCS#12: key, certificate and the archive's other certificates, opened with
// a passphrase): node's server loads it; fast-http's native server serves with it the same,
// sends the archive's other certificates in its chain and, as OpenSSL, trusts them for
// client certificates. A server asking for client certificates without a `ca` checks them
// against node's default CAs (plus the archive's), natively too.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const tls = require('node:tls');
const { test } = require('node:test');
const nodeHttps = require('node:https');
const { raw } = require('../wire/helpers');
const {
  FIXTURES, certs, compareHttps, createError, fastHttps, isFastHttpServer, onBoth, startServer,
} = require('./helpers');

const T = { timeout: 30000 };
const GET = raw('GET /p HTTP/1.1', 'Host: localhost', '', '');
// server-rsa-key.pem + server-rsa-cert.pem + ca-cert.pem, passphrase 'sample' (README.md).
const PFX = fs.readFileSync(path.join(FIXTURES, 'server-rsa.pfx'));
const selfSigned = {
  key: fs.readFileSync(path.join(FIXTURES, 'self-signed-key.pem')),
  cert: fs.readFileSync(path.join(FIXTURES, 'self-signed-cert.pem')),
};
// compareHttps's server options start from key / cert: a pfx server has neither.
const NO_PAIR = { key: undefined, cert: undefined };

function seeClient(req, res, seen) {
  seen.push({
    cn: req.socket.getCertificate()?.subject?.CN,
    authorized: req.socket.authorized,
    authorizationError: req.socket.authorizationError ?? null,
    peer: req.socket.getPeerCertificate()?.subject?.CN ?? null,
  });
  res.end('pfx');
}

for (const [label, options] of [
  ['pfx with options.passphrase', { pfx: PFX, passphrase: 'sample' }],
  ['[{ buf, passphrase }]', { pfx: [{ buf: PFX, passphrase: 'sample' }] }],
  ['[{ buf }] with options.passphrase', { pfx: [{ buf: PFX }], passphrase: 'sample' }],
]) {
  test(`${label}: native, served as node's`, T, async (t) => {
    const full = { ...NO_PAIR, ...options };
    assert.ok(isFastHttpServer(fastHttps().createServer(full)), 'made node\'s own server');
    await compareHttps(t, { serverOptions: full, handler: seeClient, request: GET, until: 1 });
  });
}

test('the archive\'s other certificates follow its certificate on the wire', T, async () => {
  const runs = await onBoth(async (impl) => {
    const srv = await startServer(impl, { pfx: PFX, passphrase: 'sample' }, (req, res) => res.end());
    try {
      // No ca: what the client knows of the issuer is what the server sent.
      const socket = tls.connect({ host: '127.0.0.1', port: srv.port, rejectUnauthorized: false });
      await new Promise((resolve, reject) => {
        socket.once('secureConnect', resolve);
        socket.once('error', reject);
      });
      const peer = socket.getPeerCertificate(true);
      socket.destroy();
      return { subject: peer.subject.CN, issuer: peer.issuerCertificate?.subject?.CN ?? null };
    } finally {
      await srv.close();
    }
  });
  assert.equal(runs['node:https'].issuer, 'fast-http test CA');
  assert.deepStrictEqual(runs['fast-http'], runs['node:https']);
});

for (const [label, client] of [
  ['a client of the archive\'s CA', certs.client],
  ['a self-signed client', selfSigned],
  ['a client without a certificate', {}],
]) {
  test(`requestCert without ca, pfx: ${label} is judged as node does`, T, async (t) => {
    const full = { ...NO_PAIR, pfx: PFX, passphrase: 'sample', requestCert: true, rejectUnauthorized: false };
    assert.ok(isFastHttpServer(fastHttps().createServer(full)), 'made node\'s own server');
    await compareHttps(t, { serverOptions: full, handler: seeClient, request: GET, until: 1, tls: client });
  });
}

test('requestCert with a ca: the archive\'s other certificates are trusted too', T, async (t) => {
  // The ca alone does not know the client's CA; the archive carries it.
  const full = {
    ...NO_PAIR, pfx: PFX, passphrase: 'sample', ca: selfSigned.cert, requestCert: true,
    rejectUnauthorized: true,
  };
  assert.ok(isFastHttpServer(fastHttps().createServer(full)), 'made node\'s own server');
  await compareHttps(t, {
    serverOptions: full, handler: seeClient, request: GET, until: 1, tls: certs.client,
    check: (a) => assert.equal(a.seen[0]?.authorized, true),
  });
});

test('requestCert without ca: node\'s default CAs judge a client, natively', T, async (t) => {
  const full = { requestCert: true, rejectUnauthorized: false };
  assert.ok(isFastHttpServer(fastHttps().createServer({ ...certs.rsa, ...full })), 'made node\'s own server');
  await compareHttps(t, { serverOptions: full, handler: seeClient, request: GET, until: 1, tls: certs.client });
});

test('pfx with a wrong passphrase throws node\'s error', T, () => {
  for (const options of [
    { pfx: PFX, passphrase: 'wrong' },
    { pfx: PFX },
    { pfx: [{ buf: PFX, passphrase: 'wrong' }], passphrase: 'sample' },
  ]) {
    const expected = createError(nodeHttps, options);
    assert.notEqual(expected, null);
    assert.deepStrictEqual(createError(fastHttps(), options), expected);
  }
});
