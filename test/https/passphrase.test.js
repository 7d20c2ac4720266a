'use strict';
// An encrypted private key with its passphrase (options.passphrase, or { pem, passphrase } in
// options.key): node's server opens it; fast-http's native server serves with it the same.
const assert = require('node:assert/strict');
const { createPrivateKey } = require('node:crypto');
const { test } = require('node:test');
const nodeHttps = require('node:https');
const { raw } = require('../wire/helpers');
const {
  certs, compareHttps, createError, fastHttps, isFastHttpServer,
} = require('./helpers');

const T = { timeout: 30000 };
const GET = raw('GET /k HTTP/1.1', 'Host: localhost', '', '');
const encrypted = createPrivateKey(certs.rsa.key).export({
  type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'sesame',
});

for (const [label, options] of [
  ['options.passphrase', { key: encrypted, passphrase: 'sesame', cert: certs.rsa.cert }],
  ['{ pem, passphrase } key', { key: [{ pem: encrypted, passphrase: 'sesame' }], cert: certs.rsa.cert }],
]) {
  test(`an encrypted key with ${label}: native, served as node's`, T, async (t) => {
    assert.ok(isFastHttpServer(fastHttps().createServer(options)), 'made node\'s own server');
    await compareHttps(t, {
      serverOptions: options,
      handler: (req, res, seen) => {
        seen.push(req.socket.getCertificate()?.subject?.CN);
        res.end('opened');
      },
      request: GET,
      until: 1,
    });
  });
}

test('an encrypted key with a wrong passphrase throws node\'s error', T, () => {
  const options = { key: encrypted, passphrase: 'wrong', cert: certs.rsa.cert };
  const expected = createError(nodeHttps, options);
  assert.notEqual(expected, null);
  assert.deepStrictEqual(createError(fastHttps(), options), expected);
});
