'use strict';
// A build from source says once at its start what it does and about how long it takes, then
// shows progress: where stderr is not a terminal (CI, `npm install --foreground-scripts` into a
// log) one line per tenth of the crates, with cargo's warnings and errors passed through, and
// the time it took at the end. A stand-in cargo (CARGO) plays a build of 20 crates, in a copy
// of the package's build script, so the real addon is left alone.
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, test } = require('node:test');
const { binaryName } = require('../lib/internal/binary-name');

const root = path.join(__dirname, '..');
const TIMEOUT = 60_000;
let tmp;
let pkg;

// `cargo tree` lists 20 crates (one twice, as cargo marks repeats); `cargo build` compiles
// them, prints a warning among them, and leaves a library where cargo would.
const FAKE_CARGO = `#!/usr/bin/env node
const fs = require('node:fs');
const path = require('node:path');
const crates = Array.from({ length: 20 }, (_, i) => 'crate' + i + ' v1.0.' + i);
if (process.argv[2] === 'tree') {
  console.log([...crates, crates[3] + ' (*)'].join('\\n'));
  process.exit(0);
}
for (const [i, c] of crates.entries()) {
  process.stderr.write('   Compiling ' + c + '\\n');
  if (i === 7) process.stderr.write('warning: unused variable: \`x\`\\n');
}
process.stderr.write('    Finished \`release\` profile [optimized] target(s) in 0.01s\\n');
const dir = path.join(process.env.CARGO_TARGET_DIR, 'release');
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, 'libfast_http.so'), 'not really a library');
`;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-build-progress-'));
  pkg = path.join(tmp, 'pkg');
  for (const f of ['package.json', 'Cargo.toml', 'scripts/build.js', 'lib/internal/binary-name.js']) {
    fs.mkdirSync(path.dirname(path.join(pkg, f)), { recursive: true });
    fs.copyFileSync(path.join(root, f), path.join(pkg, f));
  }
  fs.writeFileSync(path.join(tmp, 'cargo'), FAKE_CARGO, { mode: 0o755 });
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('a build from source: what and how long first, then progress, then the time it took', {
  timeout: TIMEOUT,
  skip: process.platform !== 'linux' && 'the stand-in leaves a Linux library name',
}, () => {
  const r = spawnSync(process.execPath, [path.join(pkg, 'scripts', 'build.js'), '--force'], {
    cwd: pkg, encoding: 'utf8', timeout: TIMEOUT - 10_000,
    env: { ...process.env, CARGO: path.join(tmp, 'cargo'), CARGO_TARGET_DIR: path.join(tmp, 'target') },
  });
  assert.equal(r.status, 0, r.stderr);
  const out = r.stdout.trim().split('\n');
  assert.match(out[0], /^fast-http: compiling the native addon from source \(.*cargo build --lib .*--release, 20 crates\): about 1\.5 minutes on 2 cores from scratch/);
  assert.deepEqual(out.slice(1, -1).map((l) => l.replace(/\(\d+:\d\d\)$/, '(t)')),
    [2, 4, 6, 8, 10, 12, 14, 16, 18, 20].map((n) => `fast-http: compiled ${n}/20 crates (t)`));
  assert.match(out.at(-1), new RegExp(`^fast-http: built ${binaryName().replace(/\./g, '\\.')} in \\d+:\\d\\d$`));
  // cargo's own lines other than progress reach stderr as they are.
  assert.deepEqual(r.stderr.trim().split('\n'), ['warning: unused variable: `x`',
    '    Finished `release` profile [optimized] target(s) in 0.01s']);
  assert.equal(fs.readFileSync(path.join(pkg, binaryName()), 'utf8'), 'not really a library');
});
