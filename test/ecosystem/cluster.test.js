'use strict';
// node:cluster with two workers on node:http vs fast-http, on a fixed port and on port 0:
// both workers listen on one port and both get connections.
const assert = require('node:assert/strict');
const { threeWay, request, freePort } = require('./helpers/three-way');

/** Fresh connections until both workers answered (or a bounded number of tries). */
async function workersReached(port) {
  const seen = new Set();
  const errors = new Set();
  for (let i = 0; i < 100 && seen.size < 2 && port; i++) {
    const res = await request(port, {});
    if (res.error) errors.add(res.error);
    else seen.add(res.body);
  }
  return { workers: [...seen].sort(), errors: [...errors].sort() };
}

for (const fixed of [true, false]) {
  threeWay(`cluster: two workers on ${fixed ? 'a fixed port' : 'port 0'}`, {
    fixture: 'cluster.js',
    options: async () => ({ port: fixed ? await freePort() : 0 }),
    exercise: (app) => workersReached(app.port),
    check({ client, app }) {
      assert.deepEqual(app, [['workers', ['listening on the shared port', 'listening on the shared port']]]);
      assert.deepEqual(client, { workers: ['worker 1', 'worker 2'], errors: [] });
    },
  });
}
