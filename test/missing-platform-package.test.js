'use strict';
// Where this platform has a prebuilt package but npm did not install it, the loader's message
// (the one warning line, and ERR_FAST_HTTP_NO_ADDON's "To fix:") says why and what to do. The
// common cause is npm's lockfile bug with optional platform packages (npm/cli#4828: a
// package-lock.json made on another OS, as in a Docker build) rather than --omit=optional, so
// the app's lockfile decides which one it names. The stand-in: this package copied into an app
// as node_modules/fast-http without a binary or its platform package, with a lockfile of each
// kind.
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, test } = require('node:test');
const { packageName, triple } = require('../lib/internal/binary-name');

const root = path.join(__dirname, '..');
const { version } = require('../package.json');
const TIMEOUT = 60_000;
const pkg = packageName();
const t = triple();

let tmp;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-platform-package-'));
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** An app with the package and no binary; `lockPackages` its lockfile's entries, or none. */
function app(name, lockPackages) {
  const dir = path.join(tmp, name);
  const copy = path.join(dir, 'node_modules', 'fast-http');
  fs.mkdirSync(copy, { recursive: true });
  fs.copyFileSync(path.join(root, 'package.json'), path.join(copy, 'package.json'));
  fs.cpSync(path.join(root, 'lib'), path.join(copy, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"app","private":true}\n');
  if (lockPackages) {
    fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify({
      name: 'app', lockfileVersion: 3, requires: true,
      packages: { '': { name: 'app' }, 'node_modules/fast-http': { version }, ...lockPackages },
    }));
  }
  return dir;
}

/** The warning line of require('fast-http') in `dir`, and ERR_FAST_HTTP_NO_ADDON's message. */
function messages(dir) {
  const env = { ...process.env, FAST_HTTP_ADDON_PATH: '', FAST_HTTP_REQUIRE_NATIVE: '' };
  const warned = spawnSync(process.execPath, ['-e', "require('fast-http')"], {
    cwd: dir, encoding: 'utf8', timeout: 30_000, env,
  });
  assert.equal(warned.status, 0, warned.stderr);
  const thrown = spawnSync(process.execPath, ['-e', `
    try { require('fast-http'); } catch (e) { console.log(JSON.stringify(e.message)); }`], {
    cwd: dir, encoding: 'utf8', timeout: 30_000, env: { ...env, FAST_HTTP_REQUIRE_NATIVE: '1' },
  });
  assert.equal(thrown.status, 0, thrown.stderr);
  const lines = warned.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, warned.stderr);
  return { line: lines[0], error: JSON.parse(thrown.stdout) };
}

/** Both messages carry the same fix, whole. */
function assertFix(got, fix) {
  assert.equal(got.line, `fast-http: no native addon for ${t}, so node:http's own server is ` +
    `used. To fix: ${fix} (FAST_HTTP_REQUIRE_NATIVE=1 makes this an error.)`);
  assert.ok(got.error.includes(`\nTo fix: ${fix}\n`), got.error);
}

const rebuild = 'install Rust (https://rustup.rs) and run `npm rebuild fast-http`';
const bug = 'npm keeps optional platform packages in package-lock.json only for the OS it was ' +
  'made on (npm/cli#4828, e.g. a lockfile from macOS in a Linux Docker build)';
const reinstall = 'delete node_modules and package-lock.json and run `npm install` on this ' +
  `machine, or add it to the app: \`npm install ${pkg}@${version}\``;

test('a lockfile without the platform package: npm\'s lockfile bug, named with its fix', {
  timeout: TIMEOUT,
}, () => {
  // As a lockfile made on macOS has it: the darwin packages only.
  const dir = app('lock-from-another-os', {
    'node_modules/fast-http-native-darwin-arm64': { version, optional: true, os: ['darwin'] },
  });
  assertFix(messages(dir), `${pkg} (the prebuilt binary for ${t}) is not installed and ` +
    `package-lock.json does not list it: ${bug}. ${reinstall}; or ${rebuild}.`);
});

test('a lockfile that lists it: installed without optional dependencies', {
  timeout: TIMEOUT,
}, () => {
  const dir = app('lock-with-it', { [`node_modules/${pkg}`]: { version, optional: true } });
  assertFix(messages(dir), `reinstall without --omit=optional / --no-optional so npm installs ` +
    `${pkg} (the prebuilt binary for ${t}), or ${rebuild}.`);
});

test('no lockfile: the lockfile bug first, --omit=optional second', { timeout: TIMEOUT }, () => {
  const dir = app('no-lock', null);
  assertFix(messages(dir), `${pkg} (the prebuilt binary for ${t}) is not installed. Most ` +
    `often ${bug}: ${reinstall}. An install with --omit=optional / --no-optional skips it too. ` +
    `Or ${rebuild}.`);
});
