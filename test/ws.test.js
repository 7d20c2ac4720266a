'use strict';
// The `ws` package (its own JS, over node:http's 'upgrade') on fast-http through register:
// an echo round trip and a broadcast to 8 clients, every frame in order.
const test = require('node:test');
const assert = require('node:assert/strict');
const WebSocket = require('ws');
const { startWithRegister } = require('./helpers/child-app');

/** The ws fixture under register; stopped when the test ends. */
async function startApp(t) {
  const app = await startWithRegister('ws-app.js');
  t.after(() => app.close());
  return app;
}

/** Opens a client; `first` resolves with the first message, which may arrive in the same
 * packet as the handshake response (so its listener must exist before 'open'). */
function open(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.first = nextMessage(ws);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

function nextMessage(ws) {
  return new Promise((resolve) => ws.once('message', (d, isBinary) => resolve({ d, isBinary })));
}

test('ws echo server on fast-http via register', async (t) => {
  const { port, isFastHttp } = await startApp(t);
  assert.equal(isFastHttp, true);
  const ws = await open(`ws://127.0.0.1:${port}/echo`);
  for (const msg of ['hello', 'x'.repeat(70000), '']) {
    ws.send(msg);
    const { d, isBinary } = await nextMessage(ws);
    assert.equal(isBinary, false);
    assert.equal(String(d), msg);
  }
  const bin = Buffer.from([0, 1, 2, 255]);
  ws.send(bin);
  const { d, isBinary } = await nextMessage(ws);
  assert.equal(isBinary, true);
  assert.deepEqual(d, bin);
  ws.close();
});

test('ws broadcast to 8 clients arrives complete and in order', async (t) => {
  const { port } = await startApp(t);
  const clients = [];
  for (let i = 0; i < 8; i++) {
    const ws = await open(`ws://127.0.0.1:${port}/broadcast`);
    assert.equal(String((await ws.first).d), 'ready');
    clients.push(ws);
  }
  const N = 200;
  const received = clients.map((ws) => new Promise((resolve) => {
    const frames = [];
    ws.on('message', (d) => {
      frames.push(String(d));
      if (frames.length === N) resolve(frames);
    });
  }));
  clients[0].send(`go ${N}`);
  const all = await Promise.all(received);
  const expected = Array.from({ length: N }, (_, i) => `frame ${i}`);
  for (const frames of all) assert.deepEqual(frames, expected);
  for (const ws of clients) ws.close();
});
