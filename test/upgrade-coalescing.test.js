'use strict';
// Write coalescing on upgraded sockets: the first write of a JS task goes out at once; later
// writes of the same task go out together after its microtasks (a batch passing 64 KB in
// several writes). Each flush is checked by counting write(2) calls in
// the addon, and every test checks that the bytes arrive complete and in order.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const fastHttp = require('..');
const { binding } = require('../lib/internal/native');

const writeCalls = () => binding.counters()[2];

/**
 * Upgrades a connection and runs `scenario(socket)` outside any native event batch (in a
 * setImmediate), returning the write(2) calls it took and the bytes the client received.
 */
async function run(scenario, { expect, clientPaused = false } = {}) {
  let serverSocket;
  const server = fastHttp.createServer();
  const upgraded = new Promise((resolve) => {
    server.on('upgrade', (req, socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
      serverSocket = socket;
      resolve();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = net.connect(server.address().port, '127.0.0.1');
  let received = Buffer.alloc(0);
  let headDone = false;
  const got = new Promise((resolve, reject) => {
    client.setTimeout(10000, () => reject(new Error(`timed out with ${received.length} bytes`)));
    client.on('data', (d) => {
      received = Buffer.concat([received, d]);
      if (!headDone) {
        const end = received.indexOf('\r\n\r\n');
        if (end === -1) return;
        headDone = true;
        received = received.subarray(end + 4);
      }
      if (received.length >= expect) resolve();
    });
    client.on('end', () => resolve());
  });
  client.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
  await upgraded;
  if (clientPaused) client.pause();
  const result = await new Promise((resolve) => {
    setImmediate(() => {
      const before = writeCalls();
      const extra = scenario(serverSocket, client);
      // After this task's microtasks (the coalesced flush) have run:
      setImmediate(() => resolve({ calls: writeCalls() - before, extra }));
    });
  });
  await got;
  client.destroy();
  serverSocket.destroy();
  server.close();
  return { ...result, received };
}

function frames(n, size, from = 0) {
  return Array.from({ length: n }, (_, i) => Buffer.alloc(size, (from + i) % 251));
}

test('256 small writes in one task: one write now, one after the microtasks', async () => {
  const bufs = frames(256, 128);
  const { calls, received } = await run((s) => { for (const b of bufs) s.write(b); },
    { expect: 256 * 128 });
  assert.equal(calls, 2);
  assert.deepEqual(received, Buffer.concat(bufs));
});

test('a single write goes out at once', async () => {
  const b = Buffer.alloc(128, 7);
  const { calls, received } = await run((s) => s.write(b), { expect: 128 });
  assert.equal(calls, 1);
  assert.deepEqual(received, b);
});

for (const [name, trigger, expected] of [
  ['a write with a callback', (s, b) => s.write(b, () => {}), 2],
  ['a string write', (s, b) => s.write(b.toString('latin1'), 'latin1'), 2],
  ['a write over 16 KB', (s) => s.write(Buffer.alloc(20000, 9)), 3],
]) {
  test(`${name} keeps its place among held writes`, async () => {
    const before = frames(3, 128, 0);
    const mid = Buffer.alloc(128, 200);
    const after = frames(3, 128, 10);
    const midBytes = name.includes('16 KB') ? Buffer.alloc(20000, 9) : mid;
    const total = 6 * 128 + midBytes.length;
    const { calls, received } = await run((s) => {
      for (const b of before) s.write(b);
      trigger(s, mid);
      for (const b of after) s.write(b);
    }, { expect: total });
    // The first write at once; the rest, in order, after the microtasks (what waits is
    // written early once it passes the high-water mark).
    assert.equal(calls, expected);
    assert.deepEqual(received, Buffer.concat([...before, midBytes, ...after]));
  });
}

test('a batch passing 64 KB is written before the task ends', async () => {
  const bufs = frames(600, 128);
  const { calls, received } = await run((s) => { for (const b of bufs) s.write(b); },
    { expect: 600 * 128 });
  assert.equal(calls, 3);
  assert.deepEqual(received, Buffer.concat(bufs));
});

test('held writes count in writableLength; write() turns false past the high-water mark and drain follows',
  async () => {
    const bufs = frames(200, 128);
    const { extra } = await run((s) => {
      const lengths = [];
      const results = [];
      for (const b of bufs) {
        results.push(s.write(b));
        lengths.push(s.writableLength);
      }
      const seen = { lengths, results, hwm: s.writableHighWaterMark, drained: false };
      s.once('drain', () => { seen.drained = s.writableLength === 0; });
      return seen;
    }, { expect: 200 * 128 });
    // The first write went to the kernel; each later one waits for the end of the task.
    assert.deepEqual(extra.lengths, bufs.map((b, i) => i * 128));
    assert.deepEqual(extra.results, bufs.map((b, i) => i * 128 < extra.hwm));
    assert.equal(extra.drained, true);
  });

test('end() sends what is held, then FIN', async () => {
  const bufs = frames(50, 128);
  const { received } = await run((s) => {
    for (const b of bufs) s.write(b);
    s.end(Buffer.from('bye'));
  }, { expect: 50 * 128 + 3 });
  assert.deepEqual(received, Buffer.concat([...bufs, Buffer.from('bye')]));
});

test('destroy() right after small writes still sends them, in order', async () => {
  const bufs = frames(50, 128);
  const { received } = await run((s) => {
    for (const b of bufs) s.write(b);
    s.destroy();
  }, { expect: 50 * 128 });
  assert.deepEqual(received, Buffer.concat(bufs));
});

test('write() results, callbacks and bytesWritten are unchanged', async () => {
  const bufs = frames(10, 128);
  const { extra } = await run((s) => {
    const results = bufs.map((b) => s.write(b));
    const order = [];
    s.write(Buffer.alloc(1), () => order.push('cb'));
    return { results, bytesWritten: s.bytesWritten, order };
  }, { expect: 10 * 128 + 1 });
  assert.deepEqual(extra.results, bufs.map(() => true));
  assert.equal(extra.bytesWritten, 10 * 128 + 1 + 'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n'.length);
});

test('backpressure: what the kernel refuses stays queued, drain comes once it is taken',
  async () => {
    const chunk = Buffer.alloc(16 * 1024, 3);
    let sawFalse = false;
    let drains = 0;
    const total = 16 * 1024 * 1024;
    const { received } = await run((s, client) => {
      let sent = 0;
      const pump = () => {
        while (sent < total) {
          sent += chunk.length;
          if (!s.write(chunk)) {
            sawFalse = true;
            s.once('drain', () => {
              drains++;
              pump();
            });
            return;
          }
        }
      };
      pump();
      setTimeout(() => client.resume(), 50);
    }, { expect: total, clientPaused: true });
    assert.equal(sawFalse, true);
    assert.ok(drains > 0);
    assert.equal(received.length, total);
  });
