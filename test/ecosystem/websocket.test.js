'use strict';
// WebSockets on node:http vs fast-http: ws with a slow reader (backpressure on the upgraded
// socket), a raw upgraded socket's stream accounting, socket.io on each transport.
const assert = require('node:assert/strict');
const WebSocket = require('ws');
const { io } = require('socket.io-client');
const {
  threeWay, rawExchange, write, bound, HANG_BOUND_MS,
} = require('./helpers/three-way');

threeWay('ws: a slow reader, the server honouring bufferedAmount', {
  fixture: 'ws-slow-reader.js',
  async exercise(app) {
    const ws = new WebSocket(`ws://127.0.0.1:${app.port}/`, { perMessageDeflate: false });
    app.onStop(() => ws.terminate());
    const got = { count: 0, inOrder: true, intact: true, last: null };
    const closed = new Promise((resolve) => ws.once('close', (code) => resolve(code)));
    ws.on('message', (data, isBinary) => {
      if (!isBinary) {
        got.last = String(data);
        ws.close(1000);
        return;
      }
      const i = data.readUInt32BE(0);
      if (i !== got.count) got.inOrder = false;
      if (data.length !== app.info.SIZE || data[data.length - 1] !== (i & 0xff)) got.intact = false;
      got.count++;
      // Slow: one message per turn of the loop.
      ws._socket.pause();
      setImmediate(() => ws._socket.resume());
    });
    await new Promise((resolve, reject) => {
      // Not a byte read until the server reports backpressure (or that it sent everything).
      ws.once('upgrade', (res) => res.socket.pause());
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    await app.waitFor(['backpressure', 'all-sent'], HANG_BOUND_MS);
    ws._socket.resume();
    got.closeCode = await Promise.race([closed, bound('no close')]);
    await app.waitFor('close', HANG_BOUND_MS);
    return got;
  },
  check({ client, app }) {
    assert.deepEqual(client, { count: 256, inOrder: true, intact: true, last: 'done', closeCode: 1000 });
    assert.deepEqual(app, [
      ['backpressure', { writableLengthPositive: true, pastHighWaterMark: true, needDrain: true, writeReturnedFalse: true }],
      ['all-sent', { waited: true, everyWaitDrained: true }],
      ['close', 1000],
    ]);
  },
});

for (const chunkSize of [16 * 1024, 64 * 1024]) {
  threeWay(`an upgraded socket's backpressure (${chunkSize / 1024} KiB writes): writableLength, write() false, 'drain'`, {
    fixture: 'raw-upgrade.js',
    options: { chunkSize },
    async exercise(app) {
      const r = await rawExchange(app.port, async (socket) => {
        await write(socket, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: eco\r\n\r\n');
      }, { pauseFirst: () => app.waitFor('stopped', HANG_BOUND_MS) });
      const head = r.bytes.indexOf('\r\n\r\n') + 4;
      return { ended: r.ended, head: r.bytes.subarray(0, head).toString(), bodyBytes: r.bytes.length - head, tail: r.bytes.subarray(-3).toString() };
    },
    normalize(result) {
      // How much the kernel took before write() said no varies; the client must get all of it.
      const total = result.app.find((e) => e[0] === 'total')?.[1];
      return {
        ...result,
        client: { ...result.client, bodyBytes: result.client.bodyBytes === total + 3 ? 'all written + END' : result.client.bodyBytes },
        app: result.app.filter((e) => e[0] !== 'total').map((e) => (e[0] === 'then' ? [e[0], e[1], e[2] === 0 ? 0 : 'not 0'] : e)),
      };
    },
    check({ client, app }) {
      assert.equal(client.bodyBytes, 'all written + END');
      assert.equal(client.tail, 'END');
      assert.deepEqual(app.find((e) => e[0] === 'stopped')[1], {
        writeReturnedFalse: true, writableLengthPositive: true, pastHighWaterMark: true, needDrain: true,
      });
      assert.deepEqual(app.find((e) => e[0] === 'then'), ['then', 'drain', 0]);
    },
  });
}

// ---------------------------------------------------------------------------
// socket.io

const TRANSPORTS = {
  polling: { transports: ['polling'], upgrade: false },
  websocket: { transports: ['websocket'] },
  upgrade: { transports: ['polling', 'websocket'] },
};

/** One socket.io client session; resolves with what the client saw. */
async function session(app, tag) {
  const client = io(`http://127.0.0.1:${app.port}`, {
    ...TRANSPORTS[tag], query: { tag }, forceNew: true, reconnection: false,
  });
  app.onStop(() => client.disconnect());
  const seen = [];
  const hello = new Promise((resolve) => client.once('hello', (data, ack) => {
    seen.push(['hello', data]);
    ack(`hi from ${tag}`);
    resolve();
  }));
  await Promise.race([
    new Promise((resolve, reject) => {
      client.once('connect', resolve);
      client.once('connect_error', (err) => reject(err));
    }),
    bound('no connect'),
  ]);
  await Promise.race([hello, bound()]);
  if (tag === 'upgrade' && client.io.engine.transport.name !== 'websocket') {
    await Promise.race([new Promise((resolve) => client.io.engine.once('upgrade', resolve)), bound()]);
  }
  seen.push(['transport', client.io.engine.transport.name]);
  seen.push(['echo', await client.timeout(HANG_BOUND_MS).emitWithAck('echo', { n: 1, s: 'ü' }).catch((e) => e.message)]);
  const buf = Buffer.alloc(200 * 1024, 7);
  seen.push(['binary', await client.timeout(HANG_BOUND_MS).emitWithAck('binary', buf).catch((e) => e.message)]);
  const disconnected = new Promise((resolve) => client.once('disconnect', resolve));
  client.disconnect();
  seen.push(['disconnect', await disconnected]);
  await app.waitFor('disconnect', HANG_BOUND_MS);
  return seen;
}

threeWay('socket.io: polling, websocket, and polling upgraded to websocket', {
  fixture: 'socket-io.js',
  async exercise(app) {
    const out = {};
    for (const tag of Object.keys(TRANSPORTS)) {
      out[tag] = { client: await session(app, tag), app: await app.take() };
    }
    return out;
  },
  normalize(result) {
    // The ack of 'hello' and the transport upgrade race each other (on node:http too): the
    // app's records of a session compare as a set.
    const client = {};
    for (const [tag, s] of Object.entries(result.client)) {
      client[tag] = { ...s, app: s.app.map((e) => JSON.stringify(e)).sort().map((e) => JSON.parse(e)) };
    }
    return { ...result, client };
  },
  check({ client, close }) {
    for (const tag of Object.keys(TRANSPORTS)) {
      assert.deepEqual(client[tag].client, [
        ['hello', { tag }],
        ['transport', tag === 'polling' ? 'polling' : 'websocket'],
        ['echo', { echoed: { n: 1, s: 'ü' } }],
        ['binary', 204800],
        ['disconnect', 'io client disconnect'],
      ], tag);
      assert.ok(client[tag].app.some((e) => e[0] === 'disconnect' && e[2] === 'client namespace disconnect'), tag);
    }
    assert.deepEqual(close, { closed: 'closed', listening: false });
  },
});
