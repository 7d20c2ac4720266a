'use strict';
// lib/internal/tick-with.js: nextTickWith(fn, arg) must run where process.nextTick(fn, arg)
// would, between the app's own ticks, in the tick's async context, and keep its order when
// one of its callbacks throws.
const { test } = require('node:test');
const assert = require('node:assert');
const { AsyncLocalStorage } = require('node:async_hooks');
const { spawnSync } = require('node:child_process');
const { nextTickWith } = require('../lib/internal/tick-with');

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('interleaves with process.nextTick as process.nextTick(fn, arg) does', { timeout: 10000 }, async () => {
  const order = [];
  const seen = (tag) => order.push(tag);
  process.nextTick(seen, 'app-1');
  nextTickWith(seen, 'with-1');
  process.nextTick(() => {
    order.push('app-2');
    nextTickWith(seen, 'with-3');
    process.nextTick(seen, 'app-4');
  });
  nextTickWith((arg) => {
    order.push(arg);
    process.nextTick(seen, 'app-3');
    nextTickWith(seen, 'with-4');
  }, 'with-2');
  await settle();
  assert.deepStrictEqual(order,
    ['app-1', 'with-1', 'app-2', 'with-2', 'with-3', 'app-4', 'app-3', 'with-4']);
});

test('runs in the async context it was queued in', { timeout: 10000 }, async () => {
  const als = new AsyncLocalStorage();
  const got = [];
  als.run('a', () => nextTickWith((arg) => got.push([arg, als.getStore()]), 1));
  als.run('b', () => nextTickWith((arg) => got.push([arg, als.getStore()]), 2));
  await settle();
  assert.deepStrictEqual(got, [[1, 'a'], [2, 'b']]);
});

test('a throwing callback leaves the later ones their own arguments', { timeout: 20000 }, () => {
  // In a child: node:test reports an uncaught exception as the test's failure.
  const script = `
    const { nextTickWith } = require(${JSON.stringify(require.resolve('../lib/internal/tick-with'))});
    const got = [];
    const errors = [];
    process.on('uncaughtException', (err) => errors.push(err.message));
    nextTickWith((arg) => { throw new Error('boom ' + arg); }, 1);
    for (let i = 0; i < 5000; i++) nextTickWith((arg) => got.push(arg), 2 + i);
    setImmediate(() => setImmediate(() => {
      console.log(JSON.stringify({ errors, n: got.length, inOrder: got.every((v, i) => v === i + 2) }));
    }));
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 15000 });
  assert.strictEqual(r.status, 0, r.stderr);
  assert.deepStrictEqual(JSON.parse(r.stdout), { errors: ['boom 1'], n: 5000, inOrder: true });
});
