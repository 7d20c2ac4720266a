'use strict';

// Resolves the node binary under test. `--node 22` / `--node 24` fetch the
// official build from npm's per-platform `node-<os>-<arch>` package (the
// registry is reachable where nodejs.org may not be) and cache it in
// <cache>/node<major>/package/bin/node.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

function versionOf(bin) {
  const r = spawnSync(bin, ['-p', 'process.version'], { encoding: 'utf8', timeout: 30000 });
  if (r.status !== 0) throw new Error(`cannot run ${bin}: ${(r.stderr || r.error || '').toString().trim()}`);
  return r.stdout.trim();
}

function fromNpm(major, cacheDir, log) {
  const dir = path.join(cacheDir, `node${major}`);
  const bin = path.join(dir, 'package', 'bin', 'node');
  if (fs.existsSync(bin)) return bin;
  fs.mkdirSync(dir, { recursive: true });
  const pkg = `node-${process.platform}-${process.arch}@${major}`;
  log(`npm pack ${pkg}`);
  const r = spawnSync('npm', ['pack', pkg, '--json', '--pack-destination', dir], {
    cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60 * 1000,
  });
  if (r.status !== 0) throw new Error(`npm pack ${pkg} failed: ${(r.stderr || String(r.error)).trim().split('\n').pop()}`);
  const { filename } = JSON.parse(r.stdout)[0];
  const tgz = path.join(dir, filename);
  const x = spawnSync('tar', ['-xzf', tgz, '-C', dir, 'package/bin/node'], { encoding: 'utf8' });
  fs.rmSync(tgz, { force: true });
  if (x.status !== 0 || !fs.existsSync(bin)) throw new Error(`extracting node from ${filename} failed: ${x.stderr}`);
  return bin;
}

/**
 * @param {string|undefined} spec  undefined (this node), a major ("24") or a path
 * @returns {{bin: string, version: string}}
 */
function resolveNode(spec, cacheDir, log) {
  if (!spec) return { bin: process.execPath, version: process.version };
  const bin = /^\d+$/.test(spec) ? fromNpm(Number(spec), cacheDir, log) : path.resolve(spec);
  return { bin, version: versionOf(bin) };
}

module.exports = { resolveNode };
