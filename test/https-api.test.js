'use strict';
// fast-http's https server API (lib/https) against node:https on the same scenarios: requests,
// the server's classes, the TLSSocket surface of its connections, options the native TLS does
// not implement (node's own server then), and `-r fast-http/register` for node:https.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const net = require('node:net');
const tls = require('node:tls');
const http = require('node:http');
const nodeHttps = require('node:https');
const { spawn } = require('node:child_process');
const fastHttp = require('..');
const stats = require('../lib/internal/stats');
const { createError } = require('./https/helpers');

const { read, key, cert, ca } = require('./helpers/tls-fixtures');
const IMPLS = [['node:https', nodeHttps], ['fast-http', fastHttp.https]];

function listen(server) {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

function close(server) {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
}

function request(port, options = {}, body = undefined) {
  return new Promise((resolve, reject) => {
    const req = nodeHttps.request({
      host: '127.0.0.1', port, servername: 'localhost', ca, path: '/x', agent: false,
      ...options,
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `scenario(https)` on node:https then on fast-http; returns both results. */
async function both(scenario) {
  const out = {};
  for (const [name, https] of IMPLS) out[name] = await scenario(https, name);
  return out;
}

function echo(req, res) {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (d) => {
    body += d;
  });
  req.on('end', () => res.end(`${req.method} ${req.url} ${body}`));
}

test('createServer(options, handler): GET and POST', { timeout: 30000 }, async () => {
  const r = await both(async (https) => {
    const server = https.createServer({ key, cert }, echo);
    const port = await listen(server);
    const agent = new nodeHttps.Agent({ keepAlive: true, maxSockets: 1 });
    const a = await request(port, { agent });
    const b = await request(port, { agent, method: 'POST' }, 'hello');
    agent.destroy();
    await close(server);
    delete a.headers.date;
    delete b.headers.date;
    return [a, b, fastHttp.isFastHttpServer(server)];
  });
  assert.equal(r['fast-http'].pop(), true);
  assert.equal(r['node:https'].pop(), false);
  assert.deepEqual(r['fast-http'], r['node:https']);
});

test('the server\'s classes and listeners', { timeout: 10000 }, async () => {
  const r = await both(async (https) => {
    const server = new https.Server({ key, cert });
    const plain = https.Server({ key, cert });
    return {
      https: server instanceof nodeHttps.Server, tls: server instanceof tls.Server,
      net: server instanceof net.Server, http: server instanceof http.Server,
      called: plain instanceof nodeHttps.Server,
      own: server instanceof https.Server,
      secureConnection: server.listenerCount('secureConnection'),
      tlsClientError: server.listenerCount('tlsClientError'),
      request: server.listenerCount('request'),
      requestCert: server.requestCert, rejectUnauthorized: server.rejectUnauthorized,
    };
  });
  assert.deepEqual(r['fast-http'], r['node:https']);
});

/** What a request's socket says about its TLS connection. */
function socketFacts(req) {
  const s = req.socket;
  const cipher = s.getCipher();
  const own = s.getCertificate();
  return {
    encrypted: s.encrypted, connectionEncrypted: req.connection.encrypted,
    tlsSocket: s instanceof tls.TLSSocket, netSocket: s instanceof net.Socket,
    constructor: s.constructor.name, secureEstablished: s._secureEstablished,
    sharedSigalgs: typeof s.getSharedSigalgs,
    protocol: s.getProtocol(), cipher, alpn: s.alpnProtocol, servername: s.servername,
    authorized: s.authorized, authorizationError: s.authorizationError,
    peer: s.getPeerCertificate(), reused: s.isSessionReused(),
    ownSubject: own.subject, ownFingerprint: own.fingerprint256,
    ownX509: s.getX509Certificate?.()?.fingerprint256,
    peerX509: s.getPeerX509Certificate(),
  };
}

for (const [label, clientOptions] of [
  ['TLSv1.3, no ALPN', {}],
  ['TLSv1.3, ALPN http/1.1', { ALPNProtocols: ['http/1.1'] }],
  ['TLSv1.2', { maxVersion: 'TLSv1.2' }],
]) {
  test(`req.socket's TLS facts (${label})`, { timeout: 20000 }, async () => {
    const r = await both(async (https) => {
      let facts;
      const server = https.createServer({ key, cert }, (req, res) => {
        facts = socketFacts(req);
        res.end();
      });
      const port = await listen(server);
      await request(port, clientOptions);
      await close(server);
      return facts;
    });
    if (clientOptions.maxVersion === 'TLSv1.2') {
      // TLS 1.2 suites are chosen differently (OpenSSL takes the client's order, the native
      // TLS its own: AES-256 before AES-128), both AEAD ones; the shape is the same.
      for (const facts of Object.values(r)) {
        assert.match(facts.cipher.standardName, /^TLS_ECDHE_RSA_WITH_AES_\d+_GCM_SHA\d+$/);
        assert.match(facts.cipher.name, /^ECDHE-RSA-AES\d+-GCM-SHA\d+$/);
        delete facts.cipher.name;
        delete facts.cipher.standardName;
      }
    }
    assert.deepEqual(r['fast-http'], r['node:https']);
    assert.equal(r['fast-http'].encrypted, true);
  });
}

test('a client certificate: authorized, getPeerCertificate, getPeerX509Certificate',
  { timeout: 20000 }, async () => {
    const r = await both(async (https) => {
      let facts;
      const server = https.createServer({ key, cert, ca, requestCert: true }, (req, res) => {
        const s = req.socket;
        const peer = s.getPeerCertificate();
        const detailed = s.getPeerCertificate(true);
        facts = {
          authorized: s.authorized, authorizationError: s.authorizationError,
          subject: peer.subject, issuer: peer.issuer, fingerprint: peer.fingerprint256,
          raw: peer.raw.equals(s.getPeerX509Certificate().raw),
          detailedIssuer: detailed.issuerCertificate?.subject,
        };
        res.end();
      });
      const port = await listen(server);
      await request(port, { key: read('client-key.pem'), cert: read('client-cert.pem') });
      await close(server);
      return facts;
    });
    assert.deepEqual(r['fast-http'], r['node:https']);
    assert.equal(r['fast-http'].authorized, true);
  });

test('a plain HTTP client is a clientError where someone listens', { timeout: 20000 },
  async () => {
    const r = await both(async (https) => {
      const server = https.createServer({ key, cert }, echo);
      const got = new Promise((resolve) => {
        server.on('clientError', (err, socket) => {
          resolve(err.code);
          socket.destroy();
        });
      });
      const port = await listen(server);
      const sock = net.connect(port, '127.0.0.1');
      sock.on('error', () => {});
      sock.end('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      const code = await got;
      sock.destroy();
      await close(server);
      return code;
    });
    assert.deepEqual(r['fast-http'], r['node:https']);
  });

for (const [label, extra] of [
  // OpenSSL's aliases and groups the native layer cannot honour exactly.
  ['ciphers: HIGH', { ciphers: 'HIGH' }],
  ['ecdhCurve: X448', { ecdhCurve: 'X448' }],
  ['secureOptions', { secureOptions: require('node:crypto').constants.SSL_OP_NO_TICKET }],
  // TLS 1.0 / 1.1 are not in the native layer (issue #19).
  ['minVersion: TLSv1.1', { minVersion: 'TLSv1.1' }],
]) {
  test(`{ ${label} } makes node's own https server, which serves`, { timeout: 20000 },
    async () => {
      const before = { ...stats.counters };
      const server = fastHttp.https.createServer({ key, cert, ...extra }, echo);
      assert.equal(fastHttp.isFastHttpServer(server), false);
      assert.ok(server instanceof nodeHttps.Server);
      assert.equal(stats.counters.httpsServersCreated, before.httpsServersCreated + 1);
      assert.equal(stats.counters.httpsFallbackServers, before.httpsFallbackServers + 1);
      const port = await listen(server);
      const res = await request(port);
      assert.deepEqual([res.status, res.text], [200, 'GET /x ']);
      await close(server);
    });
}

// Options the native layer honours: the server stays fast-http's and serves as node's does
// (encrypted keys: test/https/passphrase.test.js; pfx: test/https/pfx.test.js).
for (const [label, extra] of [
  ['ciphers (one suite)', { ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:TLS_AES_128_GCM_SHA256' }],
  ['ecdhCurve', { ecdhCurve: 'P-256:X25519' }],
  ['honorCipherOrder: false', { honorCipherOrder: false }],
  ['sessionTimeout and ticketKeys', { sessionTimeout: 60, ticketKeys: Buffer.alloc(48, 7) }],
  ['SNICallback', { SNICallback: (name, cb) => cb(null, null) }],
]) {
  test(`{ ${label} } is served natively, as node's serves it`, { timeout: 20000 }, async () => {
    const r = await both(async (https) => {
      const server = https.createServer({ key, cert, ...extra }, echo);
      const port = await listen(server);
      const res = await request(port);
      const native = fastHttp.isFastHttpServer(server);
      await close(server);
      return { status: res.status, text: res.text, native };
    });
    assert.deepEqual(r['node:https'], { status: 200, text: 'GET /x ', native: false });
    assert.deepEqual(r['fast-http'], { status: 200, text: 'GET /x ', native: true });
  });
}

test('SNICallback chooses the certificate by server name (a SecureContext, none, an error)',
  { timeout: 20000 }, async () => {
    const ecdsa = tls.createSecureContext({
      key: read('server-ecdsa-key.pem'), cert: read('server-ecdsa-cert.pem'),
    });
    const r = await both(async (https) => {
      const seen = [];
      const server = https.createServer({
        key, cert,
        SNICallback(name, cb) {
          seen.push(name);
          // Answered later, as apps that look certificates up do.
          setImmediate(() => {
            if (name === 'bad.test') cb(new Error('no certificate for bad.test'));
            else cb(null, name === 'ecdsa.test' ? ecdsa : null);
          });
        },
      }, echo);
      const errors = [];
      server.on('tlsClientError', (err) => errors.push(err.message));
      const port = await listen(server);
      const keyType = (servername) => new Promise((resolve) => {
        const sock = tls.connect({ host: '127.0.0.1', port, servername, ca, checkServerIdentity: () => undefined });
        sock.on('secureConnect', () => {
          const type = sock.getPeerX509Certificate().publicKey.asymmetricKeyType;
          sock.end();
          resolve(type);
        });
        sock.on('error', (err) => resolve(`error ${err.code}`));
      });
      const out = {
        ecdsa: await keyType('ecdsa.test'),
        other: await keyType('localhost'),
        bad: await keyType('bad.test'),
      };
      await close(server);
      return { ...out, seen, errors };
    });
    assert.deepEqual(r['node:https'].ecdsa, 'ec');
    assert.deepEqual(r['fast-http'], r['node:https']);
  });

test('getTicketKeys / setTicketKeys', { timeout: 20000 }, async () => {
  const r = await both(async (https) => {
    const server = https.createServer({ key, cert, ticketKeys: Buffer.alloc(48, 1) });
    const first = server.getTicketKeys();
    server.setTicketKeys(Buffer.alloc(48, 2));
    const second = server.getTicketKeys().toString('hex');
    // Any ArrayBufferView of 48 bytes, as node's validateBuffer takes.
    server.setTicketKeys(new DataView(new Uint8Array(48).fill(3).buffer));
    const errors = [];
    for (const bad of ['x', Buffer.alloc(10)]) {
      try {
        server.setTicketKeys(bad);
      } catch (err) {
        errors.push(err.code);
      }
    }
    return { first: first.toString('hex'), second, third: server.getTicketKeys().toString('hex'),
      errors };
  });
  assert.deepEqual(r['fast-http'], r['node:https']);
});

test('a native https server counts in httpsServersCreated only', { timeout: 10000 }, () => {
  const before = { ...stats.counters };
  const server = new fastHttp.https.Server({ key, cert });
  assert.equal(fastHttp.isFastHttpServer(server), true);
  assert.equal(stats.counters.httpsServersCreated, before.httpsServersCreated + 1);
  assert.equal(stats.counters.httpsFallbackServers, before.httpsFallbackServers);
});

test('bad options throw node\'s errors', { timeout: 10000 }, () => {
  const options = { key: 'not a key', cert };
  assert.notEqual(createError(nodeHttps, options), null);
  assert.deepEqual(createError(fastHttp.https, options), createError(nodeHttps, options));
});

test('-r lib/register.js: require(\'https\').createServer is fast-http\'s', { timeout: 30000 },
  async () => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, [
      '-r', path.join(__dirname, '..', 'lib', 'register.js'),
      path.join(__dirname, 'fixtures', 'register-modules', 'cjs-require-https.js'),
    ], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    assert.equal(code, 0);
    assert.deepEqual(JSON.parse(out), { body: 'true', fast: true });
  });

const ecdsaKey = read('server-ecdsa-key.pem');
const ecdsaCert = read('server-ecdsa-cert.pem');

/** The fingerprint of the certificate the server showed a client asking for `servername`. */
function peerFingerprint(port, servername) {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false },
      () => {
        resolve(sock.getPeerCertificate().fingerprint256);
        sock.destroy();
      });
    sock.on('error', reject);
  });
}

test('addContext: another certificate for a servername (wildcards too)', { timeout: 20000 },
  async () => {
    const r = await both(async (https) => {
      const server = https.createServer({ key, cert }, echo);
      server.addContext('alt.test', { key: ecdsaKey, cert: ecdsaCert });
      server.addContext('*.wild.test', { key: ecdsaKey, cert: ecdsaCert });
      const port = await listen(server);
      const out = [];
      for (const name of ['localhost', 'alt.test', 'a.wild.test', 'other.test']) {
        out.push(await peerFingerprint(port, name));
      }
      let err;
      try {
        server.addContext('', { key, cert });
      } catch (e) {
        err = [e.code, e.message];
      }
      await close(server);
      return [out, err];
    });
    assert.deepEqual(r['fast-http'], r['node:https']);
    const [[main, alt, wild, other]] = r['fast-http'];
    assert.notEqual(main, alt);
    assert.deepEqual([wild, other], [alt, main]);
  });

test('setSecureContext: the next connections get the new certificate', { timeout: 20000 },
  async () => {
    const r = await both(async (https) => {
      const server = https.createServer({ key, cert }, echo);
      const port = await listen(server);
      const before = await peerFingerprint(port, 'localhost');
      server.setSecureContext({ key: ecdsaKey, cert: ecdsaCert });
      const after = await peerFingerprint(port, 'localhost');
      await close(server);
      return [before, after];
    });
    assert.deepEqual(r['fast-http'], r['node:https']);
    assert.notEqual(r['fast-http'][0], r['fast-http'][1]);
  });
