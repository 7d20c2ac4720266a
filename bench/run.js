#!/usr/bin/env node
'use strict';

// Side-by-side benchmark: fast-http vs node:http, with uWebSockets.js, Bun's and Deno's
// node:http and Deno.serve as anchors. See bench/README.md for how to read the output.
//
// Method, and why:
// - Every server is a child process, pinned to CPU 0: the Node servers run the same Node
//   binary (process.execPath), Bun and Deno rows run the same server files on their runtime
//   (bench/lib/runtimes.js); wrk (and the memory client) is pinned to CPU 1. On a 2-core box
//   that keeps the load generator from stealing the server's core, and makes "server CPU per
//   request" a clean number: it is the server process's own user+sys time.
// - Each server proves its output (status, headers, body, framing,
//   keep-alive) with a raw socket before it is timed; a wrong answer aborts
//   that row instead of producing a fast-but-meaningless number.
// - Warm-up first (JIT, allocator, socket buffers), then rounds alternate
//   servers A B C A B C ... so drift (thermal, noisy neighbours) hits every
//   server alike; we report the median with min-max.
// - wrk's own CPU time per round is measured too (this process's reaped
//   children's time): a row where wrk used ~all of its core is bound by the
//   load generator, and says so, since its req/s then measures wrk.
//
// What a user sees: the expected run time before anything starts, one
// progress line that updates in place (a plain line per workload where stderr
// is not a terminal), then the table on stdout and the files (JSON, the chart,
// a Markdown table ready for a README) under the git-ignored bench/results/ or
// --out.

const path = require('node:path');
const os = require('node:os');
const fs = require('node:fs');
const net = require('node:net');
const { spawn, spawnSync } = require('node:child_process');

const { workloads } = require('./lib/workloads');
const { ensureRuntime } = require('./lib/runtimes');
const { gcLog } = require('./lib/gc-log');
const realistic = require('./realistic');
const { exchange, verify } = require('./lib/http-check');
const { wrkAvailable, runWrk } = require('./lib/wrk');
const { cpuMicros, childrenCpuMicros, rssBytes, hardNofile } = require('./lib/proc-stats');
const report = require('./lib/report');

const ROOT = path.join(__dirname, '..');
// Git-ignored: a run never changes a tracked file.
const RESULTS_DIR = path.join(__dirname, 'results');
// uWebSockets.js's authors publish it on GitHub only, not on npm: both packages below are
// unofficial republishes of its binaries by others, which the run says before installing.
const UWS_PKG = '@trufflesuite/uws-js-unofficial';
// The uws release that ships a binary for Node 20's ABI (115): uWebSockets.js v20.30.0.
const UWS_VERSION = '20.30.0-unofficial.0';
// For newer Nodes: a republish of uWebSockets.js binaries up to ABI 141 (Node 25); its Linux
// builds for Node 22+ need glibc 2.38, see bench/lib/uws-binary.js for the patched copy.
const UWSX_PKG = 'uwebsockets';
const UWSX_VERSION = '3.0.6';
// wrk's share of its core at or above which a row is bound by the load generator.
const CLIENT_BOUND = 0.9;
const UWS_PREFIX = path.join(ROOT, '.cache', 'bench-deps');
const UWS_PROBE = path.join(__dirname, 'lib', 'uws-binary.js');

const SERVER_DIR = path.join(__dirname, 'servers');
// `node -r fast-http/register app.js`, as apps use fast-http with a framework: this checkout's
// lib/register.js (what the package's "./register" export names).
const REGISTER = require.resolve('fast-http-native/register');
// Deno runs CommonJS only from .cjs files: every Deno row goes through this entry.
const DENO_ENTRY = path.join(SERVER_DIR, 'cjs-entry.cjs');

// Every server: its label (in https and framework rows too), the runtime it runs on, its
// server file, where its GC pauses come from in the rows that report them (perf_hooks entries
// on Node; the engine's GC log on Bun and Deno, bench/lib/gc-log.js), and which rows it cannot
// run (with the reason the table shows).
const SERVERS = {
  fast: {
    id: 'fast', label: 'fast-http', httpsLabel: 'fast-http https', frameworkLabel: 'fast-http (-r fast-http/register)',
    runtime: 'node', file: path.join(SERVER_DIR, 'fast-http.js'), gc: 'perf_hooks',
  },
  node: {
    id: 'node', label: 'node:http', httpsLabel: 'node:https', runtime: 'node',
    file: path.join(SERVER_DIR, 'node-http.js'), gc: 'perf_hooks',
  },
  uws: {
    id: 'uws', label: 'uWebSockets.js', httpsLabel: 'uWebSockets.js SSLApp', runtime: 'node',
    file: path.join(SERVER_DIR, 'uws.js'), gc: 'perf_hooks',
    cannot: { framework: "uWebSockets.js has its own API, not node:http's: these apps cannot run on it" },
  },
  bun: {
    id: 'bun', label: 'Bun node:http', httpsLabel: 'Bun node:https', runtime: 'bun',
    file: path.join(SERVER_DIR, 'node-http.js'), gc: 'jsc',
  },
  deno: {
    id: 'deno', label: 'Deno node:http', httpsLabel: 'Deno node:https', runtime: 'deno',
    file: path.join(SERVER_DIR, 'node-http.js'), gc: 'v8',
  },
  'deno-serve': {
    id: 'deno-serve', label: 'Deno.serve', httpsLabel: 'Deno.serve (TLS)', runtime: 'deno',
    file: path.join(SERVER_DIR, 'deno-serve.js'), gc: 'v8',
    cannot: { framework: "Deno.serve is Deno's own API; these apps' node:http servers run in the Deno node:http row" },
  },
};
// Deno's and Bun's caches: inside the git-ignored .cache/, not under $HOME.
const DENO_DIR = path.join(ROOT, '.cache', 'bench-deps', 'deno-dir');
const BUN_CACHE = path.join(ROOT, '.cache', 'bench-deps', 'bun-cache');

const DEFAULTS = {
  rounds: 5,
  // 3 s rounds + 1 s warm-up keep the full default run (3 servers, 7
  // workloads) under ~6 minutes; wrk only takes whole seconds. 1 s is
  // thousands of requests, plenty for V8 to optimize the hot path, and the
  // alternating rounds do not depend on it.
  duration: 3,
  warmup: 1,
  connections: 64,
  memConns: 5000,
  // 5,000, not more: uWebSockets.js closes an HTTP connection idle for 10 s (a compile-time
  // constant), and the pinned client needs ~1.3 ms per TLS handshake, so at 10,000 its first
  // connections are gone before the last are open (issue #34's table measured at 5,000 too).
  tlsIdleConns: 5000,
  liveHeapMb: realistic.DEFAULT_LIVE_HEAP_MB,
  // Seconds a memory sample waits before its baseline and again before its reading (0: 0.3 s
  // and 0.7 s). V8 grows its young generation while the connections open and gives it back
  // only when its memory reducer runs, some seconds after the heap stops growing: a longer
  // wait reads the steady state instead of that transient. uWebSockets.js closes connections
  // idle for 10 s, so its rows abort above that.
  memSettle: 0,
  // Everything issue #34's acceptance compares in one run. --servers fast,node is the short one.
  servers: 'fast,node,uws,bun,deno,deno-serve',
};

// --only's groups: the rows issue #34's acceptance reads together.
const GROUPS = {
  plain: workloads.filter((w) => !w.https && !w.framework && !w.realistic).map((w) => w.name),
  https: workloads.filter((w) => w.https).map((w) => w.name),
  frameworks: workloads.filter((w) => w.framework).map((w) => w.name),
};

/** `names` joined by commas on lines of at most `width` columns, indented by `indent`. */
function wrapList(names, indent, width) {
  const lines = [''];
  for (const n of names) {
    const last = lines.length - 1;
    const add = lines[last] ? `${lines[last]},${n}` : n;
    if (indent + add.length > width && lines[last]) lines.push(n);
    else lines[last] = add;
  }
  return lines.map((l, i) => `${' '.repeat(indent)}${l}${i < lines.length - 1 ? ',' : ''}`).join('\n');
}

const USAGE = `usage: node bench/run.js [options]
  --servers <list>      comma list of ${Object.keys(SERVERS).join(',')}
                        (default ${DEFAULTS.servers}: bun, deno
                        and deno-serve are Bun's node:http, Deno's node:http, Deno.serve)
  --only <list>         comma list of workloads, or of the groups ${Object.keys(GROUPS).join(', ')}:
${wrapList(workloads.map((w) => w.name), 24, 92)}
  --rounds <n>          measured rounds per server (default ${DEFAULTS.rounds}; use >= 5)
  --duration <s>        seconds per round, whole seconds (default ${DEFAULTS.duration})
  --warmup <s>          warm-up seconds per server and workload (default ${DEFAULTS.warmup})
  --connections <n>     wrk connections (default ${DEFAULTS.connections})
  --mem-conns <n>       idle connections for the memory workload (default ${DEFAULTS.memConns})
  --tls-idle-conns <n>  idle TLS connections for https-idle (default ${DEFAULTS.tlsIdleConns})
  --mem-settle <s>      memory rows: wait this long before the baseline and again before
                        the reading, for V8's steady state (default: 0.3 s and 0.7 s)
  --live-heap-mb <n>    the realistic row's live heap, MB of V8 heap (default ${DEFAULTS.liveHeapMb})
  --no-install          do not fetch what is missing: uWebSockets.js (an unofficial npm
                        republish: see bench/README.md), Bun and Deno (npm pack of
                        @oven/bun-linux-x64 and @deno/linux-x64-glibc)
  --out <dir>           write the results there instead of bench/results/ (git-ignored)
  --no-write            write no files
  --base <dir>          also run another fast-http checkout (built) as server "base", in the
                        same alternating rounds: an A/B of a change against the code before it
  -h, --help`;

function parseOptions(argv) {
  const o = { ...DEFAULTS, install: true, write: true, only: null, out: RESULTS_DIR };
  const num = (flag, v, min) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) die(`${flag} wants an integer >= ${min}, got "${v}"`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let val;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      val = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const value = () => (val !== undefined ? val : (i + 1 < argv.length ? argv[++i] : die(`${arg} needs a value`)));
    switch (arg) {
      case '--servers': o.servers = value(); break;
      case '--only': o.only = value(); break;
      case '--rounds': o.rounds = num(arg, value(), 1); break;
      case '--duration': o.duration = num(arg, value(), 1); break;
      case '--warmup': o.warmup = num(arg, value(), 0); break;
      case '--connections': o.connections = num(arg, value(), 1); break;
      case '--mem-conns': o.memConns = num(arg, value(), 1); break;
      case '--tls-idle-conns': o.tlsIdleConns = num(arg, value(), 1); break;
      case '--mem-settle': o.memSettle = num(arg, value(), 0); break;
      case '--live-heap-mb': o.liveHeapMb = num(arg, value(), 0); break;
      case '--no-install': o.install = false; break;
      case '--no-write': o.write = false; break;
      case '--out': o.out = path.resolve(value()); break;
      case '--base': o.base = path.resolve(value()); break;
      case '-h': case '--help': process.stdout.write(`${USAGE}\n`); process.exit(0); break;
      default: die(`unknown option ${arg}\n${USAGE}`);
    }
  }
  // The realistic row's proof and wrk script, in this process, read the heap size from here as
  // the servers do (bench/realistic.js).
  process.env.BENCH_LIVE_HEAP_MB = String(o.liveHeapMb);
  o.serverIds = [...new Set(o.servers.split(',').map((s) => s.trim()).filter(Boolean))];
  if (o.base) {
    SERVERS.base = {
      id: 'base', label: 'fast-http (base)', httpsLabel: 'fast-http https (base)', runtime: 'node', gc: 'perf_hooks',
      frameworkLabel: 'fast-http (base, -r register)', file: path.join(SERVER_DIR, 'fast-http-base.js'),
    };
    // The server child inherits it (bench/servers/fast-http-base.js).
    process.env.FAST_HTTP_BENCH_BASE = o.base;
    if (!o.serverIds.includes('base')) o.serverIds.splice(o.serverIds.indexOf('fast') + 1, 0, 'base');
  }
  for (const id of o.serverIds) if (!SERVERS[id]) die(`unknown server "${id}" (known: ${Object.keys(SERVERS).join(', ')})`);
  const names = workloads.map((w) => w.name);
  o.workloads = o.only ? [...new Set(o.only.split(',').map((s) => s.trim()).filter(Boolean)
    .flatMap((s) => GROUPS[s] || [s]))] : names;
  for (const w of o.workloads) if (!names.includes(w)) die(`unknown workload "${w}" (known: ${names.join(', ')})`);
  // Keep the documented order regardless of the order given.
  o.workloads = names.filter((n) => o.workloads.includes(n));
  return o;
}

function die(msg, code = 2) {
  process.stderr.write(`bench: ${msg}\n`);
  process.exit(code);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- progress

// What each part of a run takes, for the estimate said up front and the time left: a server's
// start and proof, the wall time around each wrk round (wrk's start, the 100 ms settle), a
// memory sample's fixed part, and opening each idle connection (a TLS one is a handshake on
// the pinned client's core). From runs on a 2-core VM; the time left is rescaled as the run goes.
// The realistic row's servers build their heap first (heapMb: seconds per MB of it).
const COST = { start: 0.6, round: 0.25, memSample: 1.5, conn: 0.0001, tlsConn: 0.0013, heapMb: 0.015 };

/** Estimated seconds of workload `w` on `n` servers. */
function estimate(w, n, opts) {
  if (w.memory) {
    const conns = w.https ? opts.tlsIdleConns : opts.memConns;
    return n * opts.rounds * (COST.memSample + opts.warmup + 2 * opts.memSettle +
      conns * (w.https ? COST.tlsConn : COST.conn));
  }
  const start = COST.start + (w.realistic ? opts.liveHeapMb * COST.heapMb : 0);
  return n * (start + opts.warmup + opts.rounds * (opts.duration + COST.round));
}

// One line, rewritten in place, where stderr is a terminal; elsewhere (a log, CI) a plain line
// per workload and nothing per round.
const progress = {
  planned: 0, done: 0, startedAt: Date.now(), step: 0, steps: 0, tty: !!process.stderr.isTTY, active: false,
  /** Seconds left: the estimate's rest, at the pace the run has had so far. */
  left() {
    const elapsed = (Date.now() - this.startedAt) / 1000;
    const pace = this.done > 5 ? elapsed / this.done : 1;
    return Math.max(0, this.planned - this.done) * pace;
  },
  show(text) {
    if (!this.tty) return;
    const pct = this.planned ? Math.min(99, Math.floor((100 * this.done) / this.planned)) : 0;
    const line = `bench [${String(pct).padStart(2)}%, about ${fmtDuration(this.left())} left] ${text}`;
    process.stderr.write(`\r\x1b[K${line.slice(0, (process.stderr.columns || 120) - 1)}`);
    this.active = true;
  },
  /** A workload begins: the one line on a terminal, a plain line elsewhere. */
  begin(text) {
    this.step++;
    const line = `[${this.step}/${this.steps}] ${text}`;
    if (this.tty) this.show(line);
    else process.stderr.write(`bench ${line} (about ${fmtDuration(this.left())} left)\n`);
  },
  advance(seconds) {
    this.done += seconds;
  },
  note(text) {
    this.clear();
    process.stderr.write(`${text}\n`);
  },
  clear() {
    if (this.tty && this.active) process.stderr.write('\r\x1b[K');
    this.active = false;
  },
};

function fmtDuration(s) {
  s = Math.max(0, Math.round(s));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

// ---------------------------------------------------------------- processes

const children = new Set();

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// Command prefix: pin to `cpu` and, when the inherited hard fd limit is too
// low for `nofile` descriptors, raise it with prlimit (needs root).
function wrapCommand(cmd, args, { cpu, nofile }) {
  let out = [cmd, ...args];
  if (cpu != null) out = ['taskset', '-c', String(cpu), ...out];
  if (nofile && hardNofile() < nofile) out = ['prlimit', `--nofile=${nofile}:${nofile}`, '--', ...out];
  return out;
}

/** Idle connections the memory-kind workload `name` holds open. */
const idleConns = (name, env) => (name === 'https-idle' ? env.tlsIdleConns : env.memConns);

/** Row label: the https rows compare https servers; fast-http runs the frameworks through register. */
const labelFor = (s, w) => (w.https ? s.httpsLabel : (w.framework && s.frameworkLabel) || s.label);

/** Why server `s` cannot run workload `w` (a "not available" row), or null. */
function cannotRun(s, w) {
  if (w.framework && s.cannot?.framework) return s.cannot.framework;
  return null;
}

/**
 * { cmd, args, env } that starts server `s` for workload `w` on `port`: the server file (the
 * framework app in the framework rows) on the server's runtime, with what the rows that report
 * GC time need for it.
 */
function serverCommand(s, w, port, opts) {
  const file = w.framework ? path.join(SERVER_DIR, 'framework.js') : s.file;
  const argv = [file, w.name, String(port)];
  const env = { ...process.env, BENCH_LIVE_HEAP_MB: String(opts.liveHeapMb) };
  if (s.runtime === 'node') {
    const pre = [];
    if (w.framework && (s.id === 'fast' || s.id === 'base')) {
      // The app is unchanged; fast-http comes in as apps bring it in, and the server checks
      // it really is fast-http's (bench/servers/framework.js).
      const pkg = s.id === 'base' ? opts.base : ROOT;
      pre.push('-r', s.id === 'base' ? path.join(pkg, 'lib', 'register.js') : REGISTER);
      env.BENCH_EXPECT_FAST_HTTP = pkg;
    }
    if (w.gc) env.BENCH_GC = 'perf_hooks';
    return { cmd: process.execPath, args: [...pre, ...argv], env };
  }
  const rt = opts.runtimes[s.runtime];
  if (s.runtime === 'bun') {
    // JavaScriptCore's GC log (stderr): Bun passes BUN_JSC_* to JSC's options.
    if (w.gc) env.BUN_JSC_logGC = '1';
    // node_modules as npm installed it (no auto-install), and nothing written to ~/.bun.
    env.BUN_INSTALL_CACHE_DIR = BUN_CACHE;
    env.BUN_RUNTIME_TRANSPILER_CACHE_PATH = '0';
    return { cmd: rt.bin, args: ['--no-install', ...argv], env };
  }
  // Deno: all permissions (network, env, files), node_modules as npm installed it (no install,
  // no lock file written into the checkout), its cache under .cache/.
  env.DENO_DIR = DENO_DIR;
  env.DENO_NO_UPDATE_CHECK = '1';
  const args = ['run', '-A', '--no-lock', '--node-modules-dir=manual', '--quiet'];
  if (w.gc) {
    // V8's GC trace goes to stdout through C stdio, which a pipe makes block-buffered: the
    // lines would arrive rounds late. stdbuf makes it line-buffered.
    args.push('--v8-flags=--trace-gc');
    return { cmd: 'stdbuf', args: ['-oL', rt.bin, ...args, DENO_ENTRY, ...argv], env };
  }
  return { cmd: rt.bin, args: [...args, DENO_ENTRY, ...argv], env };
}

// Start server `server` for workload `workload` (an entry of lib/workloads.js) as a child;
// resolves with { pid, port, stop(), gc() } once it printed "READY <port>", rejects with its
// stderr if it exits or stalls first, and with err.unavailable set if it printed
// "UNAVAILABLE <reason>" (no https in that server, for instance). gc() gives the server's GC
// pauses so far, { ms, count }, in the rows that report them.
async function startServer(server, workload, env, opts) {
  // The free port is picked before the server binds it, and another process on the machine can
  // take it in between (it happened to Bun's server once in a short run on the shared VM):
  // another port is tried then.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOn(await freePort(), server, workload, env, opts);
    } catch (err) {
      if (attempt >= 3 || err.unavailable || !/in use|EADDRINUSE|AddrInUse/i.test(err.message)) throw err;
    }
  }
}

async function startServerOn(port, server, workload, env, opts) {
  const { cmd: exe, args: exeArgs, env: childEnv } = serverCommand(server, workload, port, opts);
  const [cmd, ...args] = wrapCommand(exe, exeArgs, {
    cpu: env.serverCpu, nofile: workload.memory ? idleConns(workload.name, env) + 1024 : 0,
  });
  const child = spawn(cmd, args, { cwd: __dirname, stdio: ['pipe', 'pipe', 'pipe'], env: childEnv });
  children.add(child);
  let stderr = '';
  // The engine's GC log, where that is the GC source (bench/lib/gc-log.js).
  const log = workload.gc && server.gc !== 'perf_hooks' ? gcLog(server.gc === 'v8' ? 'v8' : 'jsc') : null;
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
    if (log && server.gc === 'jsc') log.feed(String(d));
  });
  if (log && server.gc === 'v8') child.stdout.on('data', (d) => log.feed(String(d)));
  const exited = new Promise((resolve) => child.on('exit', (code, sig) => {
    children.delete(child);
    resolve(sig || code);
  }));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    const t = setTimeout(() => child.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(t);
  };
  // A server that builds a live heap first (the realistic row) takes longer to be ready.
  const readyMs = 15000 + (workload.realistic ? opts.liveHeapMb * 400 : 0);
  const ready = await new Promise((resolve) => {
    let out = '';
    const timer = setTimeout(() => resolve({ error: `did not print READY within ${readyMs / 1000} s` }), readyMs);
    const onData = (d) => {
      out += d;
      const m = /READY (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        resolve({ port: Number(m[1]) });
      }
      const u = /UNAVAILABLE (.*)\n/.exec(out);
      if (u) {
        clearTimeout(timer);
        resolve({ error: u[1], unavailable: true });
      }
    };
    child.stdout.on('data', onData);
    child.on('error', (e) => { clearTimeout(timer); resolve({ error: e.message }); });
    exited.then((code) => { clearTimeout(timer); resolve({ error: `exited (${code}) before READY` }); });
  });
  if (ready.unavailable) {
    await stop();
    const err = new Error(ready.error);
    err.unavailable = true;
    throw err;
  }
  if (ready.error) {
    await stop();
    const detail = stderr.trim().split('\n').find((l) => /Error|error:|Cannot/.test(l)) || stderr.trim().split('\n')[0] || '';
    throw new Error(`${server.label} ${ready.error}${detail ? `: ${detail.trim()}` : ''}`);
  }
  // perf_hooks: the server answers "gc" on stdin with one "GC <ms> <count>" line (bench/handlers.js).
  let answer = '';
  const waiting = [];
  if (workload.gc && server.gc === 'perf_hooks') {
    child.stdout.on('data', (d) => {
      answer += d;
      let m;
      while ((m = /GC (\S+) (\S+)\n/.exec(answer))) {
        answer = answer.slice(m.index + m[0].length);
        const w = waiting.shift();
        if (w) w(m[1] === '-' ? null : { ms: Number(m[1]), count: Number(m[2]) });
      }
    });
  } else {
    child.stdout.resume();
  }
  const gc = () => {
    if (!workload.gc) return Promise.resolve(null);
    if (log) return Promise.resolve({ ...log.totals });
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(null), 5000);
      waiting.push((v) => { clearTimeout(t); resolve(v); });
      child.stdin.write('gc\n');
    });
  };
  return {
    pid: child.pid, port: ready.port, stop, gc, alive: () => child.exitCode === null && child.signalCode === null,
    stderr: () => stderr,
  };
}

async function prove(workload, srv) {
  const p = workload.proof;
  const responses = await exchange(srv.port, p.requests(srv.port), { pipelined: !!p.pipelined, tls: p.tls });
  responses.forEach((res, i) => {
    const problems = verify(res, p.expect);
    if (problems.length) throw new Error(`response ${i + 1}/${responses.length}: ${problems.join('; ')}`);
  });
  const first = responses[0];
  return {
    responseBytes: first.bytes,
    bodyBytes: first.body.length,
    headers: first.rawHeaders.map(([n, v]) => `${n}: ${v}`),
    responses: responses.length,
  };
}

// ---------------------------------------------------------------- setup

/** { build } naming the uWS build bench/servers/uws.js will load, or { error }. */
function ensureUws(opts) {
  const probe = () => {
    const r = spawnSync(process.execPath, [UWS_PROBE], { encoding: 'utf8', timeout: 60000 });
    try {
      return JSON.parse(r.stdout);
    } catch {
      return { error: `probe failed: ${r.error ? r.error.message : (r.stderr || '').trim().split('\n').pop()}` };
    }
  };
  const installed = (pkg, version) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(UWS_PREFIX, 'node_modules', ...pkg.split('/'), 'package.json'), 'utf8'))
        .version === version;
    } catch {
      return false;
    }
  };
  const install = (why, specs) => {
    // Said before it happens: these are not uWebSockets.js's authors' packages (they publish it
    // on GitHub only), and a user should know what lands on their disk and why.
    progress.note(`bench: the uWebSockets.js row needs its binary: installing ${specs.join(' ')}, `
      + 'unofficial npm republishes of uWebSockets.js (its authors publish it on GitHub only), '
      + `into .cache/bench-deps/ (${why}). --servers fast,node or --no-install leaves the row out.`);
    // One command for every package: an install without them in it would prune the others.
    const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', UWS_PREFIX, ...specs],
      { encoding: 'utf8', timeout: 600000, cwd: ROOT });
    if (r.error || r.status !== 0) {
      return `npm install failed: ${r.error ? r.error.message : (r.stderr || '').trim().split('\n').slice(-1)[0]}`;
    }
    return null;
  };
  const truffle = `${UWS_PKG}@${UWS_VERSION}`;
  const uwsx = `${UWSX_PKG}@${UWSX_VERSION}`;
  const haveUwsx = installed(UWSX_PKG, UWSX_VERSION);
  if (!installed(UWS_PKG, UWS_VERSION) && opts.install) {
    const failed = install('first use', haveUwsx ? [truffle, uwsx] : [truffle]);
    if (failed) return { error: failed };
  }
  const first = probe();
  if (first.build || haveUwsx || !opts.install) return first;
  // Only newer Nodes get here (no trufflesuite binary for their ABI): fetch the second package.
  const failed = install(`${UWS_PKG} has no native binary for Node ${process.version}`, [truffle, uwsx]);
  return failed ? { error: failed } : probe();
}

function gitRev() {
  const r = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) return null;
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' });
  return `${r.stdout.trim()}${dirty.stdout && dirty.stdout.trim() ? '-dirty' : ''}`;
}

function cpuModel() {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) return m[1].trim();
  } catch { /* fall through */ }
  return (os.cpus()[0] || {}).model || 'unknown';
}

// ---------------------------------------------------------------- stats

function summarize(values) {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { median, min: v[0], max: v[v.length - 1], n: v.length };
}

/** Each finished row's `summary`: median/min/max of `fields` over its samples. */
function summarizeRows(rows, fields) {
  for (const row of rows) {
    if (row.status !== 'ok') continue;
    row.summary = {};
    for (const f of fields) row.summary[f] = summarize(row.samples.map((x) => x[f]));
  }
}

// ---------------------------------------------------------------- workloads

async function runTimed(workload, servers, env, opts) {
  const rows = servers.map((s) => ({ server: s.id, label: labelFor(s, workload), status: 'ok', samples: [], warnings: [] }));
  const live = [];
  const abort = async (row, entry, msg, unavailable) => {
    row.status = unavailable ? 'unavailable' : 'aborted';
    row.error = msg;
    progress.note(`  ${workload.name}: ${row.label} row ${unavailable ? 'not available' : 'aborted'}: ${msg}`);
    if (entry) {
      await entry.srv.stop();
      live.splice(live.indexOf(entry), 1);
    }
  };
  for (const [i, s] of servers.entries()) {
    const why = cannotRun(s, workload);
    if (why) {
      rows[i].status = 'unavailable';
      rows[i].error = why;
      continue;
    }
    progress.show(`${workload.name}: starting ${labelFor(s, workload)}`);
    try {
      const srv = await startServer(s, workload, env, opts);
      // With a live heap built, the process's size says what each runtime made of it.
      if (workload.realistic) rows[i].rssAtStart = rssBytes(srv.pid);
      live.push({ s, srv, row: rows[i] });
    } catch (err) {
      await abort(rows[i], null, err.message, err.unavailable);
    }
  }
  try {
    for (const entry of [...live]) {
      progress.show(`${workload.name}: proving ${labelFor(entry.s, workload)} output`);
      try {
        entry.row.proof = await prove(workload, entry.srv);
      } catch (err) {
        await abort(entry.row, entry, `wrong output: ${err.message}`);
      }
    }
    const wrkOpts = (srv, duration) => ({
      port: srv.port, connections: opts.connections, duration, cpu: env.loadCpu,
      script: workload.wrk.script, scriptArgs: workload.wrk.scriptArgs,
      scheme: workload.https ? 'https' : 'http', headers: workload.wrk.headers,
    });
    for (const entry of [...live]) {
      progress.show(`${workload.name}: warm-up ${labelFor(entry.s, workload)}`);
      if (opts.warmup > 0) {
        try {
          await runWrk(wrkOpts(entry.srv, opts.warmup));
        } catch (err) {
          await abort(entry.row, entry, `warm-up failed: ${err.message}`);
        }
      }
      progress.advance(COST.start + opts.warmup);
    }
    for (let round = 1; round <= opts.rounds; round++) {
      for (const entry of [...live]) {
        progress.show(`${workload.name}: round ${round}/${opts.rounds} ${labelFor(entry.s, workload)}`);
        const { srv, row } = entry;
        try {
          const gc0 = await srv.gc();
          const cpu0 = cpuMicros(srv.pid);
          const wrk0 = childrenCpuMicros();
          const r = await runWrk(wrkOpts(srv, opts.duration));
          // wrk has been reaped: its CPU time is in this process's children's.
          const wrkCpu = childrenCpuMicros() - wrk0;
          // Let the server finish closing wrk's connections so that work is
          // charged to the round that caused it.
          await sleep(100);
          if (!srv.alive()) throw new Error(`server exited: ${srv.stderr().trim().split('\n').pop()}`);
          const cpu = cpuMicros(srv.pid) - cpu0;
          // GC pauses in the round (the rows that report them): after the CPU reading, so the
          // question costs the round nothing.
          const gc1 = await srv.gc();
          const gc = gc0 && gc1 ? { gcMs: gc1.ms - gc0.ms, gcCount: gc1.count - gc0.count } : {};
          const errs = r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout;
          if (r.errors.non2xx) throw new Error(`${r.errors.non2xx} non-2xx responses in round ${round}`);
          if (errs) row.warnings.push(`round ${round}: socket errors ${JSON.stringify(r.errors)}`);
          if (!r.requests) throw new Error(`no requests completed in round ${round}`);
          row.samples.push({
            round, rps: r.rps, requests: r.requests, seconds: r.seconds, cpuUs: cpu,
            cpuUsPerReq: cpu / r.requests, p99Ms: r.p99Ms, wrkBytesPerReq: r.bytesRead / r.requests, errors: r.errors,
            // Shares of one core over the round: the server's, and wrk's (~1: wrk is the limit).
            serverCpu: cpu / (r.seconds * 1e6), clientCpu: wrkCpu / (r.seconds * 1e6),
            ...(gc.gcMs !== undefined && r.requests ? { ...gc, gcUsPerReq: (gc.gcMs * 1000) / r.requests } : {}),
          });
        } catch (err) {
          await abort(row, entry, err.message);
        }
        progress.advance(opts.duration + COST.round);
      }
    }
  } finally {
    await Promise.all(live.map((e) => e.srv.stop()));
  }
  summarizeRows(rows, ['rps', 'cpuUsPerReq', 'p99Ms', 'serverCpu', 'clientCpu', ...(workload.gc ? ['gcUsPerReq', 'gcCount'] : [])]);
  for (const row of rows) {
    if (row.status === 'ok') row.clientBound = row.summary.clientCpu.median >= CLIENT_BOUND;
    if (row.status === 'ok' && workload.gc && !row.summary.gcUsPerReq) row.warnings.push('no GC figures from this server');
  }
  return rows;
}

function startMemClient(port, env, conns, useTls) {
  const file = path.join(__dirname, 'lib', 'mem-client.js');
  const [cmd, ...args] = wrapCommand(process.execPath,
    [file, String(port), String(conns), ...(useTls ? ['tls'] : [])],
    { cpu: env.loadCpu, nofile: conns + 1024 });
  // 'ipc' survives taskset/prlimit exec()ing node: the channel fd and
  // NODE_CHANNEL_FD are inherited.
  const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-2000); });
  child.on('exit', () => children.delete(child));
  const waitFor = (type, ms) => new Promise((resolve, reject) => {
    const t = setTimeout(() => { cleanup(); reject(new Error(`memory client: no "${type}" within ${ms / 1000} s`)); }, ms);
    const onMsg = (m) => { if (m && m.type === type) { cleanup(); resolve(m); } };
    const onExit = (code) => { cleanup(); reject(new Error(`memory client exited (${code}): ${stderr.trim().split('\n').pop() || ''}`)); };
    const cleanup = () => { clearTimeout(t); child.off('message', onMsg); child.off('exit', onExit); };
    child.on('message', onMsg);
    child.on('exit', onExit);
  });
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    try { child.send('close'); } catch { child.kill('SIGKILL'); }
    const t = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(t);
  };
  return {
    held: () => waitFor('held', 60000),
    count: () => { child.send('count'); return waitFor('count', 5000); },
    close,
  };
}

// One memory sample = a fresh server, so every sample starts from the same
// baseline instead of reusing memory freed by the previous round.
async function memorySample(workload, s, env, opts) {
  const srv = await startServer(s, workload, env, opts);
  let client;
  try {
    let proof;
    try {
      proof = await prove(workload, srv);
    } catch (err) {
      err.proof = true;
      throw err;
    }
    // Serve traffic first (the same wrk load for every server), so the baseline already
    // has the optimizing compiler's code paged in and the young generation at its working
    // size: the difference then is what the idle connections hold, not one-time warm-up.
    if (opts.warmup > 0) {
      await runWrk({ port: srv.port, connections: 64, duration: opts.warmup, cpu: env.loadCpu,
        scheme: workload.https ? 'https' : 'http' });
    }
    await sleep(opts.memSettle > 0 ? opts.memSettle * 1000 : 300);
    const before = rssBytes(srv.pid);
    const conns = idleConns(workload.name, env);
    client = startMemClient(srv.port, env, conns, workload.https);
    const held = await client.held();
    // Let the server finish any lazy per-connection work before sampling.
    await sleep(opts.memSettle > 0 ? opts.memSettle * 1000 : 700);
    const after = rssBytes(srv.pid);
    const { open } = await client.count();
    if (!srv.alive()) throw new Error('server exited while connections were open');
    if (open < conns * 0.99) {
      const why = s.id === 'uws' ? ': uWebSockets.js closes HTTP connections idle for 10 s, fewer connections open '
        + 'in time (--mem-conns / --tls-idle-conns)' : '';
      throw new Error(`only ${open}/${conns} connections stayed open (${held.failed} failed: ${held.firstError})${why}`);
    }
    return { proof, sample: { rssBefore: before, rssAfter: after, open, bytesPerConn: (after - before) / open } };
  } finally {
    if (client) await client.close();
    await srv.stop();
  }
}

async function runMemory(workload, servers, env, opts) {
  const rows = servers.map((s) => ({ server: s.id, label: labelFor(s, workload), status: 'ok', samples: [], warnings: [] }));
  const perSample = estimate(workload, 1, { ...opts, rounds: 1 });
  for (let round = 1; round <= opts.rounds; round++) {
    for (const [i, s] of servers.entries()) {
      const row = rows[i];
      const why = cannotRun(s, workload);
      if (why) {
        row.status = 'unavailable';
        row.error = why;
      }
      if (row.status !== 'ok') { progress.advance(perSample); continue; }
      progress.show(`${workload.name}: round ${round}/${opts.rounds} ${row.label}, ${idleConns(workload.name, env)} idle connections`);
      try {
        const { proof, sample } = await memorySample(workload, s, env, opts);
        row.proof = row.proof || proof;
        row.samples.push({ round, ...sample });
      } catch (err) {
        row.status = err.unavailable ? 'unavailable' : 'aborted';
        row.error = err.proof ? `wrong output: ${err.message}` : err.message;
        progress.note(`  ${workload.name}: ${row.label} row ${err.unavailable ? 'not available' : 'aborted'}: ${row.error}`);
      }
      progress.advance(perSample);
    }
  }
  summarizeRows(rows, ['bytesPerConn', 'rssBefore', 'rssAfter']);
  return rows;
}

// ---------------------------------------------------------------- main

/** `npm run bench -- soak|abuse|upgrade|tls-fuzz [options]`: the other benchmarks, by name. */
const OTHER = {
  soak: 'soak/run.js', abuse: 'abuse/run.js', upgrade: 'upgrade/run.js', 'tls-fuzz': 'tls-fuzz/run.js',
};

/** The command as typed: what a README quotes beside the numbers. */
function commandLine() {
  const args = process.argv.slice(2);
  return args.length ? `node bench/run.js ${args.join(' ')}` : 'npm run bench';
}

/** What each column is: the package and version measured, for the table and the files. */
function describeServers(servers, opts) {
  const { version } = require('../package.json');
  const rev = gitRev();
  const out = {};
  for (const s of servers) {
    if (s.id === 'fast') out.fast = `fast-http-native ${version} (${rev ? `git ${rev}` : ROOT}) on Node ${process.version}`;
    else if (s.id === 'node') out.node = `node:http and node:https of Node ${process.version}`;
    else if (s.id === 'uws') out.uws = `${s.build} (an unofficial npm republish of uWebSockets.js's binaries)`;
    else if (s.id === 'base') out.base = `fast-http checkout ${opts.base}`;
    else if (s.id === 'bun') out.bun = `node:http and node:https of ${opts.runtimes.bun.describe}`;
    else if (s.id === 'deno') out.deno = `node:http and node:https of ${opts.runtimes.deno.describe}`;
    else if (s.id === 'deno-serve') out['deno-serve'] = `Deno.serve of ${opts.runtimes.deno.describe}`;
  }
  return out;
}

/** The framework packages the framework rows of this run load, with their versions. */
function describeFrameworks(selected) {
  const out = {};
  for (const w of selected.filter((x) => x.framework)) {
    out[w.name] = w.packages.map((name) => {
      // Read from node_modules: some packages' "exports" hide their package.json.
      const file = path.join(ROOT, 'node_modules', name, 'package.json');
      try {
        const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
        return `${pkg.name}@${pkg.version}${pkg.name !== name ? ` (as ${name})` : ''}`;
      } catch {
        return `${name} (not installed: npm install)`;
      }
    }).join(' + ');
  }
  return out;
}

async function main() {
  const other = OTHER[process.argv[2]];
  if (other !== undefined) {
    process.argv.splice(2, 1);
    require(path.join(__dirname, other));
    return;
  }
  const opts = parseOptions(process.argv.slice(2));
  const t0 = Date.now();
  if (process.platform !== 'linux') die('needs Linux (/proc, taskset)', 1);
  const wrkVersion = wrkAvailable();
  if (!wrkVersion) {
    process.stderr.write('bench: wrk not found. Install it with:\n  apt-get install wrk\n');
    process.exit(1);
  }
  const notes = [];
  const ncpu = os.availableParallelism ? os.availableParallelism() : os.cpus().length;
  const haveTaskset = !spawnSync('taskset', ['-V']).error;
  const env = { serverCpu: 0, loadCpu: 1, memConns: opts.memConns, tlsIdleConns: opts.tlsIdleConns };
  if (!haveTaskset || ncpu < 2) {
    env.serverCpu = null;
    env.loadCpu = null;
    notes.push(!haveTaskset ? 'taskset not found: processes are not pinned (apt-get install util-linux)'
      : 'only one CPU: server and load generator share it; numbers are not comparable to pinned runs');
  }
  // Other work on the box shows up as req/s noise; say so in the report.
  const load1 = Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  if (load1 >= 0.5) {
    notes.push(`load average ${load1} at start: other processes share these CPUs, so req/s will be noisy `
      + '(CPU µs/req is much less affected)');
  }
  if (opts.rounds < 5) notes.push(`only ${opts.rounds} round(s): fewer than 5, treat the spread as indicative`);

  const selected = workloads.filter((w) => opts.workloads.includes(w.name));
  // Servers that cannot run a row (uWS and Deno.serve have no node:http for the frameworks)
  // get a "not available" row saying why, and take no time.
  const runnable = (w, ids) => ids.filter((id) => !cannotRun(SERVERS[id], w));

  // The run's length, said before anything is installed or started.
  const planned = selected.map((w) => estimate(w, runnable(w, opts.serverIds).length, opts));
  progress.planned = opts.serverIds.length * COST.start + planned.reduce((a, b) => a + b, 0);
  progress.steps = selected.length;
  const labels = opts.serverIds.map((id) => SERVERS[id].label).join(', ');
  const out = opts.write ? `results go to ${path.relative(process.cwd(), opts.out) || '.'}/` : 'no files (--no-write)';
  const fetched = [opts.serverIds.includes('uws') && 'uWebSockets.js',
    opts.serverIds.includes('bun') && 'Bun', opts.serverIds.some((id) => SERVERS[id].runtime === 'deno') && 'Deno']
    .filter(Boolean);
  process.stderr.write(`bench: ${selected.length} workload${selected.length === 1 ? '' : 's'} on ${labels}, `
    + `${opts.rounds} round${opts.rounds === 1 ? '' : 's'} × ${opts.duration} s each: about `
    + `${fmtDuration(progress.planned)}${fetched.length ? ` (plus, the first time, fetching ${fetched.join(', ')} from npm)` : ''}; `
    + `${out}. Shorter runs: --only, --rounds, --duration, --servers (--help).\n`);
  progress.startedAt = Date.now();

  // Which servers can run at all? uWS, Bun and Deno are fetched on demand; every server must
  // then start (fast-http may not be built yet) or is skipped.
  const servers = [];
  opts.runtimes = {};
  const hello = workloads.find((w) => w.name === 'hello');
  for (const id of opts.serverIds) {
    const s = SERVERS[id];
    progress.show(`starting ${s.label}`);
    if (id === 'uws') {
      const uws = ensureUws(opts);
      if (uws.error) { notes.push(`uWebSockets.js skipped: ${uws.error}`); continue; }
      s.build = uws.build;
    }
    if (s.runtime !== 'node') {
      if (!opts.runtimes[s.runtime]) {
        opts.runtimes[s.runtime] = ensureRuntime(s.runtime, {
          prefix: UWS_PREFIX, install: opts.install, note: (text) => progress.note(text),
        });
      }
      const rt = opts.runtimes[s.runtime];
      if (rt.error) { notes.push(`${s.label} skipped: ${rt.error}`); continue; }
    }
    try {
      const srv = await startServer(s, hello, env, opts);
      await srv.stop();
      servers.push(s);
    } catch (err) {
      notes.push(`${s.label} skipped: ${err.message}`);
    }
    progress.advance(COST.start);
  }
  for (const n of notes) progress.note(`note: ${n}`);
  if (!servers.length) die('no server could be started', 1);
  if (selected.some((w) => w.realistic)) {
    notes.push(`realistic row: a live heap of ${opts.liveHeapMb} MB (${realistic.recordCount(opts.liveHeapMb)} records; `
      + 'RSS at start says what each runtime made of it); GC µs/req is main-thread GC pause time per response, '
      + 'from perf_hooks on Node, V8\'s --trace-gc on Deno, JavaScriptCore\'s logGC on Bun');
  }

  const results = {
    meta: {
      date: new Date().toISOString(),
      command: commandLine(),
      node: process.version,
      execPath: process.execPath,
      wrk: wrkVersion,
      cpu: cpuModel(),
      cpus: ncpu,
      kernel: `${os.type()} ${os.release()}`,
      git: gitRev(),
      loadavgAtStart: load1,
      pinning: env.serverCpu == null ? null : { server: env.serverCpu, loadGenerator: env.loadCpu },
      // Which package and version each column measured.
      servers: describeServers(servers, opts),
      frameworks: describeFrameworks(selected),
      clientBound: CLIENT_BOUND,
    },
    options: {
      servers: servers.map((s) => s.id), rounds: opts.rounds, duration: opts.duration, warmup: opts.warmup,
      connections: opts.connections, memConns: opts.memConns, tlsIdleConns: opts.tlsIdleConns, memSettle: opts.memSettle,
      liveHeapMb: opts.liveHeapMb, workloads: opts.workloads,
    },
    notes,
    workloads: [],
  };

  let doneBefore = progress.done;
  for (const [i, w] of selected.entries()) {
    progress.begin(`${w.name}: ${servers.filter((s) => !cannotRun(s, w)).map((s) => labelFor(s, w)).join(', ')}`);
    const rows = w.memory ? await runMemory(w, servers, env, opts) : await runTimed(w, servers, env, opts);
    // Rows skipped or aborted took less than planned: the rest of the estimate stands.
    doneBefore += planned[i];
    progress.done = doneBefore;
    if (w.name === 'hello-set') {
      for (const r of rows.filter((x) => x.server === 'uws' || x.server === 'deno-serve')) {
        r.warnings.push(`${r.server === 'uws' ? 'uWS' : 'Deno.serve'} has no setHeader(); same code as hello`);
      }
    }
    results.workloads.push({
      name: w.name, title: w.title, memory: !!w.memory, https: !!w.https, handshake: !!w.handshake,
      framework: !!w.framework, gc: !!w.gc,
      ...(w.memory ? { conns: idleConns(w.name, env) } : {}), rows,
    });
  }
  progress.clear();
  results.meta.wallSeconds = Math.round((Date.now() - t0) / 100) / 10;
  report.addRatios(results);

  process.stdout.write(report.table(results));
  process.stdout.write(`wall time ${fmtDuration(results.meta.wallSeconds)}\n`);
  if (opts.write) {
    const files = report.write(results, opts.out);
    const shown = (f) => (f.startsWith(ROOT + path.sep) ? path.relative(ROOT, f) : f);
    process.stdout.write(`\nwrote ${shown(files.markdown)} (the table in Markdown, for a README),\n`
      + `      ${shown(files.svg)} (the chart),\n      ${files.json.map(shown).join(', ')} (every sample)\n`);
  }
}

function killChildren() {
  for (const c of children) {
    try { c.kill('SIGKILL'); } catch { /* already gone */ }
  }
}
// Required (test/bench-rows.test.js), it starts nothing: the tests start a server the way a
// run does, with the command a run would use.
if (require.main === module) {
  process.on('SIGINT', () => { progress.clear(); killChildren(); process.exit(130); });
  process.on('SIGTERM', () => { killChildren(); process.exit(143); });
  process.on('exit', killChildren);

  main().catch((err) => {
    progress.clear();
    killChildren();
    process.stderr.write(`bench: ${err.stack || err}\n`);
    process.exit(1);
  });
}

module.exports = { SERVERS, serverCommand, cannotRun, UWS_PREFIX };
