'use strict';
// npm's install hook. It compiles only when it has to:
//  - in a git checkout of fast-http: always (incrementally) from source, since there is no
//    prebuilt binary for the code being worked on;
//  - elsewhere, nothing when the prebuilt package fast-http-native-<triple> is installed and
//    loads;
//  - else, when cargo is on PATH, a build from source into this package's folder;
//  - else (or when that build fails, or on Windows) a short notice and success: failing here
//    would fail the whole app's `npm install` (on every OS: the main package has no `os`
//    field), and at require time fast-http falls back to node:http with one warning line that
//    says what to do (lib/index.js).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { packageName, triple } = require('../lib/internal/binary-name');

const root = path.join(__dirname, '..');
const t = triple();
// The name the app installed this package under (`fast-http` with the README's npm alias).
const name = path.basename(path.dirname(root)) === 'node_modules' ? path.basename(root)
  : require('../package.json').name;
const checkout = fs.existsSync(path.join(root, '.git'));

// Loading (not just finding) the prebuilt binary catches one that does not fit after all,
// e.g. a glibc older than the one it was linked against; a source build can still help then.
function prebuiltLoads() {
  let file;
  try {
    file = require.resolve(packageName(t), { paths: [root] });
  } catch {
    return false;
  }
  try {
    require(file);
    return true;
  } catch (err) {
    console.warn(`fast-http: ${packageName(t)} is installed but does not load ` +
      `(${err.message.split('\n')[0]}); building from source instead.`);
    return false;
  }
}

function hasCargo() {
  const r = spawnSync(process.env.CARGO || 'cargo', ['--version'], { stdio: 'ignore' });
  return !r.error && r.status === 0;
}

function main() {
  if (!checkout && prebuiltLoads()) return 0;
  if (!checkout && process.platform === 'win32') {
    // The addon does not build on Windows yet (docs/windows.md): no point running cargo.
    console.warn(`fast-http: no native addon for ${t} yet: apps get node:http's own server.`);
    return 0;
  }
  if (!hasCargo()) {
    console.warn(`fast-http: no prebuilt binary for ${t} is installed and cargo was not ` +
      'found, so the native addon was not built: apps get node:http\'s own server. Install ' +
      `Rust (https://rustup.rs) and run \`npm rebuild ${name}\`.`);
    return 0;
  }
  const env = { ...process.env };
  let scratch = null;
  if (!checkout && !env.CARGO_TARGET_DIR) {
    // An installed package keeps only the .node: cargo's target/ (hundreds of MB) goes to a
    // temp folder removed afterwards. A checkout keeps target/ for incremental builds.
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-build-'));
    env.CARGO_TARGET_DIR = scratch;
  }
  try {
    const r = spawnSync(process.execPath, [path.join(__dirname, 'build.js')], {
      stdio: 'inherit', env,
    });
    if (r.status === 0 || checkout) return r.status ?? 1;
    // A failed build must not fail the app's `npm install`: the app runs on node:http, and
    // says so at start-up with the fix.
    console.warn(`fast-http: building the native addon for ${t} failed (see above), so apps ` +
      `get node:http's own server. Fix the build, then run \`npm rebuild ${name}\`.`);
    return 0;
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

process.exitCode = main();
