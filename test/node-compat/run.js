'use strict';

// Runs Node's own http tests (test/parallel/test-http-*.js from the Node
// source tree matching the binary under test) with fast-http preloaded, and
// compares the outcome with expectations.json.
//
//   node test/node-compat/run.js [options] [filter...]
//
// Run with --help for the options.

const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');

const { obtainNodeTests, majorOf } = require('./fetch-node-tests.js');
const { resolveNode, withOpensslCli } = require('./node-binary.js');
const { readTestSource } = require('./source-scan.js');
const { runTest, killGroup } = require('./run-one.js');
const expectations = require('./expectations.js');
const { Progress, fmtTime } = require('./progress.js');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const DEFAULT_REGISTER = path.join(REPO_ROOT, 'lib', 'register.js');
const EXPECTATIONS_FILE = path.join(__dirname, 'expectations.json');

const HELP = `Usage: node test/node-compat/run.js [options] [filter...]

Runs Node's test/parallel/test-http-*.{js,mjs,cjs} against fast-http (node -r lib/register.js)
and compares with test/node-compat/expectations.json. Filters are substrings
of the test file name.

Options:
  --https                 also run test-https-*.js; a test that creates an https server
                          passes only if every https server it made was fast-http's
                          (FAST_HTTP_STATS: httpsServersCreated > 0, httpsFallbackServers 0)
  --sequential            also run sequential/test-http-*.js (and -https- with --https), one at a time
  -j, --jobs N            parallel jobs (default 2)
  --timeout S             per-test timeout in seconds (default 60)
  --baseline, --no-register
                          run on stock Node without the preload (no expectations check)
  --update-expectations   rewrite this major's entries in expectations.json from the run
  --register FILE         preload FILE instead of lib/register.js
  --node PATH|N|N.N.N     node binary to test: a path, a major (20, 22, 24, 26: the version
                          pinned in node-binary.js) or an exact version, fetched with
                          npm pack node-<os>-<arch>@VERSION into <cache>/node<major>/
  --node-src DIR          use this Node source tree (also NODE_SRC=DIR)
  --cache DIR             cache directory (default <repo>/.cache)
  --refresh               fetch the test tree again even if cached
  --report FILE           JSON report (default <cache>/node-compat-node<major>[-baseline].json)
  --list                  only list the selected tests
  -h, --help
`;

function parseArgs(argv) {
  const o = {
    https: false, sequential: false, jobs: 2, timeout: 60, register: DEFAULT_REGISTER,
    update: false, node: undefined, nodeSrc: undefined, cache: path.join(REPO_ROOT, '.cache'),
    refresh: false, report: undefined, list: false, filters: [],
  };
  const value = (i, name) => {
    if (i + 1 >= argv.length) throw new Error(`${name} needs a value`);
    return argv[i + 1];
  };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let inline;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq !== -1) {
      inline = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    const val = (name) => {
      if (inline !== undefined) return inline;
      const v = value(i, name);
      i++;
      return v;
    };
    switch (a) {
      case '--https': o.https = true; break;
      case '--sequential': o.sequential = true; break;
      case '-j': case '--jobs': o.jobs = Number(val(a)); break;
      case '--timeout': o.timeout = Number(val(a)); break;
      case '--baseline': case '--no-register': o.register = null; break;
      case '--register': o.register = path.resolve(val(a)); break;
      case '--update-expectations': o.update = true; break;
      case '--node': o.node = val(a); break;
      case '--node-src': o.nodeSrc = val(a); break;
      case '--cache': o.cache = path.resolve(val(a)); break;
      case '--refresh': o.refresh = true; break;
      case '--report': o.report = path.resolve(val(a)); break;
      case '--list': o.list = true; break;
      case '-h': case '--help': o.help = true; break;
      default:
        if (/^-j\d+$/.test(a)) o.jobs = Number(a.slice(2));
        else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
        else o.filters.push(a);
    }
  }
  if (!(o.jobs >= 1)) throw new Error('--jobs must be a positive number');
  if (!(o.timeout > 0)) throw new Error('--timeout must be a positive number of seconds');
  if (o.update && !o.register) throw new Error('--update-expectations records fast-http results; it cannot be combined with --baseline');
  return o;
}

function selectTests(root, o) {
  const prefixes = ['test-http-', ...(o.https ? ['test-https-'] : [])];
  const pick = (dir) => fs.readdirSync(path.join(root, 'test', dir))
    // tools/test.py runs .mjs (and .cjs) test files too.
    .filter((f) => /\.(?:js|mjs|cjs)$/.test(f) && prefixes.some((p) => f.startsWith(p)))
    .sort();
  const tests = pick('parallel').map((name) => ({ key: name, dir: 'parallel', name, parallel: true }));
  if (o.sequential) {
    for (const name of pick('sequential')) {
      tests.push({ key: `sequential/${name}`, dir: 'sequential', name, parallel: false });
    }
  }
  return tests
    .filter((t) => !o.filters.length || o.filters.some((f) => t.key.includes(f)))
    .map((t) => {
      const file = path.join(root, 'test', t.dir, t.name);
      return { ...t, file, ...readTestSource(file) };
    });
}

// Longest tests first (durations from the previous report) so that with few
// jobs a slow test does not start last and stretch the wall time.
function schedule(tests, reportFile) {
  let prev = {};
  try {
    prev = JSON.parse(fs.readFileSync(reportFile, 'utf8')).tests || {};
  } catch {
    // first run
  }
  const d = (t) => (prev[t.key] ? prev[t.key].duration : 0);
  return [...tests].sort((a, b) => d(b) - d(a) || (a.key < b.key ? -1 : 1));
}

async function runAll(tests, o, ctx, progress) {
  const results = new Map();
  const running = new Set();
  let serial = 0;
  const onSignal = (sig) => {
    for (const pgid of running) killGroup(pgid);
    progress.end();
    process.stderr.write(`\ninterrupted (${sig})\n`);
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const runQueue = async (queue, jobs) => {
    const worker = async (threadId) => {
      while (queue.length) {
        const t = queue.shift();
        const r = await runTest(t, {
          nodeBin: ctx.nodeBin, root: ctx.root, register: o.register, extraFlags: ctx.extraFlags,
          timeoutMs: o.timeout * 1000, workDir: ctx.workDir, tmpRoot: ctx.tmpRoot,
          threadId, serialId: serial++,
        }, running);
        results.set(t.key, r);
        // Print failures as they happen, except ones expectations.json
        // already lists with that status: those are noise while watching.
        const e = o.register && ctx.expected[t.key];
        const notable = r.status !== 'pass' && r.status !== 'skip' && !(e && e.status === r.status);
        progress.update(t.key, r.status, notable ? `${r.status.toUpperCase()} ${t.key}: ${r.reason}` : null);
      }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, queue.length) }, (_, i) => worker(i)));
  };

  // test.py runs test/sequential one at a time: those tests use fixed ports
  // (common.PORT) or are timing sensitive.
  await runQueue(schedule(tests.filter((t) => t.parallel), o.report), o.jobs);
  await runQueue(schedule(tests.filter((t) => !t.parallel), o.report), 1);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return results;
}

// Flags that let an older major's tests run on a newer binary the way they ran
// on their own: Node 25+ defines a localStorage getter that warns
// (ExperimentalWarning, "--localstorage-file was not provided") when read, and
// the v24 tree's test/common/index.js reads every global in its leak check, so
// every test that fails on any warning would fail on stock Node too. Node's
// own newer tree does not read it. Only flags the binary accepts are used.
const OLDER_TREE_FLAGS = [{ from: 25, flag: '--no-experimental-webstorage' }];

function olderTreeFlags(bin, major) {
  const { spawnSync } = require('node:child_process');
  return OLDER_TREE_FLAGS.filter((f) => major >= f.from)
    .map((f) => f.flag)
    .filter((flag) => spawnSync(bin, [flag, '-e', '0'], { stdio: 'ignore', timeout: 30000 }).status === 0);
}

function count(results, keys) {
  const c = { pass: 0, fail: 0, timeout: 0, unserved: 0, skip: 0 };
  for (const k of keys) c[results.get(k).status]++;
  c.failed = c.fail + c.timeout + c.unserved;
  return c;
}

function fmtCounts(c) {
  const detail = ['fail', 'timeout', 'unserved'].filter((s) => c[s]).map((s) => `${c[s]} ${s}`).join(', ');
  return `${c.pass} passed, ${c.failed} failed${detail ? ` (${detail})` : ''}, ${c.skip} skipped`;
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err.message}\n\n${HELP}`);
    return 2;
  }
  if (o.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const log = (m) => process.stderr.write(`[node-compat] ${m}\n`);

  const node = resolveNode(o.node, o.cache, log);
  const cli = withOpensslCli(node, o.cache, log);
  node.bin = cli.bin;
  const major = majorOf(node.version);
  // One report per major and mode: it also orders the next run of the same
  // kind (longest tests first), which another major's durations would not.
  o.report = o.report ||
    path.join(o.cache, `node-compat-node${major}${o.register ? '' : '-baseline'}.json`);
  const tree = await obtainNodeTests({
    nodeVersion: node.version, nodeSrc: o.nodeSrc, cacheDir: o.cache, refresh: o.refresh, log,
  });
  const treeMajor = majorOf(tree.version);
  const olderTree = tree.version !== 'unknown' && treeMajor < major;
  if (treeMajor !== major && tree.version !== 'unknown') {
    log(`warning: tests are from Node ${tree.version} but the binary is ${node.version}`);
  }
  const extraFlags = olderTree ? olderTreeFlags(node.bin, major) : [];
  if (extraFlags.length) log(`older tree on a newer binary: every test also gets ${extraFlags.join(' ')}`);
  if (o.register && !fs.existsSync(o.register)) {
    log(`${path.relative(process.cwd(), o.register)} does not exist; use --baseline to run on stock Node`);
    return 2;
  }

  const tests = selectTests(tree.root, o);
  if (o.list) {
    for (const t of tests) {
      const kinds = [t.createsServer && 'http', t.createsHttpsServer && 'https'].filter(Boolean);
      process.stdout.write(`${t.key}${kinds.length ? `  (${kinds.join(' + ')} server)` : '  (no server)'}\n`);
    }
    return 0;
  }
  if (!tests.length) {
    log('no test matches');
    return 2;
  }

  const majorKey = `node${major}`;
  const allExpected = expectations.load(EXPECTATIONS_FILE);
  const expected = expectations.forTree(allExpected[majorKey], tree.version);

  const runDir = path.join(o.cache, 'node-compat', `run-${process.pid}`);
  const ctx = {
    nodeBin: node.bin, root: tree.root, expected, extraFlags,
    workDir: path.join(runDir, 'work'), tmpRoot: path.join(runDir, 'tmp'),
  };
  fs.rmSync(runDir, { recursive: true, force: true });
  fs.mkdirSync(ctx.workDir, { recursive: true });
  fs.mkdirSync(ctx.tmpRoot, { recursive: true });

  const mode = o.register ? `fast-http (-r ${path.relative(REPO_ROOT, o.register)})` : 'baseline (stock node, no preload)';
  log(`${node.version} ${node.bin}; tests from Node ${tree.version} (${tree.source}); ` +
    `openssl-cli: ${cli.opensslCli || 'none (tests that need it skip)'}`);
  log(`${mode}; ${tests.length} tests, -j${o.jobs}, timeout ${o.timeout}s, ${os.cpus().length} cpus`);

  const start = Date.now();
  const progress = new Progress(tests.length);
  const results = await runAll(tests, o, ctx, progress);
  progress.end();
  const elapsed = Date.now() - start;
  fs.rmSync(runDir, { recursive: true, force: true });
  try {
    fs.rmdirSync(path.dirname(runDir)); // only if no other run is using it
  } catch {
    // not empty: a concurrent run
  }

  const keys = tests.map((t) => t.key);
  const serverKeys = tests.filter((t) => t.createsServer).map((t) => t.key);
  const httpsKeys = tests.filter((t) => t.createsHttpsServer).map((t) => t.key);
  const all = count(results, keys);
  const srv = count(results, serverKeys);
  const httpsSrv = count(results, httpsKeys);

  const report = {
    date: new Date(start).toISOString(),
    mode: o.register ? 'fast-http' : 'baseline',
    node: { bin: node.bin, version: node.version },
    tree: tree,
    options: {
      https: o.https, sequential: o.sequential, jobs: o.jobs, timeout: o.timeout, filters: o.filters,
      extraFlags,
    },
    durationMs: elapsed,
    counts: {
      files: keys.length, httpServerFiles: serverKeys.length, all, httpServer: srv,
      ...(o.https ? { httpsServerFiles: httpsKeys.length, httpsServer: httpsSrv } : {}),
    },
    tests: {},
  };
  for (const t of tests) {
    const r = results.get(t.key);
    report.tests[t.key] = {
      status: r.status, reason: r.reason, duration: r.duration, exitCode: r.exitCode, signal: r.signal,
      createsServer: t.createsServer, createsHttpsServer: t.createsHttpsServer, flags: t.flags,
      stats: r.stats, output: r.output,
    };
  }
  fs.mkdirSync(path.dirname(o.report), { recursive: true });
  fs.writeFileSync(o.report, `${JSON.stringify(report, null, 2)}\n`);

  const out = (s = '') => process.stdout.write(`${s}\n`);
  let exitCode = 0;
  out();
  if (!o.register) {
    const bad = keys.filter((k) => results.get(k).status !== 'pass');
    if (bad.length) {
      out(`Not passing on stock ${node.version}:`);
      for (const k of bad) out(`  ${results.get(k).status.padEnd(8)} ${k}: ${results.get(k).reason}`);
      out();
    }
  } else {
    const { regressions, stale, flipped } = expectations.compare(results, expected);
    if (o.update) {
      const n = expectations.update(EXPECTATIONS_FILE, allExpected, majorKey, results, tree.version);
      out(`Updated ${path.relative(process.cwd(), EXPECTATIONS_FILE)} [${majorKey}]: ` +
        `${n.added} added, ${n.changed} changed, ${n.removed} removed; ${n.todo} reasons are TODO`);
    } else {
      if (regressions.length) {
        out(`UNEXPECTED FAILURES (${regressions.length}) -- worse than expectations.json [${majorKey}] says:`);
        for (const x of regressions) {
          out(`  ${x.name}: ${x.status}${x.expected !== 'pass' ? ` (expected ${x.expected})` : ''} -- ${x.reason}`);
        }
        out();
      }
      if (stale.length) {
        out(`UNEXPECTED PASSES (${stale.length}) -- stale entries in expectations.json [${majorKey}]; ` +
          'fix them or run with --update-expectations:');
        for (const x of stale) {
          out(`  ${x.name}: ${x.status} (listed as ${x.expected}: ${x.listedReason})` +
            `${x.status !== 'pass' ? ` -- ${x.reason}` : ''}`);
        }
        out();
      }
      if (regressions.length || stale.length) exitCode = 1;
    }
    if (flipped.length) {
      out(`Note (not an error): ${flipped.map((x) => `${x.name} ${x.expected} -> ${x.status}`).join(', ')}`);
    }
    // The failures (not the skips) that expectations.json lists, by kind.
    const listed = keys.filter((k) => !['pass', 'skip'].includes(results.get(k).status) && expected[k]);
    const kinds = { 'fast-http': 0, stock: 0, TODO: 0 };
    for (const k of listed) kinds[expectations.kindOf(expected[k]) || 'TODO']++;
    out(`Expected (expectations.json [${majorKey}]): ${kinds['fast-http']} fast-http differences, ` +
      `${kinds.stock} failing on stock Node too${kinds.TODO ? `, ${kinds.TODO} without a reason (TODO)` : ''}`);
  }
  const treeNote = olderTree ? ` (Node ${treeMajor}'s tree: no Node ${major} tree to be had)` : '';
  out(`Node ${node.version}, tests v${tree.version}${treeNote}, ${report.mode}, ${fmtTime(elapsed)} (report: ${path.relative(process.cwd(), o.report)})`);
  out(`files: ${keys.length} total, ${serverKeys.length} create an http server` +
    `${o.https ? `, ${httpsKeys.length} an https server` : ''}`);
  out(`  all files:          ${fmtCounts(all)}`);
  out(`  http-server files:  ${fmtCounts(srv)}`);
  if (o.https) out(`  https-server files: ${fmtCounts(httpsSrv)}`);
  out(`${all.pass} passed, ${all.failed} failed${all.skip ? `, ${all.skip} skipped` : ''}`);
  return exitCode;
}

// `node --test test/` (Node 20) runs every .js file under test/, this one
// included; a full compat run is not what that command is for.
if (require.main === module && !process.env.NODE_TEST_CONTEXT) {
  main().then((code) => {
    process.exitCode = code;
  }, (err) => {
    process.stderr.write(`[node-compat] ${err.stack || err.message}\n`);
    process.exitCode = 2;
  });
}

module.exports = { parseArgs, selectTests };
