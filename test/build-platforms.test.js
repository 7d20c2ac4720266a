'use strict';
// `npm run build:platforms` changes nothing on the machine unless asked: with a tool missing it
// names it, with the command that installs it and the --install-tools flag, and exits 2 before
// building or installing anything; --install-tools runs exactly those commands, for the named
// targets only. The tools are stand-ins on PATH that log how they were called (and report
// nothing installed), so the test neither needs nor touches the real toolchains.
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, test } = require('node:test');

const script = path.join(__dirname, '..', 'scripts', 'build-platforms.js');
const TIMEOUT = 60_000;

let tmp;
let log;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-build-platforms-'));
  log = path.join(tmp, 'calls.log');
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin);
  fs.mkdirSync(path.join(tmp, 'sysroot'));
  const stub = (name, body) => {
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\necho "${name} $*" >> "$CALLS"\n${body}\n`,
      { mode: 0o755 });
  };
  // Queries fail (nothing is installed); installs "succeed" without installing anything.
  stub('rustc', 'case "$*" in "-vV") echo "host: x86_64-unknown-linux-gnu";; ' +
    '"--print sysroot") echo "$SYSROOT";; esac');
  stub('rustup', 'exit 0');
  stub('cargo', 'case "$1" in install) exit 0;; *) exit 1;; esac');
  stub('python3', 'case "$*" in *"pip install"*) exit 0;; *) exit 1;; esac');
  stub('zig', 'exit 1');
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

function run(args) {
  fs.rmSync(log, { force: true });
  const r = spawnSync(process.execPath, [script, '--out', path.join(tmp, 'out'), ...args], {
    encoding: 'utf8', timeout: 30_000,
    env: {
      PATH: `${path.join(tmp, 'bin')}:/bin`, CALLS: log, SYSROOT: path.join(tmp, 'sysroot'),
      HOME: tmp,
    },
  });
  const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
  return { status: r.status, out: `${r.stdout}${r.stderr}`, calls };
}

test('tools missing: says which and how, exits 2, installs and builds nothing',
  { timeout: TIMEOUT }, () => {
    const r = run(['aarch64-apple-darwin']);
    // --no-setup (the old opt-out, still in the release workflow) is the default now.
    assert.deepEqual(run(['--no-setup', 'aarch64-apple-darwin']).calls, r.calls);
    assert.equal(r.status, 2, r.out);
    assert.match(r.out, /missing tools; nothing was built or installed/);
    assert.match(r.out, /Rust's standard library for aarch64-apple-darwin, for aarch64-apple-darwin: rustup target add aarch64-apple-darwin/);
    assert.match(r.out, /zig .*: python3 -m pip install --user ziglang/);
    assert.match(r.out, /cargo-zigbuild, for aarch64-apple-darwin: cargo install --locked cargo-zigbuild/);
    assert.match(r.out, /--install-tools/);
    assert.doesNotMatch(r.out, /x86_64-apple-darwin|linux-musl/, 'only the named target');
    const changes = r.calls.filter((c) => /install|target add|--release/.test(c));
    assert.deepEqual(changes, [], r.calls.join('\n'));
  });

test('--install-tools: runs those commands, for the named target only', { timeout: TIMEOUT }, () => {
  const r = run(['--install-tools', 'aarch64-apple-darwin']);
  const installs = r.calls.filter((c) => /install|target add/.test(c));
  assert.deepEqual(installs, [
    'rustup target add aarch64-apple-darwin',
    'python3 -m pip install --user ziglang',
    'cargo install --locked cargo-zigbuild',
  ]);
  // The stand-ins installed nothing, so the build itself reports the target as failed.
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /aarch64-apple-darwin: FAILED: Rust target not installed/);
});

test('an unknown target or option: exits 2 before anything runs', { timeout: TIMEOUT }, () => {
  for (const args of [['sparc-sun-solaris'], ['--setup']]) {
    const r = run(args);
    assert.equal(r.status, 2, r.out);
    assert.match(r.out, /unknown (target|option)/);
    assert.deepEqual(r.calls.filter((c) => /install|target add/.test(c)), []);
  }
});
