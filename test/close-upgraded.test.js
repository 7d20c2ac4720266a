'use strict';
// server.close()'s callback waits for upgraded and CONNECT sockets, on http and https: node
// counts them among the server's connections until they close (net.Server's _connections),
// so 'close' comes after them. Before, fast-http's came a tick after close().
const { test } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const tls = require('node:tls');
const { both } = require('./helpers/both');
const fixtures = require('./helpers/tls-fixtures');
const nodeHttps = require('node:https');
const fastHttp = require('..');

/** both() hands node:http or fast-http; an https scenario serves on the matching https. */
const serving = (scheme, impl) =>
  (scheme === 'http' ? impl : impl === fastHttp ? fastHttp.https : nodeHttps);

const HEADS = {
  upgrade: 'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n',
  connect: 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
};

function connect(scheme, port, onConnect) {
  if (scheme === 'http') return net.connect(port, '127.0.0.1', onConnect);
  return tls.connect({ port, host: '127.0.0.1', ca: fixtures.ca, servername: 'localhost' },
    onConnect);
}

/**
 * The client sends an upgrade or CONNECT head; the server answers it and keeps the socket;
 * once the client has the answer the server closes; a turn of the loop later the client
 * hangs up. Logs the order of the client's hang-up, the server socket's 'close' and close's
 * callback.
 */
function scenario(scheme, kind) {
  return (impl, log, done) => {
    const tlsOptions = { key: fixtures.key, cert: fixtures.cert };
    const server = impl.createServer(scheme === 'https' ? tlsOptions : {});
    server.on(kind, (req, socket) => {
      socket.on('error', () => {});
      socket.on('close', () => {
        log.push('server socket close');
        if (log.includes('close callback ok')) done();
      });
      // Read and end at the peer's end, as a WebSocket or tunnel does (node's server socket
      // allows half-open: without end() it stays open).
      socket.resume();
      socket.on('end', () => socket.end());
      socket.write(kind === 'upgrade' ?
        'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n' :
        'HTTP/1.1 200 Connection Established\r\n\r\n');
    });
    server.listen(0, '127.0.0.1', () => {
      const client = connect(scheme, server.address().port, () => client.write(HEADS[kind]));
      client.on('error', () => {});
      client.once('data', () => {
        server.close((err) => {
          log.push(`close callback ${err ? err.code : 'ok'}`);
          if (log.includes('server socket close')) done();
        });
        log.push('closed');
        setImmediate(() => {
          log.push('client hangs up');
          client.destroy();
        });
      });
    });
  };
}

for (const scheme of ['http', 'https']) {
  for (const kind of ['upgrade', 'connect']) {
    test(`${scheme}: server.close()'s callback comes after an open ${kind} socket closes`,
      { timeout: 30000 }, async () => {
        const run = scenario(scheme, kind);
        const logs = await both((impl, log, done) => run(serving(scheme, impl), log, done));
        assert.deepEqual(logs['fast-http'], logs['node:http']);
        assert.deepEqual(logs['node:http'],
          ['closed', 'client hangs up', 'close callback ok', 'server socket close']);
      });
  }
}
