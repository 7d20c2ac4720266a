'use strict';
// The native TLS layer's options and TLSSocket facts beyond the transport (issue #19), driven
// through the addon's contract as test/tls-native.test.js does, against node's https server
// on the same scenarios. The https API on top (lib/https) is not used here.
const { test } = require('node:test');
const assert = require('node:assert');
const tls = require('node:tls');
const https = require('node:https');
const fastHttp = require('..');
const { binding } = require('../lib/internal/native');
const { kSid, kId, kTlsSession, kSniRequest } = require('../lib/internal/symbols');

const { read, key, cert, ca } = require('./helpers/tls-fixtures');

const baseSpec = {
  pairs: [[cert, key]], ca: [], requestCert: false, rejectUnauthorized: false,
  minVersion: 0x0303, maxVersion: 0x0304, alpn: [], tickets: true,
};

/**
 * A listening https server of either kind: node's with `nodeOptions`, fast-http's with the
 * TLS spec `spec` (over baseSpec). Resolves to the server; `server.ctx` is fast-http's
 * context handle.
 */
function listen(kind, { nodeOptions = {}, spec = {} } = {}, handler = ok) {
  return new Promise((resolve) => {
    if (kind === 'node') {
      const server = https.createServer({ key, cert, ...nodeOptions }, handler);
      server.listen(0, '127.0.0.1', () => resolve(server));
      return;
    }
    const server = fastHttp.createServer(handler);
    server.listen(0, '127.0.0.1', () => {
      server.ctx = binding.tlsContextCreate({ ...baseSpec, ...spec });
      binding.serverSetTls(server[kSid], server.ctx);
      resolve(server);
    });
  });
}

function ok(req, res) {
  res.end('ok');
}

function close(server) {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
}

/** A TLS client connection to `port`; resolves to the socket once it is secure. */
function connect(port, options = {}) {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca, ...options },
      () => resolve(sock));
    sock.on('error', reject);
  });
}

/** The server-side socket of the next secure connection. */
function nextSecure(server) {
  return new Promise((resolve) => server.once('secureConnection', resolve));
}

function exportKeyingMaterial(kind, socket, length, label, context) {
  if (kind === 'node') return socket.exportKeyingMaterial(length, label, context);
  return binding.tlsExportKeyingMaterial(socket[kId], length, label, context);
}

for (const kind of ['node', 'fast']) {
  for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) {
    test(`exportKeyingMaterial equals the client's (${kind}, ${maxVersion})`, { timeout: 20000 },
      async () => {
        const server = await listen(kind);
        const secure = nextSecure(server);
        const client = await connect(server.address().port, { maxVersion });
        const socket = await secure;
        const context = Buffer.from('ctx');
        const ours = [
          exportKeyingMaterial(kind, socket, 32, 'EXPORTER-test'),
          exportKeyingMaterial(kind, socket, 100, 'EXPORTER-test', context),
          exportKeyingMaterial(kind, socket, 16, 'another label'),
        ];
        const theirs = [
          client.exportKeyingMaterial(32, 'EXPORTER-test'),
          client.exportKeyingMaterial(100, 'EXPORTER-test', context),
          client.exportKeyingMaterial(16, 'another label'),
        ];
        assert.deepStrictEqual(ours.map((b) => b.length), [32, 100, 16]);
        assert.deepStrictEqual(ours, theirs);
        assert.notDeepStrictEqual(ours[0], ours[1].subarray(0, 32));
        client.destroy();
        await close(server);
      });
  }
}

test('tlsExportKeyingMaterial throws for a plain connection', { timeout: 20000 }, async () => {
  const server = fastHttp.createServer((req, res) => {
    assert.throws(() => binding.tlsExportKeyingMaterial(req.socket[kId], 16, 'x'),
      { code: 'ERR_FAST_HTTP_TLS', message: 'not a TLS connection' });
    res.end('ok');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const res = await fetch(`http://127.0.0.1:${server.address().port}/`);
  assert.strictEqual(await res.text(), 'ok');
  await close(server);
});

test('stats() counts TLS handshakes (appended after the existing fields)', { timeout: 20000 },
  async () => {
    const before = binding.stats();
    assert.strictEqual(before.length, 5);
    const server = await listen('fast');
    const secure = nextSecure(server);
    const client = await connect(server.address().port);
    await secure;
    const after = binding.stats();
    assert.strictEqual(after[3] - before[3], 1);
    assert.strictEqual(after[1] - before[1], 1);
    client.destroy();
    await close(server);
  });

/** Lets the server's 'keylog' listener hear new connections (the JS side's flag). */
function enableKeylog(kind, server) {
  if (kind === 'fast') {
    const { S_HAS_KEYLOG } = binding.flags;
    binding.serverFlags(server[kSid], S_HAS_KEYLOG, S_HAS_KEYLOG);
  }
}

for (const kind of ['node', 'fast']) {
  for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) {
    test(`'keylog' lines (${kind}, ${maxVersion})`, { timeout: 20000 }, async () => {
      const server = await listen(kind);
      const lines = [];
      server.on('keylog', (line, socket) => {
        assert.ok(Buffer.isBuffer(line));
        lines.push([line.toString('latin1'), socket]);
      });
      enableKeylog(kind, server);
      // The lines come before 'secureConnection', as OpenSSL's callback runs in the handshake.
      const secure = nextSecure(server).then((socket) => [socket, lines.length]);
      const client = await connect(server.address().port, { maxVersion });
      const [socket, before] = await secure;
      assert.strictEqual(before, lines.length);
      for (const [line, s] of lines) {
        assert.match(line, /^[A-Z_0-9]+ [0-9a-f]{64} [0-9a-f]+\n$/);
        assert.strictEqual(s, socket);
      }
      const labels = lines.map(([line]) => line.split(' ')[0]).sort();
      assert.deepStrictEqual(labels, maxVersion === 'TLSv1.3'
        ? ['CLIENT_HANDSHAKE_TRAFFIC_SECRET', 'CLIENT_TRAFFIC_SECRET_0', 'EXPORTER_SECRET',
          'SERVER_HANDSHAKE_TRAFFIC_SECRET', 'SERVER_TRAFFIC_SECRET_0']
        : ['CLIENT_RANDOM']);
      // The client random is the connection's: one for all lines.
      assert.strictEqual(new Set(lines.map(([line]) => line.split(' ')[1])).size, 1);
      client.destroy();
      await close(server);
    });
  }

  test(`no 'keylog' listener, no lines (${kind})`, { timeout: 20000 }, async () => {
    const server = await listen(kind);
    const secure = nextSecure(server);
    const client = await connect(server.address().port);
    await secure;
    // A listener added after the handshake hears nothing of it.
    let heard = 0;
    server.on('keylog', () => { heard++; });
    client.destroy();
    await close(server);
    assert.strictEqual(heard, 0);
  });
}

const { toSuites, toGroups } = require('../lib/internal/tls-ciphers');
const { X509Certificate, constants: { SSL_OP_NO_TICKET } } = require('node:crypto');

/** A server of `kind` with node's `ciphers` / `honorCipherOrder` / `ecdhCurve` options. */
function listenWith(kind, options) {
  const spec = {};
  if (options.ciphers !== undefined) spec.ciphers = toSuites(options.ciphers);
  if (options.honorCipherOrder !== undefined) spec.honorCipherOrder = options.honorCipherOrder;
  // As lib/https/options.js: node's default groups too (the hybrid post-quantum one first
  // where node's OpenSSL has it).
  const groups = toGroups(options.ecdhCurve);
  if (groups.length) spec.groups = groups;
  return listen(kind, { nodeOptions: options, spec });
}

/** What the client sees of the negotiation, or the server's tlsClientError code. */
async function negotiate(server, clientOptions) {
  const failed = new Promise((resolve) => {
    server.once('tlsClientError', (err) => resolve({ serverError: err.code }));
  });
  const { group, ...options } = clientOptions;
  const connected = connect(server.address().port, options).then((client) => {
    const seen = { protocol: client.getProtocol(), cipher: client.getCipher().name };
    if (group) seen.group = client.getEphemeralKeyInfo().name;
    client.destroy();
    return seen;
  }, () => failed);
  return Promise.race([connected, failed]);
}

// OpenSSL 3.5 (Node 22.20+, 24, 26) offers and prefers the hybrid post-quantum group; Node 22's
// getEphemeralKeyInfo() names no TLS group (it gives {}), 24's does.
const PQ = toGroups('X25519MLKEM768') !== null;
const PQ_SEEN = Number(process.versions.node.split('.')[0]) >= 24 ? 'X25519MLKEM768' : undefined;
const TWO_12 = 'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256';
const cipherCases = [
  ['the default list, in its order', {}, { maxVersion: 'TLSv1.2' },
    { protocol: 'TLSv1.2', cipher: 'ECDHE-RSA-AES128-GCM-SHA256' }],
  ['the default list; the client order with honorCipherOrder false',
    { honorCipherOrder: false }, { maxVersion: 'TLSv1.2', ciphers: TWO_12 },
    { protocol: 'TLSv1.2', cipher: 'ECDHE-RSA-AES256-GCM-SHA384' }],
  ['a TLSv1.2 list: the server order by default', { ciphers: TWO_12 },
    { maxVersion: 'TLSv1.2' }, { protocol: 'TLSv1.2', cipher: 'ECDHE-RSA-AES256-GCM-SHA384' }],
  ['a TLSv1.2 list: the client order with honorCipherOrder false',
    { ciphers: TWO_12, honorCipherOrder: false }, { maxVersion: 'TLSv1.2' },
    { protocol: 'TLSv1.2', cipher: 'ECDHE-RSA-AES128-GCM-SHA256' }],
  ['a TLSv1.2 list keeps the default TLSv1.3 suites', { ciphers: TWO_12 }, {},
    { protocol: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' }],
  ['a TLSv1.2 list keeps the default TLSv1.3 suites, in their order',
    { ciphers: TWO_12, honorCipherOrder: true },
    { ciphers: 'TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256' },
    { protocol: 'TLSv1.3', cipher: 'TLS_CHACHA20_POLY1305_SHA256' }],
  ['honorCipherOrder over TLSv1.3 suites',
    { ciphers: 'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384', honorCipherOrder: true }, {},
    { protocol: 'TLSv1.3', cipher: 'TLS_AES_128_GCM_SHA256' }],
  ['a client restricted to one TLSv1.2 suite gets it', {},
    { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-CHACHA20-POLY1305' },
    { protocol: 'TLSv1.2', cipher: 'ECDHE-RSA-CHACHA20-POLY1305' }],
  ['a client restricted to one TLSv1.3 suite gets it', {},
    { ciphers: 'TLS_AES_128_GCM_SHA256' }, { protocol: 'TLSv1.3', cipher: 'TLS_AES_128_GCM_SHA256' }],
  ['a TLSv1.3-only list', { ciphers: 'TLS_CHACHA20_POLY1305_SHA256' }, {},
    { protocol: 'TLSv1.3', cipher: 'TLS_CHACHA20_POLY1305_SHA256' }],
  ['a TLSv1.3-only list refuses a TLSv1.2 client', { ciphers: 'TLS_CHACHA20_POLY1305_SHA256' },
    { maxVersion: 'TLSv1.2' }, { serverError: 'ERR_SSL_UNSUPPORTED_PROTOCOL' }],
  ['no shared cipher', { ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' },
    { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES256-GCM-SHA384' },
    { serverError: 'ERR_SSL_NO_SHARED_CIPHER' }],
  ['ecdhCurve P-384', { ecdhCurve: 'P-384' }, { group: true },
    { protocol: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384', group: 'secp384r1' }],
  ['ecdhCurve P-256 over TLSv1.2', { ecdhCurve: 'prime256v1' },
    { maxVersion: 'TLSv1.2', group: true },
    { protocol: 'TLSv1.2', cipher: 'ECDHE-RSA-AES128-GCM-SHA256', group: 'prime256v1' }],
  ['no shared group', { ecdhCurve: 'P-384' }, { ecdhCurve: 'X25519' },
    { serverError: 'ERR_SSL_NO_SUITABLE_KEY_SHARE' }],
  ['the default groups', {}, { group: true },
    { protocol: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384', group: PQ ? PQ_SEEN : 'X25519' }],
  ['the default groups over TLSv1.2', {}, { maxVersion: 'TLSv1.2', group: true },
    { protocol: 'TLSv1.2', cipher: 'ECDHE-RSA-AES128-GCM-SHA256', group: 'X25519' }],
  ...(PQ ? [
    ['a client that offers X25519MLKEM768 only', {}, { ecdhCurve: 'X25519MLKEM768', group: true },
      { protocol: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384', group: PQ_SEEN }],
    ['ecdhCurve X25519MLKEM768 and a client without it', { ecdhCurve: 'X25519MLKEM768' },
      { ecdhCurve: 'X25519:P-256' }, { serverError: 'ERR_SSL_NO_SUITABLE_KEY_SHARE' }],
  ] : []),
];

for (const kind of ['node', 'fast']) {
  for (const [name, options, clientOptions, expected] of cipherCases) {
    test(`ciphers: ${name} (${kind})`, { timeout: 20000 }, async () => {
      const server = await listenWith(kind, options);
      assert.deepStrictEqual(await negotiate(server, clientOptions), expected);
      await close(server);
    });
  }
}

/** A connection's first TLS session (node emits 'session' for TLSv1.2 and TLSv1.3). */
async function firstSession(port, options) {
  const client = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca, ...options });
  const session = await new Promise((resolve, reject) => {
    client.once('session', resolve);
    client.once('error', reject);
  });
  client.destroy();
  return session;
}

/** Connects with `session`: whether client and server say it was resumed. */
async function resumed(kind, server, options, session) {
  const secure = nextSecure(server);
  const client = await connect(server.address().port, { ...options, session });
  const socket = await secure;
  const serverSays = kind === 'node'
    ? socket.isSessionReused()
    : socket[kTlsSession].resumed;
  const clientSays = client.isSessionReused();
  client.destroy();
  return [clientSays, serverSays];
}

for (const kind of ['node', 'fast']) {
  for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) {
    for (const tickets of [true, false]) {
      const what = tickets ? 'a ticket' : 'no ticket';
      test(`resumption with ${what} (${kind}, ${maxVersion})`, { timeout: 20000 }, async () => {
        const nodeOptions = tickets ? {} : { secureOptions: SSL_OP_NO_TICKET };
        const server = await listen(kind, { nodeOptions, spec: { tickets } });
        const { port } = server.address();
        const session = await firstSession(port, { maxVersion });
        // node's contexts keep no session cache: without tickets nothing resumes (unless the
        // app keeps sessions with 'newSession' / 'resumeSession').
        assert.deepStrictEqual(await resumed(kind, server, { maxVersion }, session),
          [tickets, tickets]);
        // A client without the session does a full handshake.
        assert.deepStrictEqual(await resumed(kind, server, { maxVersion }, undefined),
          [false, false]);
        await close(server);
      });
    }
  }

  test(`ticketKeys: servers with the same keys take each other's tickets (${kind})`,
    { timeout: 20000 }, async () => {
      const ticketKeys = Buffer.alloc(48, 7);
      const other = Buffer.alloc(48, 9);
      const a = await listen(kind, { nodeOptions: { ticketKeys }, spec: { ticketKeys } });
      const b = await listen(kind, { nodeOptions: { ticketKeys }, spec: { ticketKeys } });
      const c = await listen(kind, { nodeOptions: { ticketKeys: other },
        spec: { ticketKeys: other } });
      const getKeys = (s) => (kind === 'node' ? s.getTicketKeys()
        : binding.tlsGetTicketKeys(s.ctx));
      assert.deepStrictEqual(getKeys(a), ticketKeys);
      for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) {
        const session = await firstSession(a.address().port, { maxVersion });
        assert.deepStrictEqual(await resumed(kind, b, { maxVersion }, session), [true, true]);
        assert.deepStrictEqual(await resumed(kind, c, { maxVersion }, session), [false, false]);
      }
      // setTicketKeys: the new keys seal and open tickets, the old ones' tickets are refused.
      const session = await firstSession(a.address().port, { maxVersion: 'TLSv1.2' });
      if (kind === 'node') b.setTicketKeys(other);
      else binding.tlsSetTicketKeys(b.ctx, other);
      assert.deepStrictEqual(getKeys(b), other);
      assert.deepStrictEqual(await resumed(kind, b, { maxVersion: 'TLSv1.2' }, session),
        [false, false]);
      const fromC = await firstSession(c.address().port, { maxVersion: 'TLSv1.2' });
      assert.deepStrictEqual(await resumed(kind, b, { maxVersion: 'TLSv1.2' }, fromC),
        [true, true]);
      await Promise.all([a, b, c].map(close));
    });

  test(`without ticketKeys, each server has keys of its own (${kind})`, { timeout: 20000 },
    async () => {
      const a = await listen(kind);
      const b = await listen(kind);
      const getKeys = (s) => (kind === 'node' ? s.getTicketKeys()
        : binding.tlsGetTicketKeys(s.ctx));
      assert.strictEqual(getKeys(a).length, 48);
      assert.notDeepStrictEqual(getKeys(a), getKeys(b));
      const session = await firstSession(a.address().port, { maxVersion: 'TLSv1.2' });
      assert.deepStrictEqual(await resumed(kind, b, { maxVersion: 'TLSv1.2' }, session),
        [false, false]);
      await Promise.all([a, b].map(close));
    });

  test(`sessionTimeout: an older session is not resumed (${kind})`, { timeout: 20000 },
    async () => {
      const server = await listen(kind, { nodeOptions: { sessionTimeout: 1 },
        spec: { sessionTimeout: 1 } });
      const { port } = server.address();
      const session = await firstSession(port, { maxVersion: 'TLSv1.2' });
      assert.deepStrictEqual(await resumed(kind, server, { maxVersion: 'TLSv1.2' }, session),
        [true, true]);
      // Waiting longer than the timeout can only make the session older.
      await new Promise((resolve) => setTimeout(resolve, 2100));
      assert.deepStrictEqual(await resumed(kind, server, { maxVersion: 'TLSv1.2' }, session),
        [false, false]);
      await close(server);
    });
}

/** Upgrade / CONNECT over TLS: after the hand-off raw bytes flow both ways, encrypted. */
for (const kind of ['node', 'fast']) {
  for (const method of ['GET', 'CONNECT']) {
    test(`${method === 'GET' ? 'Upgrade' : 'CONNECT'} over TLS (${kind})`, { timeout: 20000 },
      async () => {
        const server = await listen(kind);
        const onSocket = (req, socket, head) => {
          socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n' +
            'Upgrade: echo\r\n\r\n');
          if (head.length > 0) socket.write(head);
          socket.on('data', (d) => socket.write(`<${d}>`));
          socket.on('end', () => socket.end('bye'));
        };
        server.on('upgrade', onSocket);
        server.on('connect', onSocket);
        const client = await connect(server.address().port);
        const target = method === 'GET' ? '/chat' : 'example.com:443';
        const extra = method === 'GET' ? 'Connection: Upgrade\r\nUpgrade: echo\r\n' : '';
        client.write(`${method} ${target} HTTP/1.1\r\nHost: x\r\n${extra}\r\nfirst`);
        let text = '';
        client.setEncoding('utf8');
        await new Promise((resolve) => {
          client.on('data', (d) => {
            text += d;
            if (text.endsWith('first') || text.endsWith('<first>')) {
              client.end('second');
            }
          });
          client.on('end', resolve);
        });
        const body = text.slice(text.indexOf('\r\n\r\n') + 4);
        assert.match(text, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
        assert.match(body, /^(first|<first>)<second>bye$/);
        client.destroy();
        await close(server);
      });
  }
}

const otherCert = read('server-ecdsa-cert.pem');
const otherKey = read('server-ecdsa-key.pem');

/**
 * A server with an SNICallback answering after a turn of the event loop: 'a.test' gets the
 * other certificate, 'bad.test' an error, any other name the server's own. fast-http's
 * https layer is played here: kSniRequest, tlsSniAnswer, and 'tlsClientError' with the
 * callback's error as node's loadSNI gives it.
 */
async function listenSni(kind) {
  function SNICallback(name, cb) {
    setImmediate(() => {
      if (name === 'a.test') cb(null, 'other');
      else if (name === 'bad.test') cb(new Error('no context for bad.test'));
      else cb(null, undefined);
    });
  }
  if (kind === 'node') {
    const other = tls.createSecureContext({ key: otherKey, cert: otherCert });
    return listen('node', { nodeOptions: {
      SNICallback: (name, cb) => SNICallback(name, (err, ctx) => cb(err, ctx && other)),
    } });
  }
  const server = await listen('fast');
  const other = binding.tlsContextCreate({ ...baseSpec, pairs: [[otherCert, otherKey]] });
  const { S_SNI_CALLBACK } = binding.flags;
  binding.serverFlags(server[kSid], S_SNI_CALLBACK, S_SNI_CALLBACK);
  server[kSniRequest] = (socket, name) => SNICallback(name, (err, ctx) => {
    if (err) {
      server.emit('tlsClientError', err, socket);
      binding.tlsSniAnswer(socket[kId], -1, -1);
    } else {
      binding.tlsSniAnswer(socket[kId], ctx ? other : 0, -1);
    }
  });
  return server;
}

/** The fingerprint of the certificate the server showed for `servername`, or the error. */
function certFor(port, servername) {
  return new Promise((resolve) => {
    const client = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false },
      () => {
        const fp = client.getPeerCertificate().fingerprint256;
        client.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        let text = '';
        client.on('data', (d) => { text += d; });
        client.on('end', () => resolve([fp, text.split('\r\n')[0]]));
      });
    client.on('error', (err) => resolve([err.code]));
  });
}

for (const kind of ['node', 'fast']) {
  test(`SNICallback answering later (${kind})`, { timeout: 20000 }, async () => {
    const server = await listenSni(kind);
    const errors = [];
    server.on('tlsClientError', (err) => errors.push(err.message));
    const { port } = server.address();
    const fingerprint = (pem) => new X509Certificate(pem).fingerprint256;
    assert.deepStrictEqual(await certFor(port, 'a.test'),
      [fingerprint(otherCert), 'HTTP/1.1 200 OK']);
    assert.deepStrictEqual(await certFor(port, 'localhost'),
      [fingerprint(cert), 'HTTP/1.1 200 OK']);
    assert.deepStrictEqual(await certFor(port, 'bad.test'), ['ECONNRESET']);
    assert.deepStrictEqual(errors, ['no context for bad.test']);
    // Without a name (an IP address is not sent) there is no callback: the server's own.
    assert.deepStrictEqual(await certFor(port, undefined), [fingerprint(cert), 'HTTP/1.1 200 OK']);
    await close(server);
  });
}
