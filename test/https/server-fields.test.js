'use strict';
// The fields node's tls.Server constructor and setSecureContext set on an https server
// (ALPNProtocols as wire bytes, key / cert / ca as given, honorCipherOrder, sessionIdContext,
// ...), which code reads off the server (node's own test-https-argument-of-creating does): the
// same on fast-http's native server as on node's.
const assert = require('node:assert/strict');
const { test } = require('node:test');
const nodeHttps = require('node:https');
const { certs, fastHttps, isFastHttpServer, serverOptions } = require('./helpers');

const T = { timeout: 10000 };

// tls.Server's own fields (not _sharedCreds: node's OpenSSL context, which fast-http's TLS
// does not use).
const FIELDS = ['_contexts', 'requestCert', 'rejectUnauthorized', 'ALPNCallback', 'ALPNProtocols',
  'sessionTimeout', 'ticketKeys', 'pfx', 'key', 'passphrase', 'cert', 'clientCertEngine', 'ca',
  'minVersion', 'maxVersion', 'secureProtocol', 'crl', 'sigalgs', 'ciphers', 'ecdhCurve', 'dhparam',
  'honorCipherOrder', 'secureOptions', 'sessionIdContext', 'privateKeyIdentifier',
  'privateKeyEngine'];

function fieldsOf(server) {
  const out = {};
  for (const name of FIELDS) out[name] = [Object.hasOwn(server, name), server[name]];
  return out;
}

for (const [label, options] of [
  ['key and cert', serverOptions()],
  ['ALPNProtocols given', serverOptions({ ALPNProtocols: ['h2', 'http/1.1'] })],
  ['ALPNProtocols undefined', serverOptions({ ALPNProtocols: undefined })],
  ['mTLS, versions', serverOptions({ requestCert: true, ca: certs.ca,
    minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' })],
  ['honorCipherOrder false, ca false', serverOptions({ honorCipherOrder: false, ca: false })],
]) {
  test(`tls.Server's fields: ${label}`, T, () => {
    const fast = fastHttps().createServer(options);
    assert.ok(isFastHttpServer(fast), 'made node\'s own server');
    assert.deepStrictEqual(fieldsOf(fast), fieldsOf(nodeHttps.createServer(options)));
  });
}

test('tls.Server\'s fields: no options, a request listener alone', T, () => {
  const listener = () => {};
  for (const args of [[listener], []]) {
    const fast = fastHttps().createServer(...args);
    const node = nodeHttps.createServer(...args);
    assert.deepStrictEqual(fast.ALPNProtocols, node.ALPNProtocols);
    assert.deepStrictEqual(fast.listeners('request'), node.listeners('request'));
  }
});

test('tls.Server\'s fields after setSecureContext', T, () => {
  const fast = fastHttps().createServer(serverOptions({ ca: certs.ca }));
  const node = nodeHttps.createServer(serverOptions({ ca: certs.ca }));
  const next = { key: certs.ecdsa.key, cert: certs.ecdsa.cert };
  fast.setSecureContext(next);
  node.setSecureContext(next);
  assert.deepStrictEqual(fieldsOf(fast), fieldsOf(node));
});
