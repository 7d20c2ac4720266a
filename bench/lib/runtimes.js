'use strict';

// Bun and Deno, the other runtimes the bench measures (issue #34 item 7): their node:http (and
// Deno.serve) run the same server files as Node. Both are published on npm as one platform
// package each holding the binary, so no other download site is needed: `npm pack` fetches the
// tarball from the registry into the git-ignored .cache/bench-deps/, where it is unpacked once
// and kept (<name>-<version>/package/...). The versions are pinned, so two runs of the bench on
// two days measure the same runtimes; BENCH_BUN / BENCH_DENO name another binary instead.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const RUNTIMES = {
  bun: {
    label: 'Bun',
    pkg: '@oven/bun-linux-x64',
    // Bun 1.4.5, the newest 1.x on npm when these rows were added (2026-12).
    version: '1.4.5',
    bin: path.join('package', 'bin', 'bun'),
    env: 'BENCH_BUN',
  },
  deno: {
    label: 'Deno',
    pkg: '@deno/linux-x64-glibc',
    // Deno 2.9.6, the newest 2.x on npm when these rows were added (2026-12).
    version: '2.9.6',
    bin: path.join('package', 'deno'),
    env: 'BENCH_DENO',
  },
};

/** The folder a runtime's package is unpacked into. */
function runtimeDir(prefix, name) {
  const r = RUNTIMES[name];
  return path.join(prefix, `${name}-${r.version}`);
}

/** `<binary> --version`'s first line, or null when it does not run here. */
function versionLine(bin) {
  // Neither runtime needs a cache for this: none is written under $HOME.
  const env = { ...process.env, DENO_NO_UPDATE_CHECK: '1', BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0' };
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 60000, env });
  if (r.error || r.status !== 0) return null;
  return r.stdout.trim().split('\n')[0];
}

/**
 * { bin, version, describe } for runtime `name` ('bun' or 'deno'), fetched with `npm pack` into
 * `prefix` when missing and `install` allows it (`note(text)` says so first), or { error }.
 */
function ensureRuntime(name, { prefix, install, note }) {
  const r = RUNTIMES[name];
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return { error: `${r.pkg} is the linux-x64 build; this is ${process.platform}-${process.arch} (${r.env}=<binary> runs another)` };
  }
  const custom = process.env[r.env];
  if (custom) {
    const v = versionLine(custom);
    if (!v) return { error: `${r.env}=${custom} does not run` };
    return { bin: custom, version: v, describe: `${v} (${r.env}=${custom})` };
  }
  const dir = runtimeDir(prefix, name);
  const bin = path.join(dir, r.bin);
  const spec = `${r.pkg}@${r.version}`;
  if (!fs.existsSync(bin)) {
    if (!install) return { error: `${spec} is not in ${path.relative(process.cwd(), prefix) || prefix} and --no-install was given` };
    note(`bench: the ${r.label} rows need its binary: fetching ${spec} from the npm registry `
      + `(npm pack, about 50 MB) into ${path.relative(process.cwd(), dir)}/. --servers without ${name} leaves them out.`);
    const err = fetchPackage(spec, dir);
    if (err) return { error: `${spec}: ${err}` };
  }
  const v = versionLine(bin);
  if (!v) return { error: `${bin} does not run on this machine` };
  return { bin, version: v, describe: `${r.label} ${v.replace(/^deno /, '').split(' ')[0]} (npm ${spec}, ${r.bin})` };
}

/** `npm pack <spec>` into a scratch folder, unpacked into `dir`; an error string or null. */
function fetchPackage(spec, dir) {
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  try {
    const pack = spawnSync('npm', ['pack', spec, '--pack-destination', tmp, '--json'],
      { encoding: 'utf8', timeout: 600000, cwd: tmp });
    if (pack.error || pack.status !== 0) {
      return `npm pack failed: ${pack.error ? pack.error.message : (pack.stderr || '').trim().split('\n').slice(-1)[0]}`;
    }
    const [{ filename }] = JSON.parse(pack.stdout);
    const tar = spawnSync('tar', ['xzf', path.join(tmp, filename), '-C', tmp], { encoding: 'utf8' });
    if (tar.error || tar.status !== 0) return `tar failed: ${tar.error ? tar.error.message : tar.stderr.trim()}`;
    fs.rmSync(path.join(tmp, filename));
    // Renamed into place last: a folder that exists is a complete one.
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
    return null;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

module.exports = { RUNTIMES, ensureRuntime, runtimeDir };
