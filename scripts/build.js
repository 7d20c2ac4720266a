'use strict';
// Compiles the addon from source with the machine's cargo for this machine and lays it out the
// napi-rs way (`fast-http.<triple>.node` next to package.json), where lib/internal/native.js
// finds it.
// `npm run build` (--force) always runs cargo; the install hook (scripts/install.js) calls it
// without --force, which skips cargo when the binary is newer than every source file.
// The per-platform release packages are built by scripts/build-platforms.js.
//
// A release build from scratch compiles ~120 crates, about 1.5 minutes on 2 cores: it says so
// once at its start, then shows progress. On a terminal that is cargo's own progress bar;
// elsewhere (CI logs, `npm install --foreground-scripts` piped to a file) one line per tenth of
// the crates, with cargo's warnings and errors as they come.
const { spawn, spawnSync } = require('node:child_process');
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
const manifest = ['--manifest-path', path.join(root, 'Cargo.toml')];
const args = ['build', '--lib', ...manifest];
if (profile === 'release') args.push('--release');

/** How many crates this machine's build compiles (cargo tree, offline), or null. */
function crateCount() {
  const r = spawnSync(cargo, ['tree', '-e', 'normal,build', '--prefix', 'none', '--offline',
    ...manifest], { cwd: root, encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0 || typeof r.stdout !== 'string') return null;
  const names = new Set(r.stdout.split('\n').map((l) => l.replace(/ \(.*$/, '').trim())
    .filter(Boolean));
  return names.size || null;
}

function fmtTime(ms) {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** Runs cargo; resolves its exit status, or rejects when it cannot be started. */
function runCargo(total) {
  const started = Date.now();
  const tty = process.stderr.isTTY;
  const child = spawn(cargo, args, { cwd: root, stdio: ['ignore', 'inherit', tty ? 'inherit' : 'pipe'] });
  if (!tty) {
    let compiled = 0;
    let shown = 0;
    const step = Math.max(1, Math.ceil((total ?? 100) / 10));
    let rest = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        if (/^\s*(Compiling|Downloaded|Downloading|Fresh|Locking|Adding|Updating) /.test(line)) {
          if (/^\s*Compiling /.test(line)) compiled++;
          if (compiled - shown >= step) {
            shown = compiled;
            console.log(`fast-http: compiled ${compiled}${total ? `/${total}` : ''} crates ` +
              `(${fmtTime(Date.now() - started)})`);
          }
        } else if (line.trim() !== '') {
          process.stderr.write(`${line}\n`);
        }
      }
    });
    child.stderr.on('end', () => {
      if (rest.trim() !== '') process.stderr.write(`${rest}\n`);
    });
  }
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? 1, signal, ms: Date.now() - started }));
  });
}

async function main() {
  const total = crateCount();
  console.log(`fast-http: compiling the native addon from source (${cargo} ${args.join(' ')}` +
    `${total ? `, ${total} crates` : ''}): about 1.5 minutes on 2 cores from scratch, less ` +
    'when cargo has built it before.');
  let res;
  try {
    res = await runCargo(total);
  } catch (err) {
    console.error(`fast-http: could not run cargo (${err.message}). ` +
      'Install Rust (https://rustup.rs) to build fast-http from source.');
    process.exit(1);
  }
  if (res.code !== 0) process.exit(res.code);
  install(res.ms);
}

/** The library cargo built, as the loader finds it. */
function install(ms) {
  const targetDir = process.env.CARGO_TARGET_DIR || path.join(root, 'target');
  const lib = process.platform === 'darwin' ? 'libfast_http.dylib'
    : process.platform === 'win32' ? 'fast_http.dll' : 'libfast_http.so';
  const built = path.join(targetDir, profile, lib);
  // Copy through a temp file and rename, so a running process never maps a half-written file.
  const tmp = `${target}.${process.pid}.tmp`;
  fs.copyFileSync(built, tmp);
  fs.renameSync(tmp, target);
  console.log(`fast-http: built ${path.basename(target)} in ${fmtTime(ms)}`);
}

main();
