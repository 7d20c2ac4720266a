'use strict';
// A client that stalls in its TLS handshake meets handshakeTimeout, not headersTimeout: node's
// https makes the HTTP parser (and its request clock) at 'secureConnection'. The timeout is
// one 'tlsClientError' ERR_TLS_HANDSHAKE_TIMEOUT; https destroys the socket unless the app
// listens to 'clientError', and then the socket stays until the app or the client ends it.
// fast-http closed such a client at headersTimeout with ERR_HTTP_REQUEST_TIMEOUT, closed it at
// handshakeTimeout whatever the app did, and told its later hang-up as a second error.
const assert = require('node:assert/strict');
const net = require('node:net');
const { test } = require('node:test');
const nodeHttps = require('node:https');
const { certs, fastHttps } = require('./helpers');

const T = { timeout: 30000 };
const OPTIONS = {
  headersTimeout: 300, requestTimeout: 400, connectionsCheckingInterval: 50,
  handshakeTimeout: 1500,
};

async function stall(impl, { first, clientError }) {
  const server = impl.createServer({ ...certs.rsa, ...OPTIONS }, (req, res) => res.end());
  const events = [];
  let timedOut;
  const tlsError = new Promise((resolve) => { timedOut = resolve; });
  server.on('tlsClientError', (err, socket) => {
    events.push(`tlsClientError ${err.code}`);
    // What https's own listener did with it shows on the next tick.
    process.nextTick(() => {
      events.push(`destroyed ${socket.destroyed}`);
      timedOut();
    });
  });
  if (clientError) server.on('clientError', (err) => events.push(`clientError ${err.code}`));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = net.connect(server.address().port, '127.0.0.1', () => {
    if (first) client.write(first);
  });
  client.on('error', () => {});
  const closed = new Promise((resolve) => client.on('close', resolve));
  await tlsError;
  // The client leaves; a server that still holds the socket hears nothing more of it.
  client.destroy();
  await closed;
  await new Promise((resolve) => server.close(resolve));
  return events;
}

const PARTIAL_HELLO = Buffer.from([0x16, 0x03, 0x01, 0x00, 0xc8, 0x01]);

for (const [name, first] of [['silent', null], ['part of a ClientHello', PARTIAL_HELLO]]) {
  for (const clientError of [false, true]) {
    test(`a handshake that stalls (${name}${clientError ? ', clientError listener' : ''}): ` +
      'handshakeTimeout, as node', T, async () => {
      const node = await stall(nodeHttps, { first, clientError });
      assert.ok(node.includes('tlsClientError ERR_TLS_HANDSHAKE_TIMEOUT'), node.join());
      assert.deepEqual(await stall(fastHttps(), { first, clientError }), node);
    });
  }
}
