'use strict';
// How an https connection ends, event for event as node's: a client that resets during or
// right after a response (issue #32 item 7; no difference found on the code of 2026-12-05 in
// these cases: they pin it).
const assert = require('node:assert/strict');
const net = require('node:net');
const { Duplex } = require('node:stream');
const tls = require('node:tls');
const { test } = require('node:test');
const nodeHttps = require('node:https');
const { certs, fastHttps } = require('./helpers');

const T = { timeout: 30000 };

/** Server-side events of one connection that `client(port, events)` makes; ends at its close. */
async function serve(impl, options, handler, client) {
  const events = [];
  let closed;
  const done = new Promise((resolve) => { closed = resolve; });
  const { keepAliveTimeout, ...tlsOptions } = options;
  const server = impl.createServer({ ...certs.rsa, ...tlsOptions }, (req, res) => {
    req.on('end', () => events.push('req end'));
    req.on('aborted', () => events.push('req aborted'));
    req.on('close', () => events.push('req close'));
    res.on('close', () => events.push(`res close finished=${res.writableFinished}`));
    handler(req, res);
  });
  server.on('secureConnection', (socket) => {
    socket.on('end', () => events.push('socket end'));
    socket.on('error', (err) => events.push(`socket error ${err.code}`));
    socket.on('close', (hadError) => {
      events.push(`socket close ${hadError}`);
      closed();
    });
  });
  server.on('clientError', (err) => events.push(`clientError ${err.code}`));
  if (keepAliveTimeout !== undefined) server.keepAliveTimeout = keepAliveTimeout;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await client(server.address().port);
  await done;
  await new Promise((resolve) => server.close(resolve));
  return events;
}

/** A TLS client on a raw socket of our own, so its TCP side can be held or reset. */
function rawTls(port, maxVersion, onSecure) {
  const raw = net.connect(port, '127.0.0.1');
  raw.on('error', () => {});
  const c = tls.connect({ socket: raw, rejectUnauthorized: false, maxVersion }, () => onSecure(c, raw));
  c.on('error', () => {});
  return { raw, c };
}

for (const maxVersion of ['TLSv1.3', 'TLSv1.2']) {
  for (const [name, size, respond] of [
    ['a response it writes in pieces', 64 * 1024, (res, chunk) => {
      let n = 0;
      const more = () => {
        while (n++ < 200) {
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      res.writeHead(200);
      more();
    }],
    ['a whole response', 300000, (res, chunk) => res.end(chunk)],
  ]) {
    test(`${maxVersion}: a client that resets during ${name}`, T, async () => {
      const chunk = Buffer.alloc(size, 97);
      const run = (impl) => serve(impl, {}, (req, res) => respond(res, chunk),
        (port) => new Promise((resolve) => {
          const { raw } = rawTls(port, maxVersion, (c) => {
            c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
            c.once('data', () => raw.resetAndDestroy());
          });
          raw.on('close', resolve);
        }));
      const node = await run(nodeHttps);
      assert.ok(node.includes('socket close true'), node.join());
      assert.deepEqual(await run(fastHttps()), node);
    });
  }
}

// node's https server knows a connection from 'secureConnection' on: server.close() (and its
// closeIdleConnections) leaves one still in its handshake, which is then served. fast-http
// closed it as idle.
test('server.close() during a handshake: the connection is served, then the server closes', T,
  async () => {
    const run = async (impl) => {
      const seen = [];
      const server = impl.createServer({ ...certs.rsa }, (req, res) => res.end('served'));
      const accepted = new Promise((resolve) => server.once('connection', resolve));
      const closed = new Promise((resolve) => server.once('close', resolve));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const raw = net.connect(server.address().port, '127.0.0.1');
      await accepted;
      server.close(() => seen.push('server close'));
      const body = await new Promise((resolve) => {
        const socket = tls.connect({ socket: raw, rejectUnauthorized: false }, () => {
          seen.push('secureConnect');
          socket.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        });
        let data = '';
        socket.setEncoding('latin1');
        socket.on('data', (d) => { data += d; });
        socket.on('error', (err) => seen.push(`client error ${err.code}`));
        socket.on('close', () => resolve(data.slice(data.indexOf('\r\n\r\n') + 4)));
      });
      seen.push(`response ${JSON.stringify(body)}`);
      await closed;
      return seen;
    };
    const node = await run(nodeHttps);
    assert.deepEqual(await run(fastHttps()), node);
    assert.ok(node.includes('response "served"'), node.join('\n'));
  });

// RFC 8446 section 6.1: close_notify ends the client's writing; node's https server sees the
// end at once (its 'end', then the response and its own close_notify and FIN), without
// waiting for a TCP FIN that never comes. keepAliveTimeout is longer than the test's timeout:
// a server that waited for it would fail the test.
for (const maxVersion of ['TLSv1.3', 'TLSv1.2']) {
  test(`${maxVersion}: a request and close_notify without a FIN end the connection at once`, T,
    async () => {
      const bodies = [];
      const run = (impl) => serve(impl, { keepAliveTimeout: 120000 },
        (req, res) => res.end('bye'), (port) =>
        new Promise((resolve) => {
          const raw = net.connect(port, '127.0.0.1');
          raw.on('error', () => {});
          // The client's TLS over a stream that never sends the FIN its end() would.
          const transport = new Duplex({
            read() {},
            write(chunk, encoding, cb) { raw.write(chunk, cb); },
            final(cb) { cb(); },
          });
          raw.on('data', (d) => transport.push(d));
          const c = tls.connect({ socket: transport, rejectUnauthorized: false, maxVersion }, () => {
            c.end('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
          });
          c.on('error', () => {});
          let body = '';
          c.setEncoding('latin1');
          c.on('data', (d) => { body += d; });
          // The server's FIN: it closed its side after answering.
          raw.on('end', () => {
            bodies.push(body.slice(body.indexOf('\r\n\r\n') + 4));
            raw.destroy();
            resolve();
          });
        }));
      const node = await run(nodeHttps);
      assert.ok(node.includes('socket end'), node.join());
      assert.deepEqual(await run(fastHttps()), node);
      assert.deepEqual(bodies, ['bye', 'bye']);
    });
}
