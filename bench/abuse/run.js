'use strict';
// What one abusive client costs the server, node:http and fast-http side by side:
//   header-flood-16/64: one connection sends `GET / HTTP/1.1`, `Host: x`, `X-A:` and then
//     16 or 64 MiB of spaces (bytes llhttp skips without counting toward maxHeaderSize);
//     reports the server's CPU seconds, its RSS growth (peak over the idle baseline) and the
//     worst latency another client sees for `GET /` every 20 ms meanwhile.
//   backlog-same/new/string: a handler writes 500 MiB (BACKLOG_MIB) in 64 KiB pieces to a
//     client that does not read, ignoring write()'s result (the same Buffer each time, a new
//     Buffer each time, a string each time); reports the server's peak RSS growth, then the
//     client reads everything to check the byte count.
//   stream-500: a handler pipes 500 MiB with backpressure to a client that reads nothing for
//     5 s, then everything: peak RSS growth.
//   upload-1g: a client sends a 1 GiB body the app never reads (it answers at once): the
//     server's CPU seconds and peak RSS growth.
//   slowloris: 200 connections send a header byte a second (headersTimeout 2 s): how many
//     got a 408 and were closed, and how long it took; the server's peak RSS growth.
// Each server runs in its own process, pinned to CPU 0 (the client on CPU 1), one workload
// per process so the RSS peak (VmHWM) is the workload's own.
//   node bench/abuse/run.js [workload...]
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { cpuMicros, rssBytes } = require('../lib/proc-stats');

const MIB = 1024 * 1024;
const ALL = ['header-flood-16', 'header-flood-64', 'backlog-same', 'backlog-new', 'backlog-string',
  'stream-500', 'upload-1g', 'slowloris'];
const chosen = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const workloads = chosen.length ? chosen : ALL;
const haveTaskset = !spawnSync('taskset', ['-V']).error;
if (haveTaskset) spawnSync('taskset', ['-pc', '1', String(process.pid)]);

function peakRss(pid) {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}

function startServer(impl, workload) {
  const argv = [path.join(__dirname, 'server.js'), impl, workload];
  const child = haveTaskset ?
    spawn('taskset', ['-c', '0', process.execPath, ...argv], { stdio: ['ignore', 'pipe', 'inherit'] }) :
    spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /READY (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`${impl} server exited ${code}`)));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A client that sends `GET /` every 20 ms on one connection; returns its worst latency. */
function prober(port) {
  const socket = net.connect(port, '127.0.0.1');
  let worst = 0;
  let sentAt = 0;
  let stopped = false;
  let buf = '';
  const send = () => {
    if (stopped) return;
    sentAt = performance.now();
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  };
  socket.on('connect', send);
  socket.on('data', (d) => {
    buf += d;
    while (buf.includes('ok')) {
      buf = buf.slice(buf.indexOf('ok') + 2);
      worst = Math.max(worst, performance.now() - sentAt);
      setTimeout(send, 20);
    }
  });
  socket.on('error', () => {});
  return {
    stop() {
      stopped = true;
      // A request still unanswered counts for as long as it has waited.
      if (sentAt && buf === '') worst = Math.max(worst, performance.now() - sentAt);
      socket.destroy();
      return worst;
    },
  };
}

async function headerFlood(port, pid, mib) {
  const probe = prober(port);
  await sleep(200);
  const cpu0 = cpuMicros(pid);
  const spaces = Buffer.alloc(64 * 1024, 32);
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.on('connect', r));
  socket.write('GET / HTTP/1.1\r\nHost: x\r\nX-A:');
  for (let sent = 0; sent < mib * MIB; sent += spaces.length) {
    if (!socket.write(spaces)) await new Promise((r) => socket.once('drain', r));
  }
  const answered = new Promise((r) => socket.on('data', r));
  socket.write('v\r\n\r\n');
  await answered;
  const cpu = (cpuMicros(pid) - cpu0) / 1e6;
  socket.destroy();
  return { cpu, worstMs: probe.stop() };
}

async function backlog(port, path = '/backlog', wait = 3000) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.on('connect', r));
  socket.pause();
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  // The handler's loop runs to the end at once; give it time, then read everything.
  await sleep(wait);
  let bytes = 0;
  const done = new Promise((r) => {
    socket.on('data', (d) => {
      bytes += d.length;
      if (bytes >= Number(process.env.BACKLOG_MIB || 500) * MIB) r();
    });
  });
  socket.resume();
  await done;
  socket.destroy();
  return { bytes };
}

async function upload(port, pid) {
  const cpu0 = cpuMicros(pid);
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.on('connect', r));
  socket.on('error', () => {});
  socket.write(`POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: ${1024 * MIB}\r\n\r\n`);
  const chunk = Buffer.alloc(256 * 1024, 98);
  const started = performance.now();
  for (let sent = 0; sent < 1024 * MIB && !socket.destroyed; sent += chunk.length) {
    if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r));
  }
  const seconds = (performance.now() - started) / 1000;
  socket.destroy();
  await sleep(200);
  return { cpu: (cpuMicros(pid) - cpu0) / 1e6, seconds, worstMs: 0 };
}

async function slowloris(port) {
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: 200 }, () => new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\n'));
    const timer = setInterval(() => socket.write('X'), 1000);
    let text = '';
    socket.on('data', (d) => {
      text += d;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ got408: text.startsWith('HTTP/1.1 408'), ms: performance.now() - started });
    });
  })));
  return {
    closed408: results.filter((r) => r.got408).length,
    lastCloseMs: Math.max(...results.map((r) => r.ms)),
  };
}

async function measure(impl, workload) {
  const { child, port } = await startServer(impl, workload);
  await sleep(300);
  const base = rssBytes(child.pid);
  let result;
  if (workload.startsWith('header-flood')) {
    result = await headerFlood(port, child.pid, Number(workload.split('-').pop()));
  } else if (workload === 'stream-500') {
    result = await backlog(port, '/stream', 5000);
  } else if (workload === 'upload-1g') {
    result = await upload(port, child.pid);
  } else if (workload === 'slowloris') {
    result = await slowloris(port);
  } else {
    result = await backlog(port);
  }
  result.rssGrowth = (peakRss(child.pid) - base) / MIB;
  child.kill();
  return result;
}

(async () => {
  const rows = [];
  for (const w of workloads) {
    const node = await measure('node', w);
    const fast = await measure('fast', w);
    rows.push({ w, node, fast });
    const fmt = (r) => {
      if (r.closed408 !== undefined) {
        return `${r.closed408}/200 got 408, last closed at ${(r.lastCloseMs / 1000).toFixed(1)} s, +${r.rssGrowth.toFixed(1)} MiB RSS`;
      }
      if (r.seconds !== undefined) {
        return `${r.cpu.toFixed(2)} s CPU in ${r.seconds.toFixed(1)} s, +${r.rssGrowth.toFixed(1)} MiB peak RSS`;
      }
      if (r.cpu !== undefined) {
        return `${r.cpu.toFixed(2)} s CPU, +${r.rssGrowth.toFixed(1)} MiB RSS, other client worst ${r.worstMs.toFixed(0)} ms`;
      }
      return `+${r.rssGrowth.toFixed(1)} MiB peak RSS`;
    };
    console.log(`${w.padEnd(16)} node:http ${fmt(node)} | fast-http ${fmt(fast)}`);
  }
  const file = path.join(__dirname, '..', 'results', 'abuse-latest.json');
  // bench/results/ is git-ignored, so a fresh clone has none.
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, rows }, null, 2)}\n`);
})();
