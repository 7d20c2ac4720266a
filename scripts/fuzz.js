'use strict';
// Builds and runs the fuzz targets of fuzz/ (request heads, body decoding and the connection
// state machine, read whole and in random pieces) for a bounded time each. Needs a nightly
// toolchain (`cargo +nightly`); without one it prints a skip line and exits 0. cargo-fuzz is
// not needed: the targets are built with the flags it passes (libFuzzer's coverage
// instrumentation, debug assertions, overflow checks; no sanitizer: the code under test has
// no unsafe).
//
//   node scripts/fuzz.js [--seconds N] [--targets head,decoder,conn]
//
// Seeds come from test/strictness/corpus.txt and are written, with what the runs find, to
// the git-ignored .cache/fuzz/corpus/<target>/. A crash leaves its input in
// .cache/fuzz/artifacts/<target>/ (turn it into a unit test). Ends with `N passed, N failed`
// (one per target).

const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { load } = require('../test/strictness/corpus');

const root = path.join(__dirname, '..');
const cache = path.join(root, '.cache', 'fuzz');
const TARGETS = ['head', 'decoder', 'conn'];
const FOLLOW_UP = 'GET /follow-up HTTP/1.1\r\nHost: localhost\r\n\r\n';

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}

const seconds = Number(option('seconds', '30'));
const targets = option('targets', TARGETS.join(',')).split(',');

function nightly() {
  const r = spawnSync('cargo', ['+nightly', '--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function hostTriple() {
  const r = spawnSync('rustc', ['+nightly', '-vV'], { encoding: 'utf8' });
  const m = /^host: (\S+)/m.exec(r.stdout || '');
  return m ? m[1] : null;
}

/** Seed inputs: two control bytes (pieces, limits) and a request or a body. */
function seeds(target) {
  const out = [];
  for (const c of load()) {
    const raw = Buffer.from(c.raw + (c.followup ? FOLLOW_UP : ''), 'latin1');
    if (target === 'head') {
      out.push(Buffer.concat([Buffer.from([0x80, 0]), raw]));
      out.push(Buffer.concat([Buffer.from([0x00, 1]), raw]));
    } else if (target === 'conn') {
      // Plain server; 'upgrade' listened with Node 26's body first; shouldUpgradeCallback yes.
      for (const ctl of [[0x80, 0], [0x00, 4 | 8 | 32], [0x40, 16 | 32 | 64]]) {
        out.push(Buffer.concat([Buffer.from(ctl), raw]));
      }
    } else {
      const end = raw.indexOf('\r\n\r\n');
      if (end === -1 || !/transfer-encoding:[^\r]*chunked/i.test(c.raw)) continue;
      out.push(Buffer.concat([Buffer.from([0x40, 0]), raw.subarray(end + 4)]));
    }
  }
  return out;
}

function writeSeeds(target, dir) {
  fs.mkdirSync(dir, { recursive: true });
  for (const s of seeds(target)) {
    const name = crypto.createHash('sha1').update(s).digest('hex');
    const file = path.join(dir, name);
    if (!fs.existsSync(file)) fs.writeFileSync(file, s);
  }
}

function build(triple) {
  const flags = [
    '-Cpasses=sancov-module',
    '-Cllvm-args=-sanitizer-coverage-level=4',
    '-Cllvm-args=-sanitizer-coverage-inline-8bit-counters',
    '-Cllvm-args=-sanitizer-coverage-pc-table',
    '-Cllvm-args=-sanitizer-coverage-trace-compares',
    '--cfg', 'fuzzing',
    '-Cllvm-args=-simplifycfg-branch-fold-threshold=0',
    '-Cdebug-assertions',
    '-Coverflow-checks',
  ].join(' ');
  console.log(`[fuzz] building fuzz targets (${triple})`);
  const r = spawnSync('cargo', [
    '+nightly', 'build', '--release', '--quiet', '--manifest-path', path.join(root, 'fuzz', 'Cargo.toml'),
    '--target', triple, '--bins',
  ], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, RUSTFLAGS: flags, CARGO_TARGET_DIR: path.join(cache, 'target') },
  });
  return r.status === 0;
}

function run(target, bin) {
  const corpus = path.join(cache, 'corpus', target);
  const artifacts = path.join(cache, 'artifacts', target) + path.sep;
  writeSeeds(target, corpus);
  fs.mkdirSync(artifacts, { recursive: true });
  const r = spawnSync(bin, [
    corpus, `-max_total_time=${seconds}`, '-print_final_stats=1', `-artifact_prefix=${artifacts}`,
    '-max_len=65536', '-timeout=10', '-rss_limit_mb=2048',
  ], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const log = `${r.stdout || ''}${r.stderr || ''}`;
  fs.writeFileSync(path.join(cache, `${target}.log`), log);
  const runs = /stat::number_of_executed_units:\s*(\d+)/.exec(log)?.[1] ??
    /Done (\d+) runs/.exec(log)?.[1] ?? '?';
  const ok = r.status === 0;
  const crash = ok ? '' : ` FAILED (exit ${r.status}); see ${path.relative(root, artifacts)} and ` +
    `${path.relative(root, path.join(cache, `${target}.log`))}\n${log.split('\n').slice(-30).join('\n')}`;
  console.log(`[fuzz] ${target}: ${runs} runs in ${seconds} s${crash}`);
  return ok;
}

function main() {
  const version = nightly();
  if (!version) {
    console.log('[fuzz] skipped: no nightly toolchain (`cargo +nightly` failed)');
    console.log('0 passed, 0 failed');
    return;
  }
  const triple = hostTriple();
  if (!triple || !build(triple)) {
    console.log('[fuzz] build failed');
    console.log(`0 passed, ${targets.length} failed`);
    process.exitCode = 1;
    return;
  }
  let passed = 0;
  let failed = 0;
  for (const t of targets) {
    const bin = path.join(cache, 'target', triple, 'release', t);
    if (run(t, bin)) passed++;
    else failed++;
  }
  console.log(`${passed} passed, ${failed} failed`);
  if (failed) process.exitCode = 1;
}

main();
