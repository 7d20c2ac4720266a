'use strict';

// Resolves the node binary under test. `--node 22` / `--node 24` / `--node 26`
// fetch the official build from npm's per-platform `node-<os>-<arch>` package
// (the registry is reachable where nodejs.org may not be) and cache it in
// <cache>/node<major>/package/bin/node.
//
// A bare major means the version pinned in NODE_VERSIONS, so that `npm test`
// on a fresh clone tests the same binaries as yesterday's run and the
// expectations in expectations.json stay true until someone moves a pin on
// purpose. `--node 24.21.0` takes that exact version instead (same cache
// folder: the cached binary is replaced when its version is not the one asked
// for).

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

// The newest release of each major on npm when the pins last moved. Moving a
// pin: change it here, run `node test/node-compat/run.js --node N -j2` and
// `--baseline`, and bring expectations.json [nodeN] up to date.
const NODE_VERSIONS = { 20: '20.20.2', 22: '22.23.5', 24: '24.22.3', 26: '26.12.1' };

function versionOf(bin) {
  const r = spawnSync(bin, ['-p', 'process.version'], { encoding: 'utf8', timeout: 30000 });
  if (r.status !== 0) throw new Error(`cannot run ${bin}: ${(r.stderr || r.error || '').toString().trim()}`);
  return r.stdout.trim();
}

function fromNpm(version, cacheDir, log) {
  const major = Number(version.split('.')[0]);
  const dir = path.resolve(cacheDir, `node${major}`);
  const bin = path.join(dir, 'package', 'bin', 'node');
  if (fs.existsSync(bin)) {
    let have = null;
    try {
      have = versionOf(bin);
    } catch {
      // a broken binary: fetch it again
    }
    if (have === `v${version}`) return bin;
    log(`cached ${path.relative(process.cwd(), bin)} is ${have || 'unusable'}, want v${version}`);
    fs.rmSync(path.join(dir, 'package'), { recursive: true, force: true });
  }
  fs.mkdirSync(dir, { recursive: true });
  const pkg = `node-${process.platform}-${process.arch}@${version}`;
  log(`npm pack ${pkg}`);
  const r = spawnSync('npm', ['pack', pkg, '--json', '--pack-destination', dir], {
    cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60 * 1000,
  });
  if (r.status !== 0) {
    const lines = (r.stderr || String(r.error)).trim().split('\n');
    const why = lines.find((l) => /^npm error (?!A complete log)/.test(l)) || lines.pop();
    throw new Error(`npm pack ${pkg} failed: ${why}`);
  }
  const { filename } = JSON.parse(r.stdout)[0];
  const tgz = path.join(dir, filename);
  const x = spawnSync('tar', ['-xzf', tgz, '-C', dir, 'package/bin/node'], { encoding: 'utf8' });
  fs.rmSync(tgz, { force: true });
  if (x.status !== 0 || !fs.existsSync(bin)) throw new Error(`extracting node from ${filename} failed: ${x.stderr}`);
  return bin;
}

/**
 * @param {string|undefined} spec  undefined (this node), a major ("24": its pinned version),
 *                                 an exact version ("24.21.0") or a path
 * @returns {{bin: string, version: string}}
 */
function resolveNode(spec, cacheDir, log) {
  if (!spec) return { bin: process.execPath, version: process.version };
  let version = null;
  if (/^\d+$/.test(spec)) {
    version = NODE_VERSIONS[spec];
    if (!version) throw new Error(`no pinned version for Node ${spec} (pinned: ${Object.keys(NODE_VERSIONS).join(', ')}); give an exact version such as ${spec}.0.0`);
  } else if (/^v?\d+\.\d+\.\d+$/.test(spec)) {
    version = spec.replace(/^v/, '');
  }
  if (version && process.version === `v${version}`) return { bin: process.execPath, version: process.version };
  const bin = version ? fromNpm(version, cacheDir, log) : path.resolve(spec);
  return { bin, version: versionOf(bin) };
}

// Node's tests that drive the openssl CLI (test-https-foafssl, test-https-client-renegotiation-
// limit, ...) look for it where a source build puts it: `openssl-cli` beside process.execPath
// (test/common's opensslCli, unless node links a shared OpenSSL). Official builds ship none,
// so those tests skip on stock and with fast-http alike and prove nothing. The machine's
// `openssl` is linked there instead; a binary in a folder we must not write to (/usr/bin/node)
// is copied into the cache first, because execPath is the resolved path of the running file.
function whichOpenssl() {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const f = path.join(dir || '.', 'openssl');
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return f;
    } catch {
      // not in this folder
    }
  }
  return null;
}

/**
 * `node` with an `openssl-cli` beside it, or `node` itself when the machine has no openssl
 * or the binary uses a shared OpenSSL (then test/common runs `openssl` from PATH).
 * @returns {{bin: string, opensslCli: string|null}}
 */
function withOpensslCli(node, cacheDir, log) {
  const openssl = whichOpenssl();
  if (!openssl) return { bin: node.bin, opensslCli: null };
  const shared = spawnSync(node.bin, ['-p', 'process.config.variables.node_shared_openssl'],
    { encoding: 'utf8', timeout: 30000 });
  if (shared.stdout.trim() === 'true') return { bin: node.bin, opensslCli: openssl };
  let bin = fs.realpathSync(node.bin);
  const cache = path.resolve(cacheDir);
  if (!bin.startsWith(cache + path.sep)) {
    const dir = path.join(cache, 'node-with-openssl', node.version);
    const copy = path.join(dir, 'node');
    const st = fs.statSync(bin);
    const have = fs.existsSync(copy) && fs.statSync(copy);
    if (!have || have.size !== st.size || have.mtimeMs !== st.mtimeMs) {
      log(`copying ${bin} to ${path.relative(process.cwd(), dir)}/ to give it an openssl-cli`);
      fs.mkdirSync(dir, { recursive: true });
      fs.copyFileSync(bin, copy);
      fs.chmodSync(copy, 0o755);
      fs.utimesSync(copy, st.atime, st.mtime);
    }
    bin = copy;
  }
  const cli = path.join(path.dirname(bin), 'openssl-cli');
  let current = null;
  try {
    current = fs.readlinkSync(cli);
  } catch {
    // none yet
  }
  if (current !== openssl) {
    fs.rmSync(cli, { force: true });
    fs.symlinkSync(openssl, cli);
  }
  return { bin, opensslCli: openssl };
}

module.exports = { resolveNode, withOpensslCli, NODE_VERSIONS };
