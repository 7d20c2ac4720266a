'use strict';
// Compiles the addon from source with the machine's cargo for this machine and lays it out the
// napi-rs way (`fast-http.<triple>.node` next to package.json), where lib/internal/native.js
// finds it.
// `npm run build` (--force) always runs cargo; the install hook (scripts/install.js) calls it
// without --force, which skips cargo when the binary is newer than every source file.
// The per-platform release packages are built by scripts/build-platforms.js.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { binaryName } = require('../lib/internal/binary-name');

const root = path.join(__dirname, '..');
const force = process.argv.includes('--force');
const target = path.join(root, binaryName());
const profile = process.env.FAST_HTTP_PROFILE === 'debug' ? 'debug' : 'release';

function newestSource(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

if (!force && fs.existsSync(target)) {
  const built = fs.statSync(target).mtimeMs;
  const sources = Math.max(
    newestSource(path.join(root, 'src')),
    fs.statSync(path.join(root, 'Cargo.toml')).mtimeMs,
  );
  if (built >= sources) process.exit(0);
}

const cargo = process.env.CARGO || 'cargo';
const args = ['build', '--lib', '--manifest-path', path.join(root, 'Cargo.toml')];
if (profile === 'release') args.push('--release');
console.log(`fast-http: compiling the native addon (${cargo} ${args.join(' ')})`);
const res = spawnSync(cargo, args, { stdio: 'inherit', cwd: root });
if (res.error) {
  console.error(`fast-http: could not run cargo (${res.error.message}). ` +
    'Install Rust (https://rustup.rs) to build fast-http from source.');
  process.exit(1);
}
if (res.status !== 0) process.exit(res.status);

const targetDir = process.env.CARGO_TARGET_DIR || path.join(root, 'target');
const lib = process.platform === 'darwin' ? 'libfast_http.dylib'
  : process.platform === 'win32' ? 'fast_http.dll' : 'libfast_http.so';
const built = path.join(targetDir, profile, lib);
// Copy through a temp file and rename, so a running process never maps a half-written file.
const tmp = `${target}.${process.pid}.tmp`;
fs.copyFileSync(built, tmp);
fs.renameSync(tmp, target);
console.log(`fast-http: built ${path.basename(target)}`);
