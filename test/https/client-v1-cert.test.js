'use strict';
// A client certificate in X.509 v1 (no extensions; some of node's test clients have one):
// OpenSSL takes it in the handshake when its key made the signature, and the native server
// does too (webpki cannot read such a certificate), with node's authorizationError.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const { raw } = require('../wire/helpers');
const { FIXTURES, certs, compareHttps, fastHttps, isFastHttpServer } = require('./helpers');

const T = { timeout: 30000 };
const GET = raw('GET /v1 HTTP/1.1', 'Host: localhost', '', '');
const v1 = {
  key: fs.readFileSync(path.join(FIXTURES, 'client-v1-key.pem')),
  cert: fs.readFileSync(path.join(FIXTURES, 'client-v1-cert.pem')),
};

function seeClient(req, res, seen) {
  seen.push({
    authorized: req.socket.authorized,
    authorizationError: req.socket.authorizationError ?? null,
    peer: req.socket.getPeerCertificate()?.subject?.CN ?? null,
  });
  res.end('v1');
}

for (const [label, client] of [
  ['with its CA in the chain', v1],
  // Without a ca the client sends its certificate alone.
  ['alone', { ...v1, ca: undefined, rejectUnauthorized: false }],
]) {
  test(`requestCert without ca: a v1 client certificate ${label} is taken as node does`, T, async (t) => {
    const options = { requestCert: true, rejectUnauthorized: false };
    assert.ok(isFastHttpServer(fastHttps().createServer({ ...certs.rsa, ...options })),
      'made node\'s own server');
    await compareHttps(t, {
      serverOptions: options, handler: seeClient, request: GET, until: 1, tls: client,
      check: (a) => assert.equal(a.seen[0].peer, 'fast-http v1 client'),
    });
  });
}
