'use strict';
// `req.socket.renegotiate()` on an https server. TLS 1.3 has no renegotiation: node returns
// false and the callback gets OpenSSL's 'wrong ssl version' on the next tick. rustls does not
// renegotiate TLS 1.2 either, so fast-http answers as node's server does with
// SSL_OP_NO_RENEGOTIATION ('no renegotiation'). fast-http threw "Cannot read properties of
// undefined (reading 'isServer')" out of the handler. A client that renegotiates is refused
// (README: node's server renegotiates up to tls.CLIENT_RENEG_LIMIT times).
const assert = require('node:assert/strict');
const { constants: { SSL_OP_NO_RENEGOTIATION } } = require('node:crypto');
const { test } = require('node:test');
const nodeHttps = require('node:https');
const { certs, fastHttps } = require('./helpers');

const T = { timeout: 30000 };

/** What a handler sees of renegotiate(args) on a `maxVersion` connection. */
async function renegotiateIn(impl, serverOptions, maxVersion, args) {
  const seen = [];
  const server = impl.createServer({ ...certs.rsa, ...serverOptions }, (req, res) => {
    let returned;
    try {
      returned = req.socket.renegotiate(...args.map((a) => (a === 'cb' ? (err) => {
        seen.push({ callback: err && { code: err.code, message: err.message,
          library: err.library, reason: err.reason, keys: Object.keys(err).join() } });
        res.end();
      } : a)));
    } catch (err) {
      seen.push({ threw: err.code ?? err.message });
      res.end();
      return;
    }
    seen.push({ returned, sync: seen.length === 0 });
    if (!args.includes('cb')) res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await new Promise((resolve, reject) => {
    nodeHttps.get({ port: server.address().port, host: '127.0.0.1', rejectUnauthorized: false,
      maxVersion }, (res) => {
      res.resume();
      res.on('end', resolve);
    }).on('error', reject);
  });
  await new Promise((resolve) => server.close(resolve));
  return seen;
}

test('renegotiate() over TLS 1.3: false, then the callback with wrong ssl version', T,
  async () => {
    const node = await renegotiateIn(nodeHttps, {}, 'TLSv1.3', [{}, 'cb']);
    assert.equal(node[1].callback.code, 'ERR_SSL_WRONG_SSL_VERSION');
    assert.deepEqual(await renegotiateIn(fastHttps(), {}, 'TLSv1.3', [{}, 'cb']), node);
  });

test('renegotiate() over TLS 1.2: as node\'s server that does not renegotiate', T, async () => {
  const node = await renegotiateIn(nodeHttps, { secureOptions: SSL_OP_NO_RENEGOTIATION },
    'TLSv1.2', [{ rejectUnauthorized: false }, 'cb']);
  assert.equal(node[1].callback.code, 'ERR_SSL_NO_RENEGOTIATION');
  assert.deepEqual(await renegotiateIn(fastHttps(), {}, 'TLSv1.2',
    [{ rejectUnauthorized: false }, 'cb']), node);
});

test('renegotiate() checks its arguments as node\'s', T, async () => {
  for (const args of [[null, 'cb'], [{}, 42], [{}]]) {
    const node = await renegotiateIn(nodeHttps, {}, 'TLSv1.3', args);
    assert.deepEqual(await renegotiateIn(fastHttps(), {}, 'TLSv1.3', args), node, String(args));
  }
});
