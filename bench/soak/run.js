'use strict';
// Soak: millions of keep-alive requests (wrk), then a flood of mutated requests (each a
// valid request with random damage: flipped, dropped, repeated or inserted bytes, control
// characters, truncation, huge lengths, duplicated framing headers), against node:http and
// fast-http in turn. Reports each server's RSS, JS heap (after a full GC) and open file
// descriptors before and after, so a leak of memory or descriptors shows as growth.
//   npm run bench -- soak [--seconds 30] [--mutations 20000]
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { runWrk, wrkAvailable } = require('../lib/wrk');

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? def : Number(args[i + 1]);
};
const SECONDS = opt('seconds', 30);
const MUTATIONS = opt('mutations', 20000);
const haveTaskset = !spawnSync('taskset', ['-V']).error;
const MIB = 1024 * 1024;

const SERVER = `
const http = require(process.argv[1]);
const fs = require('node:fs');
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => res.end('ok ' + req.url));
});
server.on('clientError', (err, socket) => socket.destroy());
process.on('message', () => {
  globalThis.gc();
  const m = process.memoryUsage();
  process.send({ rss: m.rss, heap: m.heapUsed, fds: fs.readdirSync('/proc/self/fd').length });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

function start(module) {
  const argv = ['--expose-gc', '-e', SERVER, module];
  const child = haveTaskset ?
    spawn('taskset', ['-c', '0', process.execPath, ...argv], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }) :
    spawn(process.execPath, argv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve) => child.once('message', (m) => resolve({ child, port: m.port })));
}

function stats(child) {
  return new Promise((resolve) => {
    child.once('message', resolve);
    child.send('stats');
  });
}

/** A deterministic pseudo-random sequence, so both servers get the same mutations. */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const BASES = [
  'GET /a?b=c HTTP/1.1\r\nHost: x\r\nUser-Agent: soak\r\n\r\n',
  'POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello',
  'POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;e=1\r\nhello\r\n0\r\nT: 1\r\n\r\n',
  'GET /u HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n',
  'GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n',
];
const INSERTS = ['\r', '\n', '\0', ' ', '\t', ':', '\x7f', '\xff', 'Content-Length: 3\r\n',
  'Transfer-Encoding: chunked\r\n', '\r\n\r\n', 'ffffffffffffffffff\r\n', 'x'.repeat(20000)];

function mutate(random) {
  const base = Buffer.from(BASES[Math.floor(random() * BASES.length)], 'latin1');
  let bytes = [...base];
  const edits = 1 + Math.floor(random() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(random() * (bytes.length + 1));
    switch (Math.floor(random() * 5)) {
      case 0: bytes[at] = Math.floor(random() * 256); break;
      case 1: bytes.splice(at, 1 + Math.floor(random() * 8)); break;
      case 2: bytes.splice(at, 0, ...bytes.slice(at, at + 1 + Math.floor(random() * 16))); break;
      case 3: bytes.splice(at, 0, ...Buffer.from(INSERTS[Math.floor(random() * INSERTS.length)], 'latin1')); break;
      default: bytes = bytes.slice(0, at); break;
    }
  }
  return Buffer.from(bytes);
}

/** Sends `count` mutated requests, 50 connections at a time, each closed after 200 ms. */
async function flood(port, count) {
  const random = rng(42);
  let next = 0;
  const one = () => new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(mutate(random)));
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.setTimeout(200, () => socket.destroy());
    socket.on('close', resolve);
  });
  const worker = async () => {
    while (next < count) {
      next++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker));
}

async function soak(name, module) {
  const { child, port } = await start(module);
  await runWrk({ port, connections: 64, duration: 2, cpu: haveTaskset ? 1 : null });
  const before = await stats(child);
  const wrk = await runWrk({ port, connections: 64, duration: SECONDS, cpu: haveTaskset ? 1 : null });
  await flood(port, MUTATIONS);
  await new Promise((r) => setTimeout(r, 500));
  const after = await stats(child);
  child.kill();
  return { name, requests: wrk.requests, errors: wrk.errors, before, after };
}

(async () => {
  if (!wrkAvailable()) {
    console.error('soak: wrk is not installed (Debian package wrk)');
    process.exitCode = 1;
    return;
  }
  const rows = [];
  for (const [name, module] of [['node:http', 'node:http'], ['fast-http', path.join(__dirname, '..', '..')]]) {
    const r = await soak(name, module);
    rows.push(r);
    const d = (k, unit = MIB) => `${(r.before[k] / unit).toFixed(1)} -> ${(r.after[k] / unit).toFixed(1)}`;
    console.log(`${name.padEnd(10)} ${r.requests.toLocaleString()} keep-alive requests + ${MUTATIONS.toLocaleString()} mutated: ` +
      `RSS ${d('rss')} MiB, heap ${d('heap')} MiB, fds ${r.before.fds} -> ${r.after.fds}`);
  }
  const file = path.join(__dirname, '..', 'results', 'soak-latest.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, seconds: SECONDS, mutations: MUTATIONS, rows }, null, 2)}\n`);
})();
