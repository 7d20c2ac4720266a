'use strict';
// The server name a client sends (RFC 6066 section 3), as node's https serves it: OpenSSL
// takes any name, so node serves names that are not DNS names (last label all digits as
// `sni.0`, a label over 63 bytes, a space), gives `servername` as sent (case kept, an IP
// literal too), hands SNICallback that name, and matches addContext's names case-sensitively
// on Node 20 and case-insensitively from Node 22. fast-http (rustls) refused the first with an
// illegal_parameter alert, lowercased names and made an IP literal `false`.
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const net = require('node:net');
const tls = require('node:tls');
const { test } = require('node:test');
const { certs, sameOnBoth: same } = require('./helpers');

const T = { timeout: 60000 };

const fingerprint = (pem) => new crypto.X509Certificate(pem).fingerprint256;
const CERT = { [fingerprint(certs.rsa.cert)]: 'rsa', [fingerprint(certs.ecdsa.cert)]: 'ecdsa' };

/**
 * One request over TLS to a server of `impl` made with `options` (and `setup`), the client
 * sending `servername`: what the server's events, the request's socket and the client saw.
 */
async function serve(impl, servername, { options = {}, setup, tlsOptions = {} } = {}) {
  const seen = [];
  const own = typeof options === 'function' ? options(seen) : options;
  const server = impl.createServer({ ...certs.rsa, ...own }, (req, res) => {
    seen.push(`request servername=${JSON.stringify(req.socket.servername)} ` +
      `encrypted=${req.socket.encrypted}`);
    res.end('ok');
  });
  setup?.(server, seen);
  server.on('secureConnection', (socket) => {
    seen.push(`secureConnection servername=${JSON.stringify(socket.servername)}`);
  });
  server.on('tlsClientError', (err) => seen.push(`tlsClientError ${err.code}`));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = await new Promise((resolve) => {
    const out = { events: [] };
    const ip = net.isIP(servername) !== 0;
    const socket = tls.connect({
      host: '127.0.0.1',
      port: server.address().port,
      // Node 26's tls.connect refuses an IP literal as servername (RFC 6066 section 3), and
      // 20-24 warn: the name is set on the socket before its ClientHello goes instead.
      servername: ip ? undefined : servername,
      rejectUnauthorized: false,
      ...tlsOptions,
    }, () => {
      out.events.push('secureConnect');
      out.cert = CERT[socket.getPeerCertificate().fingerprint256] ?? 'other';
      socket.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    if (ip) socket.setServername(servername);
    let body = '';
    socket.setEncoding('latin1');
    socket.on('data', (d) => { body += d; });
    socket.on('error', (err) => out.events.push(`error ${err.code}`));
    socket.on('close', () => {
      out.response = body.split('\r\n')[0] + (body.endsWith('\r\n\r\nok') ? ' ok' : '');
      resolve(out);
    });
  });
  await new Promise((resolve) => server.close(resolve));
  return { server: seen, client };
}


for (const [name, servername] of [
  ['a last label of digits', 'sni.0'],
  ['a name of digits after a dot', 'a.123'],
  ['a label over 63 bytes', `${'x'.repeat(64)}.example.com`],
  ['a space', 'with space.example'],
  ['an underscore and capitals', 'My_Host.Example.COM'],
  ['an IP literal', '127.0.0.1'],
]) {
  test(`a ClientHello naming ${name} is served with its servername as sent`, T, async () => {
    const node = await same((impl) => serve(impl, servername));
    // The case would be a judge of nothing if node refused it, or the name never went.
    assert.equal(node.client.response, 'HTTP/1.1 200 OK ok');
    assert.ok(node.server.includes(`request servername=${JSON.stringify(servername)} ` +
      'encrypted=true'), node.server.join('\n'));
  });

  test(`SNICallback gets ${name} as sent`, T, async () => {
    await same((impl) => serve(impl, servername, {
      options: (seen) => ({
        SNICallback(name, cb) {
          seen.push(`SNICallback ${JSON.stringify(name)}`);
          cb(null, tls.createSecureContext(certs.ecdsa));
        },
      }),
    }));
  });
}

test('SNICallback is told the name as sent', T, async () => {
  const node = await same((impl) => serve(impl, 'Mixed.Case.Example', {
    options: (seen) => ({
      SNICallback(name, cb) {
        seen.push(`SNICallback ${JSON.stringify(name)}`);
        cb(null, null);
      },
    }),
  }));
  assert.ok(node.server.includes('SNICallback "Mixed.Case.Example"'));
});

for (const [pattern, sent] of [
  ['example.com', 'EXAMPLE.com'],
  ['Example.COM', 'example.com'],
  ['*.Example.com', 'a.example.COM'],
  ['sni.0', 'sni.0'],
  ['*.123', 'a.123'],
  ['127.0.0.1', '127.0.0.1'],
]) {
  test(`addContext(${JSON.stringify(pattern)}) for a client naming ${JSON.stringify(sent)}: ` +
    'the certificate node\'s version chooses', T, async () => {
    await same((impl) => serve(impl, sent, {
      setup(server) { server.addContext(pattern, certs.ecdsa); },
    }));
  });
}

test('a refused name on a server with requestCert: the client certificate as node checks it',
  T, async () => {
    await same((impl) => serve(impl, 'sni.0', {
      options: { requestCert: true, rejectUnauthorized: false, ca: certs.ca },
      tlsOptions: { ...certs.client },
      setup(server, seen) {
        server.on('secureConnection', (s) => {
          seen.push(`authorized=${s.authorized} ${s.authorizationError}`);
        });
      },
    }));
  });

/** GET / over TLS naming `servername`, kept alive; what came back once the connection closed. */
function getNaming(port, servername) {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false },
      () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    let data = '';
    let error = null;
    socket.setEncoding('latin1');
    socket.on('data', (d) => { data += d; });
    socket.on('error', (err) => { error = err.code; });
    socket.on('close', () => resolve({ body: data.slice(data.indexOf('\r\n\r\n') + 4), error }));
  });
}

test('a connection with a refused name is the server\'s: counted, closed by server.close()', T,
  async () => {
    await same(async (impl) => {
      const seen = [];
      const server = impl.createServer({ ...certs.rsa }, (req, res) => {
        server.getConnections((err, n) => {
          res.end(`connections=${n}`);
          server.close(() => seen.push('server close'));
        });
      });
      const socketClosed = new Promise((resolve) => {
        server.on('connection', (socket) => {
          seen.push(`connection encrypted=${socket.encrypted}`);
          socket.on('close', resolve);
        });
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { body } = await getNaming(server.address().port, 'sni.0');
      seen.push(`client close ${body}`);
      await new Promise((resolve) => (seen.includes('server close') ? resolve() :
        server.once('close', () => setImmediate(resolve))));
      await socketClosed;
      return seen.sort();
    });
  });

test('the socket \'connection\' gave, destroyed during a request of a refused name, ends it', T,
  async () => {
    await same(async (impl) => {
      const seen = [];
      let first;
      const server = impl.createServer({ ...certs.rsa }, (req) => {
        seen.push('request');
        first.destroy();
      });
      server.on('connection', (socket) => {
        first = socket;
        socket.on('close', () => seen.push('connection socket close'));
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { body, error } = await getNaming(server.address().port, 'sni.0');
      seen.push(`client body=${JSON.stringify(body)} error=${error}`);
      await new Promise((resolve) => server.close(resolve));
      return seen.sort();
    });
  });
