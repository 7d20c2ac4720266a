'use strict';
// node's ALPNCallback ({ servername, protocols }) => protocol | undefined: what it is asked,
// the protocol both sides then have, the handshake's failure when it chooses none, a client
// without ALPN, with an SNICallback beside it, and ALPNProtocols with it refused, on node's
// https server and fast-http's (which serves it natively).
const assert = require('node:assert/strict');
const tls = require('node:tls');
const { test } = require('node:test');
const { clientOptions, httpsImpls, isFastHttpServer, serverOptions, startServer } =
  require('./helpers');

const T = { timeout: 60000 };

/**
 * Connects with `client` options: what the ALPNCallback was asked, what client and server
 * agreed on, or how the handshake failed on each side.
 */
async function scenario(impl, choose, client, extra = {}) {
  const asked = [];
  const options = serverOptions({
    ...extra,
    ALPNCallback(arg) {
      asked.push({ arg, thisIsSocket: this instanceof tls.TLSSocket });
      return choose(arg);
    },
  });
  const srv = await startServer(impl, options, (req, res) => res.end('ok'));
  try {
    const serverSide = new Promise((resolve) => {
      srv.server.once('secureConnection', (s) => resolve({ alpn: s.alpnProtocol }));
      srv.server.once('tlsClientError', (err) => resolve({ error: err.code }));
    });
    const clientSide = await new Promise((resolve) => {
      const sock = tls.connect(clientOptions(srv.port, client));
      sock.on('secureConnect', () => {
        resolve({ alpn: sock.alpnProtocol });
        sock.end();
      });
      sock.on('error', (err) => resolve({ error: err.code }));
    });
    return { asked, client: clientSide, server: await serverSide,
      native: isFastHttpServer(srv.server) };
  } finally {
    await srv.close();
  }
}

const cases = [
  ['chooses the second protocol', (a) => a.protocols[1], { ALPNProtocols: ['a', 'b', 'c'] }],
  ['chooses none: no_application_protocol', () => undefined, { ALPNProtocols: ['a', 'b'] }],
  ['a client without ALPN: not asked', () => 'x', {}],
  ['chooses a protocol not offered: ERR_TLS_ALPN_CALLBACK_INVALID_RESULT', () => 'x',
    { ALPNProtocols: ['a', 'b'] }],
  ['no servername', (a) => a.protocols[0], { ALPNProtocols: ['h2', 'http/1.1'],
    servername: '' }],
];

for (const [name, choose, client] of cases) {
  test(`ALPNCallback ${name}`, T, async () => {
    const [node, fast] = httpsImpls();
    const expected = await scenario(node.impl, choose, client);
    const actual = await scenario(fast.impl, choose, client);
    assert.equal(actual.native, true, 'fast-http serves ALPNCallback natively');
    assert.deepStrictEqual({ ...actual, native: undefined }, { ...expected, native: undefined });
  });
}

test('ALPNCallback after an SNICallback sees the servername', T, async () => {
  const [node, fast] = httpsImpls();
  const extra = { SNICallback: (servername, cb) => cb(null, null) };
  const client = { ALPNProtocols: ['a', 'b'], servername: 'example.com' };
  const expected = await scenario(node.impl, (a) => a.protocols[0], client, extra);
  const actual = await scenario(fast.impl, (a) => a.protocols[0], client, extra);
  assert.equal(actual.native, true, 'fast-http serves ALPNCallback natively');
  assert.deepStrictEqual({ ...actual, native: undefined }, { ...expected, native: undefined });
});

test('ALPNCallback with ALPNProtocols throws as node', T, () => {
  const errorOf = (impl) => {
    try {
      impl.createServer(serverOptions({ ALPNCallback: () => 'a', ALPNProtocols: ['a'] }));
    } catch (err) {
      return { code: err.code, name: err.name, message: err.message };
    }
    return null;
  };
  const [node, fast] = httpsImpls();
  const expected = errorOf(node.impl);
  assert.equal(expected.code, 'ERR_TLS_ALPN_CALLBACK_WITH_PROTOCOLS');
  assert.deepStrictEqual(errorOf(fast.impl), expected);
});
