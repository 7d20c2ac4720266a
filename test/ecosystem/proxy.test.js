'use strict';
// http-proxy on node:http vs fast-http, forwarding to a backend on the same implementation
// and to a node:http one: HTTP requests, and a proxied WebSocket that the client closes
// first (cleanly, and by dropping the connection). Both legs must close and both servers'
// close() must call back.
const assert = require('node:assert/strict');
const http = require('node:http');
const WebSocket = require('ws');
const {
  threeWay, request, maskResponse, bound, HANG_BOUND_MS,
} = require('./helpers/three-way');
const { startBackend } = require('./fixtures/proxy-backend');
const { closeServer } = require('./helpers/fixture-kit');

const WS_CLOSE_RECORDS = ['proxy-client-socket-close', 'proxy-backend-socket-close', 'backend-ws-close', 'backend-socket-close'];

/** Echo round trips through the proxy, then the client closes `how`. */
async function proxiedWebSocket(app, how, backend) {
  const ws = new WebSocket(`ws://127.0.0.1:${app.port}/ws`, { perMessageDeflate: false });
  app.onStop(() => ws.terminate());
  const seen = [];
  ws.on('message', (d) => seen.push(String(d)));
  const closed = new Promise((resolve) => ws.once('close', (code) => resolve(code)));
  const opened = await Promise.race([
    new Promise((resolve) => {
      ws.once('open', () => resolve('open'));
      ws.once('error', (e) => resolve(`error ${e.message}`));
    }),
    bound('no open'),
  ]);
  if (opened !== 'open') return { opened };
  for (const m of ['a', 'b', 'c']) {
    const got = new Promise((resolve) => ws.once('message', resolve));
    ws.send(m);
    await Promise.race([got, bound()]);
  }
  if (how === 'close') ws.close(1000, 'bye');
  else ws.terminate();
  const closeCode = await Promise.race([closed, bound('no close')]);
  // Every leg reports its close (or the bound ends the wait; the comparison shows it).
  const deadline = Date.now() + HANG_BOUND_MS;
  for (const name of WS_CLOSE_RECORDS) {
    const left = Math.max(0, deadline - Date.now());
    if (backend && name.startsWith('backend')) await backend.waitFor(name, left);
    else await app.waitFor(name, left);
  }
  return { opened, seen, closeCode };
}

/** A node:http backend in this process, with the fixture's record/waitFor interface. */
async function nodeBackend() {
  const records = [];
  const backend = await startBackend(http, (...e) => records.push(e));
  backend.records = records;
  backend.waitFor = async (name, left) => {
    const deadline = Date.now() + left;
    while (!records.some((e) => e[0] === name) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return backend;
}

/** Records of a WebSocket phase, in an order that does not depend on which leg closed first. */
function sorted(records) {
  return records.map((e) => JSON.stringify(e)).sort().map((e) => JSON.parse(e));
}

const HTTP_REQUESTS = [
  { path: '/hello' },
  { method: 'POST', path: '/echo', body: '{"x":1}', headers: { 'content-type': 'application/json' } },
  { path: '/big', bodyAs: 'digest' },
  { path: '/chunked' },
  { path: '/missing' },
];

for (const backendKind of ['same', 'node']) {
  let external = null;
  threeWay(`http-proxy to a ${backendKind === 'same' ? 'backend on the same implementation' : 'node:http backend'}: HTTP and a WebSocket the client closes`, {
    fixture: 'http-proxy.js',
    async options() {
      if (backendKind === 'same') return {};
      external = await nodeBackend();
      return { target: external.port };
    },
    async exercise(app) {
      const out = { http: [] };
      for (const r of HTTP_REQUESTS) out.http.push({ label: r.path, ...maskResponse(await request(app.port, r)) });
      out.httpRecords = await app.take();
      for (const how of ['close', 'terminate']) {
        out[how] = await proxiedWebSocket(app, how, external);
        out[`${how}Records`] = sorted([...(await app.take()), ...(external ? external.records.splice(0) : [])]);
      }
      if (external) {
        out.externalClose = await closeServer(external.server);
        external = null;
      }
      return out;
    },
    check({ client, close }) {
      assert.equal(client.http[0].body, 'hello from the backend');
      assert.equal(client.http[2].body.split(':')[0], String(1024 * 1024));
      assert.deepEqual(client.close, { opened: 'open', seen: ['echo a', 'echo b', 'echo c'], closeCode: 1000 });
      assert.deepEqual(client.terminate, { opened: 'open', seen: ['echo a', 'echo b', 'echo c'], closeCode: 1006 });
      for (const how of ['close', 'terminate']) {
        for (const name of WS_CLOSE_RECORDS) {
          assert.ok(client[`${how}Records`].some((e) => e[0] === name), `${how}: ${name}`);
        }
      }
      assert.equal(close.proxy.calledBack, true);
      if (backendKind === 'same') assert.equal(close.backend.calledBack, true);
      else assert.equal(client.externalClose.calledBack, true);
    },
  });
}
