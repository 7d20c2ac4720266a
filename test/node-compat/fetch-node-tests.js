'use strict';

// Obtains the test/ folder of a Node.js source tree for a given Node major and
// caches it under <cache>/node-tests/v<version>/ (repo's .cache/ is
// git-ignored). Sources, first that works wins:
//   1. an explicit local tree (--node-src DIR or NODE_SRC)
//   2. Debian's `nodejs` source package, fetched with apt-get but against a
//      private sources list / lists dir, so the system's apt state is left
//      alone
// Nothing else is downloaded: the project fetches only from package registries.
//
// Usable as a module (obtainNodeTests) or directly:
//   node test/node-compat/fetch-node-tests.js [--node PATH] [--node-src DIR]
//        [--cache DIR] [--refresh]
// which prints the root of the tree (the directory containing test/).

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const DEFAULT_CACHE = path.join(REPO_ROOT, '.cache');

// Debian suites carrying each Node major, tried in order (sid's orig tarball is
// sometimes already gone from the mirror while testing still has one). A suite
// may carry several majors at once (sid has nodejs 22 and 24): the newest
// version of the wanted major is picked by name. No Debian suite carries Node
// 26 (nor an odd major); see OLDER_TREE_FALLBACK.
const DEBIAN_SUITES = { 20: ['trixie'], 22: ['sid'], 24: ['sid', 'forky'] };

// A major whose own test tree cannot be had (no Debian suite carries it) runs against the newest tree of an older major that
// can be had, said loudly in the run's header and in the report. Only majors
// newer than every tree Debian carries do that: a missing 20/22/24 tree stays
// an error.
const NEWEST_DEBIAN_MAJOR = Math.max(...Object.keys(DEBIAN_SUITES).map(Number));

/**
 * The Debian mirror this machine's apt already uses (its `deb` lines), so the
 * private deb-src list points at the same place.
 */
function debianMirror() {
  const files = ['/etc/apt/sources.list'];
  try {
    for (const f of fs.readdirSync('/etc/apt/sources.list.d')) {
      if (/\.(list|sources)$/.test(f)) files.push(path.join('/etc/apt/sources.list.d', f));
    }
  } catch {}
  for (const f of files) {
    let text;
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const m of text.matchAll(/(?:^deb\s+(?:\[[^\]]*\]\s+)?|^URIs:\s*)(\S+)/gm)) {
      const uri = m[1].replace(/\/+$/, '');
      if (/\/debian$/.test(uri)) return uri;
    }
  }
  return null;
}

const APT_TIMEOUT_MS = 5 * 60 * 1000;

function hasTestTree(root) {
  return fs.existsSync(path.join(root, 'test', 'parallel')) &&
    fs.existsSync(path.join(root, 'test', 'common', 'index.js'));
}

function majorOf(version) {
  return Number(String(version).replace(/^v/, '').split('.')[0]);
}

// Version of a local tree: src/node_version.h is authoritative when the tree
// is a full checkout; a cached test-only tree is named after its version.
function versionOfTree(root) {
  try {
    const h = fs.readFileSync(path.join(root, 'src', 'node_version.h'), 'utf8');
    const get = (k) => (new RegExp(`#define ${k} (\\d+)`).exec(h) || [])[1];
    const v = [get('NODE_MAJOR_VERSION'), get('NODE_MINOR_VERSION'), get('NODE_PATCH_VERSION')];
    if (v.every(Boolean)) return v.join('.');
  } catch {
    // not a full checkout
  }
  const m = /v?(\d+\.\d+\.\d+)/.exec(path.basename(path.resolve(root)));
  return m ? m[1] : 'unknown';
}

function compareVersions(a, b) {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return 0;
}

// Newest complete cached tree for the major. A tree is only renamed into place
// once extraction finished, so a half-extracted one is never picked up.
function findCached(testsDir, major) {
  let names;
  try {
    names = fs.readdirSync(testsDir);
  } catch {
    return null;
  }
  const versions = names
    .map((n) => /^v(\d+\.\d+\.\d+)$/.exec(n))
    .filter((m) => m && majorOf(m[1]) === major && hasTestTree(path.join(testsDir, m[0])))
    .map((m) => m[1])
    .sort(compareVersions);
  if (!versions.length) return null;
  const version = versions[versions.length - 1];
  return { root: path.join(testsDir, `v${version}`), version };
}

// Extracts only <top>/test/ from a node source tarball into
// <testsDir>/v<version>/test.
function extractTests(tarball, testsDir, version, log) {
  const dest = path.join(testsDir, `v${version}`);
  const partial = `${dest}.partial`;
  fs.rmSync(partial, { recursive: true, force: true });
  fs.mkdirSync(partial, { recursive: true });
  log(`extracting test/ from ${path.basename(tarball)}`);
  const r = spawnSync('tar', [
    '-xJf', tarball, '-C', partial, '--strip-components=1',
    '--wildcards', '--no-wildcards-match-slash', '*/test/',
  ], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0 || !hasTestTree(partial)) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw new Error(`tar failed to extract test/ from ${tarball}: ${(r.stderr || r.error || '').toString().trim()}`);
  }
  fs.rmSync(dest, { recursive: true, force: true });
  fs.renameSync(partial, dest);
  return dest;
}

function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function fromDebian(testsDir, major, log) {
  const suites = DEBIAN_SUITES[major];
  if (!suites) return { error: `no Debian suite known to carry Node ${major}` };
  if (!which('apt-get')) return { error: 'apt-get not available' };
  const mirror = debianMirror();
  if (!mirror) return { error: 'no Debian mirror in the apt configuration' };
  const errors = [];
  for (const suite of suites) {
    const r = fromDebianSuite(testsDir, major, suite, mirror, log);
    if (!r.error) return r;
    log(`debian ${suite}: ${r.error}`);
    errors.push(`${suite}: ${r.error}`);
  }
  return { error: errors.join('; ') };
}

function fromDebianSuite(testsDir, major, suite, mirror, log) {
  const dir = path.join(testsDir, `apt-${suite}`);
  const lists = path.join(dir, 'lists');
  const cache = path.join(dir, 'cache');
  fs.mkdirSync(path.join(lists, 'partial'), { recursive: true });
  fs.mkdirSync(path.join(cache, 'archives', 'partial'), { recursive: true });
  const sourcesList = path.join(dir, 'sources.list');
  fs.writeFileSync(sourcesList, `deb-src ${mirror} ${suite} main\n`);

  // Everything apt reads or writes is redirected into `dir`: the sources list,
  // the downloaded indexes and the binary caches (otherwise apt would rewrite
  // /var/cache/apt/*.bin from our private list).
  const opts = [
    '-o', `Dir::Etc::sourcelist=${sourcesList}`,
    '-o', 'Dir::Etc::sourceparts=-',
    '-o', `Dir::State::Lists=${lists}`,
    '-o', `Dir::Cache=${cache}`,
    '-o', 'APT::Get::List-Cleanup=0',
  ];
  // As root apt drops to the _apt user for downloads, which cannot write into
  // a root-owned cache dir; it falls back with a warning anyway, so skip the
  // attempt.
  if (process.getuid && process.getuid() === 0) opts.push('-o', 'APT::Sandbox::User=root');

  const run = (args) => spawnSync('apt-get', [...opts, ...args], {
    cwd: dir, encoding: 'utf8', timeout: APT_TIMEOUT_MS,
    stdio: ['ignore', 'pipe', 'pipe'],
  });

  log(`apt-get update (private sources list: deb-src ${suite})`);
  const upd = run(['-q', 'update']);
  if (upd.status !== 0) {
    return { error: `apt-get update failed: ${lastLine(upd.stderr || upd.stdout || String(upd.error))}` };
  }
  for (const f of fs.readdirSync(dir)) {
    if (f.startsWith('nodejs_')) fs.rmSync(path.join(dir, f), { force: true });
  }
  // `apt-get source nodejs` would take the suite's newest version, whatever
  // its major; ask for the newest one of this major by its exact version.
  const show = spawnSync('apt-cache', [...opts, 'showsrc', 'nodejs'], {
    cwd: dir, encoding: 'utf8', timeout: APT_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const versions = [...new Set([...(show.stdout || '').matchAll(/^Version: (\S+)$/gm)].map((m) => m[1]))];
  const upstream = (v) => /^(?:\d+:)?(\d+\.\d+\.\d+)/.exec(v);
  const ofMajor = versions.filter((v) => upstream(v) && majorOf(upstream(v)[1]) === major)
    .sort((a, b) => compareVersions(upstream(a)[1], upstream(b)[1]));
  if (!ofMajor.length) {
    return { error: `Debian ${suite} has no nodejs ${major}.x source (has: ${versions.join(', ') || 'none'})` };
  }
  const pick = ofMajor[ofMajor.length - 1];
  log(`apt-get source --download-only nodejs=${pick}`);
  const src = run(['-q', 'source', '--download-only', `nodejs=${pick}`]);
  // The .dsc / debian.tar.xz are sometimes already gone from the mirror (404)
  // and apt then exits non-zero, but the orig tarball, the only file needed,
  // was fetched: judge by the file, not by the exit code.
  const orig = fs.readdirSync(dir).find((f) => /^nodejs_\d+\.\d+\.\d+[^_]*\.orig\.tar\.xz$/.test(f));
  if (!orig) {
    const text = `${src.stdout || ''}\n${src.stderr || ''}\n${src.error || ''}`;
    const why = text.split('\n').find((l) => /\.orig\.tar/.test(l) && /^E:/.test(l)) || lastLine(text);
    return { error: `apt-get source did not yield nodejs_*.orig.tar.xz: ${why.trim()}` };
  }
  const version = /^nodejs_(\d+\.\d+\.\d+)/.exec(orig)[1];
  if (majorOf(version) !== major) {
    return { error: `Debian ${suite} has nodejs ${version}, not Node ${major}` };
  }
  const root = extractTests(path.join(dir, orig), testsDir, version, log);
  // The tarballs are ~20 MB and only needed for extraction; the lists stay so
  // the next update is incremental.
  for (const f of fs.readdirSync(dir)) {
    if (f.startsWith('nodejs_')) fs.rmSync(path.join(dir, f), { force: true });
  }
  return { root, version, source: `debian ${suite} (${orig})` };
}

function lastLine(text) {
  const lines = String(text).trim().split('\n').filter((l) => l.trim());
  return lines.length ? lines[lines.length - 1].trim() : '(no output)';
}

/**
 * @param {object} o
 * @param {string} o.nodeVersion  version of the node binary under test (v20.20.2)
 * @param {string} [o.nodeSrc]    local node source tree (overrides everything)
 * @param {string} [o.cacheDir]   defaults to <repo>/.cache
 * @param {boolean} [o.refresh]   ignore an existing cached tree
 * @param {(msg: string) => void} [o.log]
 * @returns {Promise<{root: string, version: string, source: string}>}
 */
async function obtainNodeTests(o) {
  const log = o.log || ((m) => process.stderr.write(`[fetch-node-tests] ${m}\n`));
  const major = majorOf(o.nodeVersion);
  const nodeSrc = o.nodeSrc || process.env.NODE_SRC;
  if (nodeSrc) {
    const root = path.resolve(nodeSrc);
    if (!hasTestTree(root)) throw new Error(`${root} has no test/parallel and test/common`);
    return { root, version: versionOfTree(root), source: `local tree ${root}` };
  }

  const testsDir = path.join(o.cacheDir || DEFAULT_CACHE, 'node-tests');
  if (!o.refresh) {
    const cached = findCached(testsDir, major);
    if (cached) return { ...cached, source: `cache ${cached.root}` };
  }
  fs.mkdirSync(testsDir, { recursive: true });
  try {
    return await obtainOwnTree(testsDir, major, o, log);
  } catch (err) {
    if (!(major > NEWEST_DEBIAN_MAJOR)) throw err;
    // Newer than anything Debian has: the newest older tree there is.
    for (let m = major - 1; m >= 20; m--) {
      if (!DEBIAN_SUITES[m] && !findCached(testsDir, m)) continue;
      log(`no Node ${major} test tree (${err.message.split('\n')[1].trim()}); using Node ${m}'s`);
      const r = await obtainNodeTests({ ...o, nodeVersion: `${m}.0.0`, nodeSrc: undefined, log });
      return { ...r, source: `${r.source}; no Node ${major} tree, so the Node ${m} one`, olderMajor: true };
    }
    throw err;
  }
}

async function obtainOwnTree(testsDir, major, o, log) {
  const errors = [];
  try {
    const r = fromDebian(testsDir, major, log);
    if (r.root) return r;
    errors.push(`debian: ${r.error}`);
  } catch (err) {
    errors.push(`debian: ${err.message}`);
  }
  throw new Error(`could not obtain Node ${major} tests:\n  ${errors.join('\n  ')}\n` +
    'Pass a local tree with --node-src DIR (or NODE_SRC=DIR).');
}

module.exports = { obtainNodeTests, versionOfTree, majorOf, hasTestTree };

// `node --test test/` (Node 20) runs every .js file under test/ as a test; do
// nothing in that case instead of downloading.
if (require.main === module && !process.env.NODE_TEST_CONTEXT) {
  const args = process.argv.slice(2);
  const opt = (name) => {
    const i = args.indexOf(name);
    return i === -1 ? undefined : args[i + 1];
  };
  const nodeBin = opt('--node') || process.execPath;
  const nodeVersion = nodeBin === process.execPath ? process.version :
    spawnSync(nodeBin, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim();
  obtainNodeTests({
    nodeVersion,
    nodeSrc: opt('--node-src'),
    cacheDir: opt('--cache') && path.resolve(opt('--cache')),
    refresh: args.includes('--refresh'),
  }).then((r) => {
    process.stderr.write(`[fetch-node-tests] Node ${r.version} tests from ${r.source}\n`);
    process.stdout.write(`${r.root}\n`);
  }, (err) => {
    process.stderr.write(`[fetch-node-tests] ${err.message}\n`);
    process.exitCode = 1;
  });
}
