'use strict';
// The socket facade makes its stream states only when something needs them (an idle
// keep-alive connection then holds a few hundred bytes of JS instead of two stream states).
// Until then its getters must answer exactly what the states would.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { Readable } = require('node:stream');
const fastHttp = require('..');

const GETTERS = [
  'destroyed', 'closed', 'errored', 'readable', 'writable', 'readableEnded',
  'readableFlowing', 'readableLength', 'readableHighWaterMark', 'writableEnded',
  'writableFinished', 'writableLength', 'writableNeedDrain', 'writableCorked',
  'writableHighWaterMark', 'readableObjectMode', 'writableObjectMode', 'pending',
  'readyState', 'bufferSize', 'connecting',
];

function snapshot(socket) {
  const out = {};
  for (const name of GETTERS) out[name] = socket[name];
  out.isPaused = null;
  return out;
}

function hasStates(socket) {
  return Object.getOwnPropertyDescriptor(socket, '_readableState') !== undefined ||
    Object.getOwnPropertyDescriptor(socket, '_writableState') !== undefined;
}

/** One request on a keep-alive connection; resolves with the response text. */
function get(port, path = '/') {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = '';
    sock.setEncoding('latin1');
    sock.on('error', reject);
    sock.on('data', (d) => {
      buf += d;
      // Every handler here answers '{}', with Content-Length or chunked.
      if (/\r\n\r\n(\{\}|2\r\n\{\}\r\n0\r\n\r\n)$/.test(buf)) {
        sock.end();
        resolve(buf);
      }
    });
    sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

/** One request to `server`, which is closed afterwards; resolves with the response text. */
async function getOnce(server) {
  const port = await listen(server);
  try {
    return await get(port);
  } finally {
    server.close();
  }
}

test('a socket answers its stream getters as its states would, before and after they exist', async () => {
  let seen;
  const server = fastHttp.createServer((req, res) => {
    const socket = req.socket;
    const lazyBefore = !hasStates(socket);
    const before = snapshot(socket);
    // Any read of a state makes both.
    assert.equal(typeof socket._readableState.highWaterMark, 'number');
    const after = snapshot(socket);
    seen = { lazyBefore, made: hasStates(socket), before, after, paused: socket.isPaused() };
    res.end('{}');
  });
  await getOnce(server);
  assert.equal(seen.lazyBefore, true, 'a fresh request\'s socket has no stream states yet');
  assert.equal(seen.made, true);
  assert.deepEqual(seen.before, seen.after);
  assert.equal(seen.after.readableFlowing, true, 'the server listens for data, as node\'s does');
  assert.equal(seen.paused, false);
});

test('answering with writeHead + end leaves the socket without stream states', async () => {
  const seen = [];
  const server = fastHttp.createServer((req, res) => {
    // Looked at on the next request of the connection: the previous one went all the way.
    seen.push(hasStates(req.socket));
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
  const port = await listen(server);
  try {
    await new Promise((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1');
      let buf = '';
      let left = 3;
      sock.setEncoding('latin1');
      sock.on('error', reject);
      sock.on('data', (d) => {
        buf += d;
        while (buf.includes('0\r\n\r\n')) {
          buf = buf.slice(buf.indexOf('0\r\n\r\n') + 5);
          if (--left === 0) {
            sock.end();
            resolve();
          } else {
            sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
          }
        }
      });
      sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    });
  } finally {
    server.close();
  }
  assert.deepEqual(seen, [false, false, false]);
});

test('listeners: data/readable make the states, others do not; counts match node', async () => {
  let seen;
  const server = fastHttp.createServer((req, res) => {
    const socket = req.socket;
    const onTimeout = () => {};
    socket.on('timeout', onTimeout);
    const afterTimeout = hasStates(socket);
    socket.removeListener('timeout', onTimeout);
    const dataCount = socket.listenerCount('data');
    const afterCount = hasStates(socket);
    seen = { afterTimeout, dataCount, afterCount, closeCount: socket.listenerCount('close') };
    res.end('{}');
  });
  const port = await listen(server);
  const nodeServer = require('node:http').createServer((req, res) => {
    seen.node = { dataCount: req.socket.listenerCount('data') };
    res.end('{}');
  });
  const nodePort = await listen(nodeServer);
  try {
    await get(port);
    await get(nodePort);
  } finally {
    server.close();
    nodeServer.close();
  }
  assert.equal(seen.afterTimeout, false);
  assert.equal(seen.afterCount, true, 'counting data listeners makes the states');
  assert.equal(seen.dataCount, seen.node.dataCount);
  assert.equal(seen.closeCount, 2);
});

/**
 * Two requests on one keep-alive connection to `http`'s server: `onRequest(req)` runs in the
 * handler (which answers '{}'), `onIdle(n)` once the n-th response is over (its 'finish' and
 * 'close' ran before the client could read its bytes).
 */
function twoRequests(http, onRequest, onIdle, done) {
  const server = http.createServer((req, res) => {
    onRequest(req);
    res.end('{}');
  });
  server.listen(0, '127.0.0.1', () => {
    const client = net.connect(server.address().port, '127.0.0.1');
    let n = 0;
    client.on('data', (d) => {
      if (!/\{\}$/.test(String(d))) return;
      setImmediate(() => {
        onIdle(++n);
        if (n === 2) {
          client.destroy();
          server.close(done);
          return;
        }
        client.write('GET /2 HTTP/1.1\r\nHost: x\r\n\r\n');
      });
    });
    client.write('GET /1 HTTP/1.1\r\nHost: x\r\n\r\n');
  });
}

test("the socket's 'close' listeners during a response and between responses match node's", async () => {
  const { both } = require('./helpers/both');
  const logs = await both((http, log, done) => {
    let socket = null;
    twoRequests(http, (req) => {
      socket = req.socket;
      log.push(`request ${req.url}: ${socket.listenerCount('close')}`);
    }, (n) => log.push(`idle after ${n}: ${socket.listenerCount('close')}`), done);
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.deepEqual(logs['node:http'], ['request /1: 2', 'idle after 1: 1', 'request /2: 2', 'idle after 2: 1']);
});

test("an app's own 'close' and 'newListener' listeners see node's per-response 'close' listener come and go", async () => {
  const { both } = require('./helpers/both');
  const logs = await both((http, log, done) => {
    let socket = null;
    const app = () => {};
    const names = () => socket.listeners('close').map((f) => (f === app ? 'app' : 'server')).join(',');
    twoRequests(http, (req) => {
      socket = req.socket;
      if (req.url === '/1') {
        socket.on('close', app);
        socket.on('newListener', (ev) => log.push(`newListener ${ev}`));
        socket.on('removeListener', (ev) => log.push(`removeListener ${ev}`));
      }
      log.push(`request ${req.url}: ${names()}`);
    }, (n) => log.push(`idle after ${n}: ${names()}`), done);
  });
  // node's own listeners for 'data', 'end' and the like may differ; 'close' is compared.
  const closeOnly = (log) => log.filter((l) => !/Listener (?!close)/.test(l));
  assert.deepEqual(closeOnly(logs['fast-http']), closeOnly(logs['node:http']));
  assert.ok(logs['node:http'].includes('removeListener close'));
});

test('a socket without states can be paused, resumed, corked and destroyed', async () => {
  const server = fastHttp.createServer((req, res) => {
    const socket = req.socket;
    socket.cork();
    assert.equal(socket.writableCorked, 1);
    socket.uncork();
    socket.pause();
    assert.equal(socket.isPaused(), true);
    socket.resume();
    res.end('{}');
  });
  assert.match(await getOnce(server), /^HTTP\/1\.1 200 OK\r\n/);
});

test('replacing one stream state on a socket without states leaves the other readable', async () => {
  let seen;
  const server = fastHttp.createServer((req, res) => {
    const socket = req.socket;
    const lazy = !hasStates(socket);
    const state = new Readable.ReadableState({}, socket, true);
    socket._readableState = state;
    seen = {
      lazy,
      replaced: socket._readableState === state,
      writable: typeof socket._writableState.highWaterMark,
    };
    res.end('{}');
  });
  await getOnce(server);
  assert.deepEqual(seen, { lazy: true, replaced: true, writable: 'number' });
});
