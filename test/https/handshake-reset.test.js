'use strict';
// A client that resets its connection before the TLS handshake is done (a port scanner, a
// load balancer's health check, a browser giving up): node's TLSSocket reports the read error
// as tls.Server's 'tlsClientError' (ECONNRESET, errno, syscall 'read'), which https turns into
// 'clientError' where someone listens. fast-http said nothing, or only 'clientError'.
const assert = require('node:assert/strict');
const net = require('node:net');
const { test } = require('node:test');
const nodeHttps = require('node:https');
const { certs, fastHttps } = require('./helpers');

const T = { timeout: 30000 };
const CONNECTIONS = 5;

/** Events of `impl`'s server for CONNECTIONS clients that reset after sending `first`. */
async function resets(impl, { first, clientError }) {
  const server = impl.createServer({ ...certs.rsa }, (req, res) => res.end());
  const events = [];
  let closed = 0;
  let allClosed;
  const done = new Promise((resolve) => { allClosed = resolve; });
  server.on('connection', (socket) => {
    socket.on('close', (hadError) => {
      events.push(`close hadError=${hadError}`);
      if (++closed === CONNECTIONS) allClosed();
    });
  });
  server.on('tlsClientError', (err, socket) => {
    events.push(`tlsClientError ${err.code} '${err.message}' errno=${err.errno} ` +
      `syscall=${err.syscall} keys=${Object.keys(err)} encrypted=${socket.encrypted}`);
  });
  if (clientError) {
    server.on('clientError', (err, socket) => {
      events.push(`clientError ${err.code}`);
      socket.destroy();
    });
  }
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  for (let i = 0; i < CONNECTIONS; i++) {
    await new Promise((resolve) => {
      const c = net.connect(server.address().port, '127.0.0.1', () => {
        if (first) c.write(first);
        // The server's side is accepted (its 'connection' came) before the reset.
        c.resetAndDestroy();
      });
      c.on('error', () => {});
      c.on('close', resolve);
    });
  }
  await done;
  await new Promise((resolve) => server.close(resolve));
  return events.sort();
}

// The first bytes of a ClientHello record: the server waits for the rest.
const PARTIAL_HELLO = Buffer.from([0x16, 0x03, 0x01, 0x00, 0xc8, 0x01]);

for (const [name, first] of [['before any byte', null], ['inside the ClientHello', PARTIAL_HELLO]]) {
  for (const clientError of [false, true]) {
    test(`a reset ${name}${clientError ? ', with a clientError listener' : ''}: node's events`, T,
      async () => {
        const node = await resets(nodeHttps, { first, clientError });
        assert.ok(node.some((e) => e.startsWith('tlsClientError ECONNRESET')), node.join('\n'));
        assert.deepEqual(await resets(fastHttps(), { first, clientError }), node);
      });
  }
}
