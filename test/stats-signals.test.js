'use strict';
// FAST_HTTP_STATS writes its line when a server is stopped by SIGINT / SIGTERM / SIGHUP, and
// what the signal does stays what it is without fast-http's listener: a process with no
// listener of its own dies by the signal (same exit as without FAST_HTTP_STATS), one with
// its own listeners keeps running as its listeners decide and writes the line once, at
// exit. Without FAST_HTTP_STATS no signal listener is added.
const { describe, it, before, after } = require('node:test');
const { getBody } = require('./helpers/get-body');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const APP = path.join(__dirname, 'fixtures', 'stats-signals', 'app.js');
const REGISTER = path.resolve(__dirname, '..', 'lib', 'register.js');
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
// Bounds only, never expectations: generous for a loaded 2-core box.
const CHILD_BOUND_MS = 30_000;
const TEST_TIMEOUT_MS = 60_000;

let tmp;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stats-signals-'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

let runs = 0;
/** Starts the fixture in `mode`; FAST_HTTP_STATS is set when `withStats`. */
async function start(mode, withStats) {
  const statsFile = withStats ? path.join(tmp, `stats-${++runs}.jsonl`) : null;
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  delete env.NODE_OPTIONS;
  delete env.FAST_HTTP_STATS;
  if (statsFile) env.FAST_HTTP_STATS = statsFile;
  const preload = mode === 'once-first' ? [] : ['-r', REGISTER];
  const child = spawn(process.execPath, [...preload, APP, mode], {
    env, stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const bound = setTimeout(() => child.kill('SIGKILL'), CHILD_BOUND_MS);
  exited.then(() => clearTimeout(bound));

  // Lines the app printed, taken in order by nextLine().
  const lines = [];
  const waiting = [];
  const rl = readline.createInterface({ input: child.stdout });
  rl.on('line', (line) => {
    const value = JSON.parse(line);
    if (waiting.length > 0) waiting.shift().resolve(value);
    else lines.push(value);
  });
  rl.on('close', () => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the app ended; stderr:\n${stderr}`));
  });
  const nextLine = () => (lines.length > 0 ? Promise.resolve(lines.shift())
    : new Promise((resolve, reject) => waiting.push({ resolve, reject })));

  const ready = await nextLine();
  return {
    child,
    ready,
    nextLine,
    exited,
    stderr: () => stderr,
    stats: () => (statsFile && fs.existsSync(statsFile)
      ? fs.readFileSync(statsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
      : []),
  };
}


/** Serves one request, sends `signal`; resolves with how the app exited and its stats. */
async function signalWithoutHandler(signal, withStats) {
  const app = await start('none', withStats);
  try {
    assert.equal(await getBody(app.ready.port), 'ok');
    app.child.kill(signal);
    return { exit: await app.exited, stats: app.stats(), stderr: app.stderr() };
  } finally {
    app.child.kill('SIGKILL');
  }
}

/** Serves, sends `signal` (handled by the app), serves again, ends stdin. */
async function signalWithHandler(mode, signal, withStats) {
  const app = await start(mode, withStats);
  try {
    assert.equal(await getBody(app.ready.port), 'ok');
    app.child.kill(signal);
    assert.deepEqual(await app.nextLine(), { handled: signal });
    // Still running and serving after its listener ran; nothing written yet.
    assert.equal(await getBody(app.ready.port), 'ok');
    const statsBeforeExit = app.stats();
    app.child.stdin.end();
    return { exit: await app.exited, statsBeforeExit, stats: app.stats(), stderr: app.stderr() };
  } finally {
    app.child.kill('SIGKILL');
  }
}

function assertOneLine(stats, requests, why) {
  assert.equal(stats.length, 1, why);
  assert.equal(stats[0].serversCreated, 1, why);
  assert.equal(stats[0].requestsDispatched, requests, why);
}

describe('FAST_HTTP_STATS and signals', () => {
  for (const signal of SIGNALS) {
    it(`${signal}, no listener of the app's: it dies by ${signal} as without FAST_HTTP_STATS, ` +
      'and the line is written', { timeout: TEST_TIMEOUT_MS }, async () => {
      const without = await signalWithoutHandler(signal, false);
      assert.deepEqual(without.exit, { code: null, signal }, without.stderr);
      const withStats = await signalWithoutHandler(signal, true);
      assert.deepEqual(withStats.exit, without.exit, withStats.stderr);
      assertOneLine(withStats.stats, 1, withStats.stderr);
    });

    for (const mode of ['handler', 'once-first']) {
      const what = mode === 'handler' ? 'process.on listeners'
        : 'process.once listeners added before fast-http loads';
      it(`${signal}, the app has ${what}: they run, it keeps serving, exits as it decides, ` +
        'one line at exit', { timeout: TEST_TIMEOUT_MS }, async () => {
        const without = await signalWithHandler(mode, signal, false);
        assert.deepEqual(without.exit, { code: 0, signal: null }, without.stderr);
        const withStats = await signalWithHandler(mode, signal, true);
        assert.deepEqual(withStats.exit, without.exit, withStats.stderr);
        assert.deepEqual(withStats.statsBeforeExit, []);
        assertOneLine(withStats.stats, 2, withStats.stderr);
      });
    }
  }

  it('without FAST_HTTP_STATS no signal listener is added', { timeout: TEST_TIMEOUT_MS }, async () => {
    for (const withStats of [false, true]) {
      const app = await start('none', withStats);
      app.child.stdin.end();
      const exit = await app.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, app.stderr());
      const n = withStats ? 1 : 0;
      assert.deepEqual(app.ready.listeners, { SIGINT: n, SIGTERM: n, SIGHUP: n });
    }
  });
});
