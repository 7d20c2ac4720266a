'use strict';
// The server and its connections are seen by the tools that find open handles as on
// node:http: process._getActiveHandles() and process.getActiveResourcesInfo() list them while
// they are open and referenced, async_hooks see a TCPSERVERWRAP and a TCPWRAP per connection
// (triggered by the server's) and their destroy, and why-is-node-running reports them, and
// nothing once closed. Before, fast-http's listeners and connections showed in none of them.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { createHook } = require('node:async_hooks');
const { both } = require('./helpers/both');

const TCP_INFO = new Set(['TCPServerWrap', 'TCPSocketWrap']);

/** What the two process functions say about TCP handles, and whether they hold these. */
function handles(server, socket) {
  const owners = process._getActiveHandles();
  const info = process.getActiveResourcesInfo().filter((n) => TCP_INFO.has(n)).sort();
  return `info [${info}] server ${owners.includes(server)} socket ${owners.includes(socket)}`;
}

/** A server with one keep-alive connection whose request was answered. */
function withConnection(impl, fn) {
  const server = impl.createServer((req, res) => {
    res.end('ok', () => fn(server, req.socket, client));
  });
  let client;
  server.listen(0, '127.0.0.1', () => {
    client = net.connect(server.address().port, '127.0.0.1', () => {
      client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    client.resume();
  });
}

test('process._getActiveHandles() and getActiveResourcesInfo() list the server and its ' +
  'connections while open and referenced', { timeout: 30000 }, async () => {
  const logs = await both((impl, log, done) => {
    withConnection(impl, (server, socket, client) => {
      log.push(`open: ${handles(server, socket)}`);
      server.unref();
      socket.unref();
      log.push(`unref: ${handles(server, socket)}`);
      server.ref();
      socket.ref();
      log.push(`ref: ${handles(server, socket)}`);
      let closes = 0;
      const closed = () => {
        if (++closes < 3) return;
        log.push(`closed: ${handles(server, socket)}`);
        done();
      };
      socket.on('close', closed);
      client.on('close', closed);
      server.close(closed);
      client.destroy();
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.deepEqual(logs['node:http'], [
    'open: info [TCPServerWrap,TCPSocketWrap,TCPSocketWrap] server true socket true',
    'unref: info [TCPSocketWrap] server false socket false',
    'ref: info [TCPServerWrap,TCPSocketWrap,TCPSocketWrap] server true socket true',
    'closed: info [] server false socket false',
  ]);
});

test('a connection that has sent nothing yet is listed too', { timeout: 30000 }, async () => {
  const logs = await both((impl, log, done) => {
    const server = impl.createServer();
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1');
      // The server has accepted it once it counts it (getConnections makes no socket).
      const counted = () => server.getConnections((err, n) => {
        if (n === 0) {
          setImmediate(counted);
          return;
        }
        const owners = process._getActiveHandles();
        const sockets = owners.filter((o) => o instanceof net.Socket && o.server === server);
        log.push(`${handles(server, null)}, the server's sockets listed ${sockets.length}`);
        client.destroy();
        server.close(done);
        server.closeAllConnections();
      });
      client.on('connect', counted);
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.deepEqual(logs['node:http'], [
    'info [TCPServerWrap,TCPSocketWrap,TCPSocketWrap] server true socket false, ' +
      'the server\'s sockets listed 1',
  ]);
});

test('async_hooks see a TCPSERVERWRAP, a TCPWRAP per connection triggered by it, and their ' +
  'destroy', { timeout: 30000 }, async () => {
  const logs = await both((impl, log, done) => {
    const inits = new Map();
    const live = new Set();
    let onDestroy = null;
    const hook = createHook({
      init(id, type, trigger, resource) {
        if (type === 'TCPSERVERWRAP' || type === 'TCPWRAP') {
          inits.set(id, { type, trigger, resource });
          live.add(id);
        }
      },
      destroy(id) {
        if (live.delete(id) && live.size === 0) onDestroy?.();
      },
    }).enable();
    withConnection(impl, (server, socket, client) => {
      const serverIds = [...inits].filter(([, r]) => r.type === 'TCPSERVERWRAP');
      const served = [...inits.values()].filter((r) => r.type === 'TCPWRAP' &&
        serverIds.some(([id]) => r.trigger === id));
      log.push(`TCPSERVERWRAP ${serverIds.length}, TCPWRAP ${
        [...inits.values()].filter((r) => r.type === 'TCPWRAP').length}, of the server ${
        served.length}, hasRef ${[...inits.values()].map((r) => r.resource.hasRef())}`);
      onDestroy = () => {
        hook.disable();
        log.push(`all destroyed, hasRef ${[...inits.values()].map((r) => r.resource.hasRef())}`);
        done();
      };
      server.close();
      client.destroy();
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.deepEqual(logs['node:http'], [
    'TCPSERVERWRAP 1, TCPWRAP 2, of the server 1, hasRef true,true,true',
    'all destroyed, hasRef ,,',
  ]);
});

function child(impl, phase) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(__dirname, 'fixtures', 'open-handles-child.mjs'),
      impl, phase], { timeout: 20000 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
}

test('why-is-node-running reports the server and its connections, and nothing once closed',
  { timeout: 60000 }, async () => {
    for (const phase of ['open', 'closed']) {
      const node = await child('node:http', phase);
      const fast = await child('fast-http', phase);
      assert.equal(fast, node, phase);
      assert.equal(node, phase === 'open' ? 'TCPSERVERWRAP\nTCPWRAP\nTCPWRAP\n' : '\n');
    }
  });
