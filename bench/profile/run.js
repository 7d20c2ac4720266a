'use strict';
// Where a request's CPU goes, for fast-http beside uWebSockets.js and node:http (issue #20's
// "find where the time goes, and show it"). Per server and workload, under wrk load with the
// server on CPU 0 and wrk on CPU 1:
//   - perf's samples by DSO: the kernel, V8 and Node's C++ (the `node` binary: builtins, IC
//     stubs, GC, N-API), JIT-compiled JS, the addon, libc; and the top symbols;
//   - system calls per response (strace -c over a separate run: strace slows the server);
//   - JS heap allocated per response (the sum of V8's per-GC `allocated=` over the run, from
//     --trace-gc-nvp, divided by the responses wrk counted).
// perf and strace are optional (Debian's linux-perf and strace); what is missing is skipped
// with a note.
//
//   node bench/profile/run.js [--servers fast,uws,node] [--only hello,json,pipeline]
//                             [--duration S] [--top N]
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { runWrk } = require('../lib/wrk');
const { workloads } = require('../lib/workloads');

const SERVERS = {
  fast: { label: 'fast-http', file: path.join(__dirname, '..', 'servers', 'fast-http.js') },
  uws: { label: 'uWebSockets.js', file: path.join(__dirname, '..', 'servers', 'uws.js') },
  node: { label: 'node:http', file: path.join(__dirname, '..', 'servers', 'node-http.js') },
};
const SERVER_CPU = 0;
const LOAD_CPU = 1;

function parseArgs(argv) {
  const o = { servers: ['fast', 'uws', 'node'], only: ['hello', 'json', 'pipeline'], duration: 5, top: 15 };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--servers': o.servers = v.split(','); i++; break;
      case '--only': o.only = v.split(','); i++; break;
      case '--duration': o.duration = Number(v); i++; break;
      case '--top': o.top = Number(v); i++; break;
      case '-h': case '--help':
        console.log('usage: node bench/profile/run.js [--servers fast,uws,node] ' +
          '[--only hello,json,pipeline] [--duration S] [--top N]');
        process.exit(0);
        break;
      default: throw new Error(`unknown option ${argv[i]}`);
    }
  }
  for (const s of o.servers) if (!SERVERS[s]) throw new Error(`unknown server ${s}`);
  // The framework rows run bench/servers/framework.js, which this profiler does not start.
  for (const w of o.only) if (!workloads.some((x) => x.name === w && x.wrk && !x.framework)) throw new Error(`unknown workload ${w}`);
  return o;
}

const has = (cmd, args) => !spawnSync(cmd, args, { stdio: 'ignore' }).error;
// `perf stat` may say "not supported" for counters while `perf record` (a timer) works.
const perfWorks = () => has('perf', ['--version']) &&
  spawnSync('perf', ['record', '-q', '-F', '99', '-o', path.join(os.tmpdir(), 'fh-perf-probe.data'),
    '--', 'true'], { stdio: 'ignore' }).status === 0;

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Starts a server with extra node flags; stdout is kept (V8's GC trace goes there). */
async function start(server, workload, flags) {
  const port = await freePort();
  const child = spawn('taskset', ['-c', String(SERVER_CPU), process.execPath, ...flags, server.file,
    workload, String(port)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.resume();
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${server.label} did not start`)), 15000);
    const check = () => {
      if (/READY \d+/.test(out)) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve();
      }
    };
    child.stdout.on('data', check);
    child.on('exit', () => reject(new Error(`${server.label} exited before READY`)));
  });
  return {
    pid: child.pid,
    port,
    output: () => out,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.on('exit', resolve);
      child.stdin.end();
      setTimeout(() => child.kill('SIGKILL'), 2000).unref();
    }),
  };
}

function wrkFor(w, port, duration) {
  return runWrk({
    port, connections: 64, duration, cpu: LOAD_CPU,
    script: w.wrk?.script, scriptArgs: w.wrk?.scriptArgs, scheme: w.https ? 'https' : 'http',
    headers: w.wrk?.headers,
  });
}

/** Runs `cmd` until `stopped` resolves, then stops it with SIGINT (perf and strace write then). */
function attach(cmd, args, stopped) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const done = new Promise((resolve) => child.on('close', () => resolve(err)));
  stopped.then(() => child.kill('SIGINT'));
  return done;
}

const DSO_CLASSES = [
  [/^\[kernel/, 'kernel'],
  [/^\[JIT\]/, 'JS (JIT)'],
  [/\.node$/, 'addon'],
  [/^node$/, 'V8 + Node C++'],
  [/^libc/, 'libc'],
];

function perfSplit(data, top) {
  const report = (sort) => spawnSync('perf', ['report', '-i', data, '--sort', sort, '--no-children',
    '-g', 'none', '--stdio'], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout || '';
  const split = {};
  for (const line of report('dso').split('\n')) {
    const m = /^\s+([\d.]+)%\s+(.+?)\s*$/.exec(line);
    if (!m) continue;
    const cls = DSO_CLASSES.find(([re]) => re.test(m[2]))?.[1] ?? 'other';
    split[cls] = (split[cls] ?? 0) + Number(m[1]);
  }
  const symbols = report('dso,sym').split('\n')
    .map((l) => /^\s+([\d.]+)%\s+(\S+)\s+\[.\]\s+(.+?)\s*$/.exec(l))
    // The kernel's share is the same TCP work for every server (one recv and one send per
    // response); the symbols that differ are in user space.
    .filter((m) => m && !m[2].startsWith('[kernel')).slice(0, top)
    .map((m) => `${m[1].padStart(6)}%  ${m[3].slice(0, 110)}  (${m[2]})`);
  return { split, symbols };
}

function syscallsPer(text, responses) {
  const rows = [];
  for (const line of text.split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (m && m[2] !== 'total') rows.push([m[2], Number(m[1]) / responses]);
  }
  return rows.filter(([, n]) => n >= 0.001).sort((a, b) => b[1] - a[1]);
}

async function profileOne(server, w, o, tools) {
  const result = { server: server.label, workload: w.name };
  // Run 1: perf samples and the GC trace together (neither changes the server's speed much).
  const flags = ['--trace-gc-nvp', ...(tools.perf ? ['--perf-basic-prof-only-functions'] : [])];
  const s = await start(server, w.name, flags);
  try {
    await wrkFor(w, s.port, 2);
    const from = s.output().length;
    const data = path.join(os.tmpdir(), `fh-profile-${process.pid}-${server.label}-${w.name}.data`);
    let finished;
    const wrkDone = new Promise((resolve) => { finished = resolve; });
    const perf = tools.perf
      ? attach('perf', ['record', '-q', '-F', '1999', '-g', '-p', String(s.pid), '-o', data], wrkDone)
      : null;
    const run = await wrkFor(w, s.port, o.duration);
    finished();
    if (perf) await perf;
    const allocated = [...s.output().slice(from).matchAll(/allocated=(\d+)/g)]
      .reduce((sum, m) => sum + Number(m[1]), 0);
    result.rps = run.rps;
    result.heapPerResponse = allocated / run.requests;
    if (perf) {
      Object.assign(result, perfSplit(data, o.top));
      fs.rmSync(data, { force: true });
    }
  } finally {
    await s.stop();
    fs.rmSync(path.join(process.cwd(), `perf-${s.pid}.map`), { force: true });
    fs.rmSync(`/tmp/perf-${s.pid}.map`, { force: true });
  }
  // Run 2: system calls.
  if (tools.strace) {
    const t = await start(server, w.name, []);
    try {
      await wrkFor(w, t.port, 1);
      let finished;
      const wrkDone = new Promise((resolve) => { finished = resolve; });
      const out = path.join(os.tmpdir(), `fh-strace-${process.pid}.txt`);
      const strace = attach('strace', ['-c', '-f', '-o', out, '-p', String(t.pid)], wrkDone);
      // strace needs a moment to attach to every thread before the counted run.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const run = await wrkFor(w, t.port, 3);
      finished();
      await strace;
      result.syscalls = syscallsPer(fs.readFileSync(out, 'utf8'), run.requests);
      fs.rmSync(out, { force: true });
    } finally {
      await t.stop();
    }
  }
  return result;
}

function print(r) {
  console.log(`\n## ${r.workload} — ${r.server} (${Math.round(r.rps).toLocaleString('en-US')} req/s while profiled)`);
  if (r.split) {
    const parts = Object.entries(r.split).sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v.toFixed(1)} %`);
    console.log(`CPU samples: ${parts.join(', ')}`);
  }
  console.log(`JS heap allocated per response: ${Math.round(r.heapPerResponse).toLocaleString('en-US')} B`);
  if (r.syscalls) {
    console.log(`system calls per response: ${r.syscalls.map(([n, c]) => `${n} ${c.toFixed(3)}`).join(', ')}`);
  }
  if (r.symbols) console.log(`top user-space symbols:\n${r.symbols.map((l) => `  ${l}`).join('\n')}`);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (os.cpus().length < 2) throw new Error('needs 2 CPUs (server and load generator pinned apart)');
  const tools = { perf: perfWorks(), strace: has('strace', ['-V']) };
  if (!tools.perf) console.log('note: perf record does not work here: no CPU split');
  if (!tools.strace) console.log('note: no strace: no system call counts');
  console.log(`# profile — Node ${process.version}, server on CPU ${SERVER_CPU}, wrk -t1 -c64 on CPU ${LOAD_CPU}, load average ${os.loadavg()[0].toFixed(1)}`);
  for (const name of o.only) {
    const w = workloads.find((x) => x.name === name);
    for (const id of o.servers) {
      try {
        print(await profileOne(SERVERS[id], w, o, tools));
      } catch (e) {
        console.log(`\n## ${name} — ${SERVERS[id].label}: skipped (${e.message})`);
      }
    }
  }
}

main().catch((e) => {
  console.error(e.stack || e.message);
  process.exit(1);
});
