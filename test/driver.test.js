'use strict';
// The two drivers (docs/diagnostics.md, FAST_HTTP_DRIVER): which one the addon takes, what
// forcing each does, and that clients see from both what they see from node:http (many
// connections' sends in one batch, pipelining, a paused upload, a FIN that comes with its
// request, a peer gone mid-body). `npm test` runs every other test with each driver too.
const { test } = require('node:test');
const assert = require('node:assert');
const { execFile } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const scenarios = path.join(__dirname, 'fixtures', 'driver-scenarios.js');

function run(args, driver) {
  const env = { ...process.env };
  delete env.FAST_HTTP_DRIVER;
  if (driver) env.FAST_HTTP_DRIVER = driver;
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: root, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ status: err ? (err.code ?? 1) : 0, stdout, stderr });
    });
  });
}

const chosen = (driver) => run(['-e',
  "require('.'); process.stdout.write(String(require('./lib/internal/native').binding.stats()[4]))"], driver);

test('the addon takes io_uring where the kernel offers it, epoll otherwise, and either when forced',
  { timeout: 60_000 }, async () => {
    const free = await chosen();
    assert.equal(free.status, 0, free.stderr);
    assert.ok(['io_uring', 'epoll'].includes(free.stdout), free.stdout);
    const epoll = await chosen('epoll');
    assert.equal(epoll.stdout, 'epoll');
    const uring = await chosen('io_uring');
    if (free.stdout === 'io_uring') {
      assert.equal(uring.stdout, 'io_uring');
    } else {
      // Forced where it is not offered: the app hears why at require().
      assert.notEqual(uring.status, 0);
      assert.match(uring.stderr, /ERR_FAST_HTTP_INIT/);
      assert.match(uring.stderr, /io_uring is not usable here/);
    }
    const bogus = await chosen('kqueue');
    assert.notEqual(bogus.status, 0);
    assert.match(bogus.stderr, /FAST_HTTP_DRIVER=kqueue: the drivers are epoll and io_uring/);
  });

test('clients see from both drivers what they see from node:http', { timeout: 120_000 }, async () => {
  const offered = (await chosen()).stdout;
  const node = await run([scenarios, 'node']);
  assert.equal(node.status, 0, node.stderr);
  const [expected] = node.stdout.split('\n');
  const parsed = JSON.parse(expected);
  // The scenarios see what they are meant to on node:http itself.
  assert.ok(parsed.concurrent.every(([n, last]) => n === 3 && last));
  assert.equal((parsed.pipelined.match(/HTTP\/1\.1 200 OK/g) || []).length, 40);
  assert.match(parsed.upload, /^3145728 [0-9a-f]{64}$/);
  assert.match(parsed.halfClose, /\r\n\r\nlate$/);
  for (const driver of ['epoll', 'io_uring']) {
    if (driver === 'io_uring' && offered !== 'io_uring') continue;
    const fast = await run([scenarios, 'fast'], driver);
    assert.equal(fast.status, 0, fast.stderr);
    const [got, ran] = fast.stdout.split('\n');
    assert.equal(ran, driver);
    assert.deepEqual(JSON.parse(got), parsed, driver);
  }
});
