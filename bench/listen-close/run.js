'use strict';
// listen/close cost: `createServer(); await listen(0); await close()` on node:http and on
// fast-http, in one process (what a test suite or a CLI that starts a server per case does).
// Each round runs CYCLES cycles of each, the two interleaved cycle by cycle, so the machine's
// drift and noisy neighbours hit both alike; the line reports each one's median round (wall
// time for CYCLES cycles) and the median of the per-round ratios. Every round also checks
// that no descriptor was left behind.
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

async function cycle(http) {
  const t0 = process.hrtime.bigint();
  const s = http.createServer();
  await new Promise((resolve, reject) => {
    s.once('error', reject);
    if (HOST === undefined) s.listen(0, resolve);
    else s.listen(0, HOST, resolve);
  });
  await new Promise((resolve) => s.close(resolve));
  return process.hrtime.bigint() - t0;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  for (let i = 0; i < WARMUP; i++) {
    await cycle(nodeHttp);
    await cycle(fastHttp);
  }
  const fds = openFds();
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    let node = 0n;
    let fast = 0n;
    for (let i = 0; i < CYCLES; i++) {
      // Which one goes first alternates too.
      if ((i + r) & 1) {
        node += await cycle(nodeHttp);
        fast += await cycle(fastHttp);
      } else {
        fast += await cycle(fastHttp);
        node += await cycle(nodeHttp);
      }
    }
    const round = { node: Number(node) / 1e6, fast: Number(fast) / 1e6 };
    round.ratio = round.fast / round.node;
    rounds.push(round);
    if (openFds() !== fds) throw new Error(`descriptors: ${fds} before, ${openFds()} after round ${r}`);
  }
  const node = median(rounds.map((x) => x.node));
  const fast = median(rounds.map((x) => x.fast));
  const ratio = median(rounds.map((x) => x.ratio));
  const range = (k) => `${Math.min(...rounds.map((x) => x[k])).toFixed(1)}-` +
    `${Math.max(...rounds.map((x) => x[k])).toFixed(1)}`;
  console.log(`listen-close (${CYCLES} cycles, host ${HOST ?? 'default'}, Node ` +
    `${process.versions.node}, median of ${ROUNDS} rounds): fast-http ${fast.toFixed(1)} ms ` +
    `(${range('fast')}), node:http ${node.toFixed(1)} ms (${range('node')}), ` +
    `ratio ${ratio.toFixed(2)}x`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
