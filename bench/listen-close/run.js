'use strict';
// listen/close cost: `createServer(); await listen(0); await close()` on node:http and on
// fast-http, in one process (what a test suite or a CLI that starts a server per case does).
// Each round runs CYCLES cycles of each, the two interleaved cycle by cycle, so the machine's
// drift and noisy neighbours hit both alike; the line reports each one's median round (wall
// time for CYCLES cycles, and the process's CPU time in them: less disturbed by other
// processes on a busy machine) and the medians of the per-round ratios. Every round also
// checks that no descriptor was left behind.
//   node bench/listen-close/run.js [--rounds 15] [--cycles 1000] [--host 127.0.0.1]
const fs = require('node:fs');
const nodeHttp = require('node:http');
const fastHttp = require('../..');

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? def : args[i + 1];
};
const ROUNDS = Number(opt('rounds', 15));
const CYCLES = Number(opt('cycles', 1000));
const HOST = opt('host', undefined);
const WARMUP = 200;

function openFds() {
  try {
    return fs.readdirSync('/proc/self/fd').length;
  } catch {
    return -1;
  }
}

/** One cycle; adds its wall and CPU time (µs) to `acc`. */
async function cycle(http, acc) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const s = http.createServer();
  await new Promise((resolve, reject) => {
    s.once('error', reject);
    if (HOST === undefined) s.listen(0, resolve);
    else s.listen(0, HOST, resolve);
  });
  await new Promise((resolve) => s.close(resolve));
  acc.wall += Number(process.hrtime.bigint() - t0) / 1e3;
  const c = process.cpuUsage(c0);
  acc.cpu += c.user + c.system;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const scratch = { wall: 0, cpu: 0 };
  for (let i = 0; i < WARMUP; i++) {
    await cycle(nodeHttp, scratch);
    await cycle(fastHttp, scratch);
  }
  const fds = openFds();
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const node = { wall: 0, cpu: 0 };
    const fast = { wall: 0, cpu: 0 };
    for (let i = 0; i < CYCLES; i++) {
      // Which one goes first alternates too.
      if ((i + r) & 1) {
        await cycle(nodeHttp, node);
        await cycle(fastHttp, fast);
      } else {
        await cycle(fastHttp, fast);
        await cycle(nodeHttp, node);
      }
    }
    rounds.push({
      nodeWall: node.wall / 1e3, fastWall: fast.wall / 1e3, wall: fast.wall / node.wall,
      nodeCpu: node.cpu / 1e3, fastCpu: fast.cpu / 1e3, cpu: fast.cpu / node.cpu,
    });
    if (openFds() !== fds) throw new Error(`descriptors: ${fds} before, ${openFds()} after round ${r}`);
  }
  const m = (k) => median(rounds.map((x) => x[k]));
  const range = (k) => `${Math.min(...rounds.map((x) => x[k])).toFixed(1)}-` +
    `${Math.max(...rounds.map((x) => x[k])).toFixed(1)}`;
  console.log(`listen-close (${CYCLES} cycles, host ${HOST ?? 'default'}, Node ` +
    `${process.versions.node}, median of ${ROUNDS} rounds): ` +
    `wall fast-http ${m('fastWall').toFixed(1)} ms (${range('fastWall')}), ` +
    `node:http ${m('nodeWall').toFixed(1)} ms (${range('nodeWall')}), ratio ${m('wall').toFixed(2)}x; ` +
    `CPU fast-http ${m('fastCpu').toFixed(1)} ms, node:http ${m('nodeCpu').toFixed(1)} ms, ` +
    `ratio ${m('cpu').toFixed(2)}x`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
