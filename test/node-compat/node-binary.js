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

module.exports = { resolveNode, NODE_VERSIONS };
