'use strict';
// Connections reset by the peer, compared with node:http: a reset before any request is a
// 'clientError' (ECONNRESET from read) on node, whose socket exists from the accept.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { both } = require('./helpers/both');
const { waitForConnections } = require('./helpers/server-read');

test('a connection reset before any request is a clientError (ECONNRESET)', { timeout: 30000 }, async () => {
  const logs = await both((impl, log, done) => {
    const server = impl.createServer((req, res) => res.end('x'));
    server.on('clientError', (err, socket) => {
      log.push(`clientError ${err.code} ${err.syscall} ${socket instanceof net.Socket}`);
      socket.destroy();
      server.close(done);
    });
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1', () => {
        // Reset once the server has accepted the connection (it has a socket for it).
        waitForConnections(server).then(() => client.resetAndDestroy());
      });
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.deepEqual(logs['node:http'], ['clientError ECONNRESET read true']);
});

test('without a clientError listener a reset connection just goes away', { timeout: 30000 }, async () => {
  const logs = await both((impl, log, done) => {
    const server = impl.createServer((req, res) => res.end('x'));
    server.on('connection', (socket) => socket.on('close', () => {
      log.push('close');
      server.close(done);
    }));
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1', () => {
        // Reset once the server has accepted the connection (it has a socket for it).
        waitForConnections(server).then(() => client.resetAndDestroy());
      });
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});
