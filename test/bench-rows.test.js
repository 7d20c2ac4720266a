'use strict';
// The bench's rows of issue #34 (items 4, 6 and 7), without timing anything: the realistic
// row's app serves the bytes its proof expects and answers the runner's GC question; every
// framework app starts on fast-http through `-r fast-http/register` (and refuses to be measured
// as fast-http when it is node:http's); the GC logs of Deno (V8) and Bun (JavaScriptCore) are
// read as pauses; the runner's --help names the new servers, rows and options; a runtime that
// is not there is reported, not fetched, under --no-install.
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');

const { exchange, verify } = require('../bench/lib/http-check');
const { workloads } = require('../bench/lib/workloads');
const { v8Line, jscLine, gcLog } = require('../bench/lib/gc-log');
const { ensureRuntime, RUNTIMES } = require('../bench/lib/runtimes');
const run = require('../bench/run');
const app = require('../bench/realistic');

const root = path.join(__dirname, '..');
const servers = path.join(root, 'bench', 'servers');
const TIMEOUT = 60_000;
// A small heap: the app is the same, the test does not need 150 MB. The proof reads it from the
// environment too, as in bench/run.js.
const HEAP_MB = 2;
process.env.BENCH_LIVE_HEAP_MB = String(HEAP_MB);

const workload = (name) => workloads.find((w) => w.name === name);

/**
 * Starts a bench server (`args` after node's own, or `cmd` and its `args`) the way
 * bench/run.js does; resolves with { port, child, lines } once it printed READY, rejects with
 * its output if it exits first.
 */
function startServer(args, env = {}, cmd = process.execPath) {
  const child = spawn(cmd, args, {
    cwd: path.join(root, 'bench'),
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const lines = [];
  child.stdout.on('data', (d) => {
    out += d;
    let nl;
    while ((nl = out.indexOf('\n')) !== -1) {
      lines.push(out.slice(0, nl));
      out = out.slice(nl + 1);
      child.emit('line', lines[lines.length - 1]);
    }
  });
  child.stderr.on('data', (d) => { err += d; });
  return new Promise((resolve, reject) => {
    const onLine = (line) => {
      const m = /^READY (\d+)$/.exec(line);
      if (!m) return;
      child.off('line', onLine);
      resolve({ port: Number(m[1]), child, lines });
    };
    child.on('line', onLine);
    child.on('exit', (code) => reject(Object.assign(new Error(`exited ${code}: ${err}`), { stderr: err, code })));
  });
}

/** Closes the server's stdin (how the runner stops it) and waits for it to exit. */
function stop(child) {
  if (child.exitCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin.end();
  return exited;
}

/** The workload's proof against a running server: [] when every response is right. */
async function proofProblems(w, port) {
  const responses = await exchange(port, w.proof.requests(port), { pipelined: !!w.proof.pipelined });
  return responses.flatMap((res) => verify(res, w.proof.expect));
}

test('V8 --trace-gc lines (Node and Deno formats) are read as main-thread pauses', () => {
  assert.deepEqual(v8Line('[28413:0x27f47c00]       47 ms: Scavenge 4.9 (6.2) -> 4.8 (8.5) MB, 0.92 / 0.00 ms  ' +
    '(average mu = 1.000, current mu = 1.000) allocation failure; '), { ms: 0.92, count: 1 });
  assert.deepEqual(v8Line('[28914:0x5555ad774000]      178 ms: Scavenge (during sweeping) 48.9 (66.0) -> 41.7 ' +
    '(70.7) MB, pooled: 0.0 MB, 13.97 / 0.00 ms (average mu = 0.979, current mu = 0.979) allocation failure; '),
  { ms: 13.97, count: 1 });
  // A mark-compact's pause, without its incremental steps (perf_hooks does not count them either).
  assert.deepEqual(v8Line('[28914:0x5555ad774000]      218 ms: Incremental Mark-Compact 86.8 (104.0) -> 8.1 ' +
    '(49.7) MB, pooled: 41.8 MB, 8.83 / 0.00 ms (+ 0.4 ms in 3 steps since start of marking, biggest step 0.2 ms, ' +
    'walltime since start of marking 13 ms) (average mu = 0.946, current mu = 0.889) allocation failure'),
  { ms: 8.83, count: 1 });
  assert.equal(v8Line('READY 4000'), null);
  assert.equal(v8Line('{"user":{"id":1,"name":"x MB, 1 / 2 ms"}}'), null);
});

test("JavaScriptCore's logGC lines (Bun) are read as the sum of their phases' pauses", () => {
  assert.deepEqual(jscLine('[GC<0x4233cd9c118>: START M 9099kb => EdenCollection, a=0kb hf=0.000 mu=0.600 v=0kb ' +
    '(C:0 M:0 P1:0) o=0 b=0 i#1:N<CsMsrShDMsm(0)SrbBcs> 37+0 p=3.186752ms (max 3.186752)...]'),
  { ms: 3.186752, count: 1 });
  assert.deepEqual(jscLine('[GC<0x4233cd9c118>: M a=434kb hf=0.132 i#2:N<WsOJw>Pbc 0+2 v=8260kb => 9265kb, ' +
    'p=0.699959ms (max 3.186752), cycle 10.376856ms END]'), { ms: 0.699959, count: 0 });
  assert.equal(jscLine('[GC<0x4233cd9c118>: epilogue 0.018457ms]'), null);
  assert.equal(jscLine('GC END!'), null);
});

test('a GC log split anywhere between chunks adds up to the same totals', () => {
  const text = [
    '[1:0x1]  5 ms: Scavenge 1.0 (2.0) -> 1.0 (3.0) MB, 1.50 / 0.00 ms  (average mu = 1.000) allocation failure;',
    'READY 3000',
    '[1:0x1]  9 ms: Mark-Compact 9.0 (12.0) -> 4.0 (12.0) MB, 2.25 / 0.00 ms  (average mu = 1.000) finalize;',
    '',
  ].join('\n');
  for (let cut = 0; cut <= text.length; cut += 7) {
    const log = gcLog('v8');
    log.feed(text.slice(0, cut));
    log.feed(text.slice(cut));
    assert.deepEqual({ ...log.totals }, { ms: 3.75, count: 2 }, `cut at ${cut}`);
  }
});

test('the realistic app: one user, its 6 related users and 8 orders, ~1 KB of JSON, the same on every call', () => {
  const count = app.recordCount(150);
  assert.equal(count, Math.round(150e6 / app.BYTES_PER_RECORD));
  const get = (id) => app.makeRecord(id, count);
  const body = app.render(42, get);
  assert.equal(body, app.render(42, get));
  const reply = JSON.parse(body);
  assert.equal(reply.user.id, 42);
  assert.equal(reply.friends.length, 6);
  assert.equal(reply.orders.length, 8);
  assert.ok(body.length > 900 && body.length < 1300, `${body.length} bytes`);
  for (const f of reply.friends) assert.ok(f.id >= 1 && f.id <= count);
  assert.equal(app.render(count + 1, (id) => (id <= count ? get(id) : undefined)), null);
  assert.equal(app.idFromPath('/user/7'), 7);
  assert.ok(Number.isNaN(app.idFromPath('/')));
});

test('the realistic row on node:http: the proof passes, unknown users are 404, the runner can ask for GC totals', {
  timeout: TIMEOUT,
}, async () => {
  const { port, child, lines } = await startServer([path.join(servers, 'node-http.js'), 'realistic', '0'],
    { BENCH_GC: 'perf_hooks' });
  try {
    assert.deepEqual(await proofProblems(workload('realistic'), port), []);
    const [missing] = await exchange(port, [`GET /user/0 HTTP/1.1\r\nHost: x\r\n\r\n`]);
    assert.equal(missing.status, 404);
    const answer = new Promise((resolve) => child.on('line', (l) => { if (l.startsWith('GC ')) resolve(l); }));
    child.stdin.write('gc\n');
    const [, ms, count] = (await answer).split(' ');
    assert.ok(Number(ms) >= 0 && Number.isInteger(Number(count)), `${ms} ${count}`);
    assert.ok(lines.some((l) => l.startsWith('READY ')));
  } finally {
    await stop(child);
  }
});

test('every framework app starts on fast-http through -r fast-http/register and passes its proof', {
  timeout: TIMEOUT * 2,
}, async () => {
  const register = require.resolve('fast-http-native/register');
  for (const w of workloads.filter((x) => x.framework)) {
    const { port, child } = await startServer(['-r', register, path.join(servers, 'framework.js'), w.name, '0'],
      { BENCH_EXPECT_FAST_HTTP: root });
    try {
      assert.deepEqual(await proofProblems(w, port), [], w.name);
    } finally {
      await stop(child);
    }
  }
});

test('a framework app that is not on fast-http is not measured as fast-http', { timeout: TIMEOUT }, async () => {
  await assert.rejects(startServer([path.join(servers, 'framework.js'), 'koa', '0'], { BENCH_EXPECT_FAST_HTTP: root }),
    (err) => err.code === 1 && /node:http's, not fast-http's/.test(err.stderr));
});

// Bun and Deno are fetched by a bench run, not by npm install: where a run has fetched them
// (.cache/bench-deps/), their rows start as a run starts them, pass their proofs and exit when
// the runner closes their stdin; elsewhere these tests are skipped.
for (const id of ['bun', 'deno', 'deno-serve']) {
  const s = run.SERVERS[id];
  const rt = ensureRuntime(s.runtime, { prefix: run.UWS_PREFIX, install: false, note: () => {} });
  const rows = ['hello', 'https-hello', 'realistic', ...(id === 'deno-serve' ? [] : ['express4'])];
  test(`${s.label}: ${rows.join(', ')} start as a run starts them and pass their proofs`, {
    skip: rt.error, timeout: TIMEOUT,
  }, async () => {
    const opts = { liveHeapMb: HEAP_MB, runtimes: { [s.runtime]: rt } };
    for (const name of rows) {
      const w = workload(name);
      assert.equal(run.cannotRun(s, w), null);
      const { cmd, args, env } = run.serverCommand(s, w, 0, opts);
      const { port, child } = await startServer(args, env, cmd);
      try {
        const responses = await exchange(port, w.proof.requests(port), { tls: w.proof.tls });
        assert.deepEqual(responses.flatMap((res) => verify(res, w.proof.expect)), [], `${id} ${name}`);
      } finally {
        await stop(child);
      }
    }
  });
}

test('--help names the new servers, rows and options', { timeout: TIMEOUT }, () => {
  const r = spawnSync(process.execPath, [path.join(root, 'bench', 'run.js'), '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  for (const s of ['bun', 'deno', 'deno-serve', '--live-heap-mb', 'https-pipeline', 'express4', 'express5', 'fastify',
    'koa', 'hono', 'realistic', 'frameworks', '--mem-settle']) {
    assert.ok(r.stdout.includes(s), `--help mentions ${s}:\n${r.stdout}`);
  }
  const bad = spawnSync(process.execPath, [path.join(root, 'bench', 'run.js'), '--servers', 'fast,bogus'],
    { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown server "bogus" \(known: .*bun, deno, deno-serve/);
});

test('a missing Bun or Deno is reported, not fetched, under --no-install', { timeout: TIMEOUT }, () => {
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-bench-rt-'));
  const saved = { bun: process.env.BENCH_BUN, deno: process.env.BENCH_DENO };
  delete process.env.BENCH_BUN;
  delete process.env.BENCH_DENO;
  try {
    const notes = [];
    for (const name of Object.keys(RUNTIMES)) {
      const r = ensureRuntime(name, { prefix, install: false, note: (t) => notes.push(t) });
      assert.match(r.error, new RegExp(`${RUNTIMES[name].pkg}@${RUNTIMES[name].version}.*--no-install`));
    }
    assert.deepEqual(notes, []);
    assert.deepEqual(fs.readdirSync(prefix), []);
    process.env.BENCH_BUN = path.join(prefix, 'no-such-bun');
    assert.match(ensureRuntime('bun', { prefix, install: true, note: () => {} }).error, /BENCH_BUN=.* does not run/);
  } finally {
    for (const [name, v] of Object.entries(saved)) {
      const key = `BENCH_${name.toUpperCase()}`;
      if (v === undefined) delete process.env[key];
      else process.env[key] = v;
    }
    fs.rmSync(prefix, { recursive: true, force: true });
  }
});
