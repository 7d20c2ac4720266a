'use strict';
// The install path as a user gets it: `npm pack` of fast-http and of this platform's prebuilt
// package (made from the local build, as build:platforms would lay it out), installed into
// fresh apps with cargo hidden from PATH, then a request served. Once with install scripts and
// once with --ignore-scripts (both must work where a binary fits), once without the platform
// package (install must still succeed; require must throw the one clear error). Offline: only
// local tarballs, a private npm cache, --offline (the other platforms' optional packages are
// not published, nor cached: npm skips an optional dependency it cannot fetch).
// Also: the macOS targets type-check (clippy) when their Rust std is installed.
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, test } = require('node:test');
const { binaryName, packageName, triple } = require('../../lib/internal/binary-name');
const { stagePackage } = require('../../scripts/build-platforms');

const root = path.join(__dirname, '..', '..');
const pkg = require('../../package.json');
const t = triple();
const localBuild = path.join(root, binaryName(t));
const hasTemplate = fs.existsSync(path.join(root, 'npm', t, 'package.json'));

let tmp;
let env;
let npmCli;
const tarballs = {};

// npm's own CLI script, run with this node: the PATH given to installs has no npm on it.
function findNpmCli() {
  const candidates = [path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm',
    'bin', 'npm-cli.js')];
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    try {
      candidates.push(fs.realpathSync(path.join(dir, 'npm')));
    } catch {}
  }
  return candidates.find((f) => f.endsWith('npm-cli.js') && fs.existsSync(f));
}

// PATH for the installs: a folder with only `node` in it, then the system folders that have
// no cargo/rustc, so the install hook cannot fall back to a source build unnoticed.
function pathWithoutCargo(bin) {
  const dirs = (process.env.PATH || '').split(path.delimiter).filter((d) => d &&
    !fs.existsSync(path.join(d, 'cargo')) && !fs.existsSync(path.join(d, 'rustc')));
  return [bin, ...dirs].join(path.delimiter);
}

function npm(args, cwd) {
  const r = spawnSync(process.execPath, [npmCli, ...args], { cwd, env, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, out: `${r.stdout}${r.stderr}` };
}

function pack(dir) {
  const r = npm(['pack', '--json', '--pack-destination', path.join(tmp, 'tarballs')], dir);
  assert.strictEqual(r.status, 0, r.out);
  const [info] = JSON.parse(r.stdout);
  return { file: path.join(tmp, 'tarballs', info.filename), info };
}

function freshApp(name) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"app","private":true}\n');
  return dir;
}

function install(app, files, extra = []) {
  const started = Date.now();
  const r = npm(['install', '--offline', '--no-audit', '--no-fund', '--foreground-scripts',
    '--cache', path.join(tmp, 'npm-cache'), ...extra, ...files], app);
  return { ...r, ms: Date.now() - started };
}

// Serves one request from the installed fast-http and reports which addon file it loaded.
const serveScript = `
const http = require('node:http');
const { createServer } = require('fast-http');
const server = createServer((req, res) => res.end('hello from ' + req.url));
server.listen(0, '127.0.0.1', () => {
  http.get({ port: server.address().port, host: '127.0.0.1', path: '/installed' }, (res) => {
    let body = '';
    res.on('data', (c) => { body += c; });
    res.on('end', () => {
      const addon = Object.keys(require.cache).find((f) => f.endsWith('.node'));
      console.log(JSON.stringify({ status: res.statusCode, body, addon }));
      server.close();
    });
  });
});`;

function run(app, script, extraEnv = {}) {
  const r = spawnSync(process.execPath, ['-e', script], {
    cwd: app, env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function assertServesFromPrebuilt(app) {
  const r = run(app, serveScript);
  assert.strictEqual(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout);
  assert.strictEqual(got.status, 200);
  assert.strictEqual(got.body, 'hello from /installed');
  const expected = path.join(app, 'node_modules', packageName(t), binaryName(t));
  assert.strictEqual(fs.realpathSync(got.addon), fs.realpathSync(expected));
  // Nothing was compiled into the main package.
  const main = path.join(app, 'node_modules', 'fast-http');
  assert.deepStrictEqual(fs.readdirSync(main).filter((f) => f.endsWith('.node') || f === 'target'),
    []);
}

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-install-'));
  npmCli = findNpmCli();
  assert.ok(npmCli, "npm's npm-cli.js was found next to node or on PATH");
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  // The outer `npm test` exports npm_config_* (its prefix, cache, ...) and npm_lifecycle_*:
  // an inner npm would take the repository for its project. Start from a clean environment.
  env = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'CARGO' && k !== 'FAST_HTTP_ADDON_PATH'));
  env.PATH = pathWithoutCargo(bin);
  fs.mkdirSync(path.join(tmp, 'tarballs'));
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('package metadata: one optional dependency per platform package, versions in step', () => {
  const platforms = fs.readdirSync(path.join(root, 'npm')).sort();
  const optional = pkg.optionalDependencies;
  assert.deepStrictEqual(Object.keys(optional).sort(), platforms.map((p) => packageName(p)).sort());
  for (const p of platforms) {
    const m = require(path.join(root, 'npm', p, 'package.json'));
    assert.strictEqual(m.name, packageName(p));
    assert.strictEqual(m.version, pkg.version, `${m.name}'s version`);
    assert.strictEqual(optional[m.name], pkg.version, `optionalDependencies["${m.name}"]`);
    assert.strictEqual(m.main, binaryName(p));
    assert.deepStrictEqual(m.files, [binaryName(p)]);
    assert.deepStrictEqual(m.os, [p.split('-')[0]]);
  }
});

test('npm pack: the main package ships sources and scripts, no binaries or build output', (tc) => {
  const { file, info } = pack(root);
  tarballs.main = file;
  const files = info.files.map((f) => f.path);
  const unwanted = files.filter((f) =>
    /\.node$|^(target|test|bench|npm|dist|\.cache)\//.test(f));
  assert.deepStrictEqual(unwanted, []);
  for (const f of ['lib/index.js', 'lib/internal/native.js', 'scripts/install.js', 'scripts/build.js',
    'Cargo.toml', 'Cargo.lock', 'build.rs', 'src/lib.rs', 'index.d.ts']) {
    assert.ok(files.includes(f), `${f} is in the tarball`);
  }
  tc.diagnostic(`${info.filename}: ${info.size} bytes packed, ${info.unpackedSize} unpacked, ` +
    `${files.length} files`);
});

const noTemplate = !hasTemplate && `no npm/${t}`;

test(`npm pack: ${packageName(t)} from the local build`, { skip: noTemplate }, (tc) => {
  assert.ok(fs.existsSync(localBuild), `${localBuild} exists (npm install builds it)`);
  const dir = stagePackage(t, localBuild, path.join(tmp, 'staged'));
  const { file, info } = pack(dir);
  tarballs.platform = file;
  assert.deepStrictEqual(info.files.map((f) => f.path).sort(),
    [binaryName(t), 'README.md', 'package.json'].sort());
  tc.diagnostic(`${info.filename}: ${info.size} bytes packed, ${info.unpackedSize} unpacked`);
});

for (const ignoreScripts of [false, true]) {
  const name = `installed with${ignoreScripts ? ' --ignore-scripts' : ' install scripts'}, ` +
    'cargo hidden: the prebuilt package serves a request';
  test(name, { skip: noTemplate }, (tc) => {
    assert.ok(tarballs.main && tarballs.platform, 'both tarballs were packed');
    const app = freshApp(ignoreScripts ? 'app-ignore-scripts' : 'app-scripts');
    const flags = ignoreScripts ? ['--ignore-scripts'] : [];
    const r = install(app, [tarballs.main, tarballs.platform], flags);
    assert.strictEqual(r.status, 0, r.out);
    assert.doesNotMatch(r.out, /compiling|cargo was not found/);
    tc.diagnostic(`npm install took ${r.ms} ms`);
    assertServesFromPrebuilt(app);
  });
}

test('installed without a prebuilt package or cargo: install succeeds, require explains', () => {
  assert.ok(tarballs.main, 'the main tarball was packed');
  const app = freshApp('app-no-binary');
  const r = install(app, [tarballs.main]);
  assert.strictEqual(r.status, 0, r.out);
  assert.match(r.out, /cargo was not found/);
  const res = run(app, `
    try { require('fast-http'); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`);
  const err = JSON.parse(res.stdout);
  assert.strictEqual(err.code, 'ERR_FAST_HTTP_NO_ADDON');
  assert.ok(err.message.includes(t), 'names the platform triple');
  assert.ok(err.message.includes(process.version), 'names the Node version');
  assert.match(err.message, /npm rebuild fast-http|rustup/);
});

test('FAST_HTTP_ADDON_PATH: a missing or corrupt file is the same clear error', () => {
  const corrupt = path.join(tmp, 'corrupt.node');
  fs.writeFileSync(corrupt, 'not a shared library');
  const script = `
    try { require(${JSON.stringify(path.join(root, 'lib', 'internal', 'native.js'))}); console.log('{}'); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
  for (const file of [path.join(tmp, 'missing.node'), corrupt]) {
    const res = run(tmp, script, { FAST_HTTP_ADDON_PATH: file });
    const err = JSON.parse(res.stdout);
    assert.strictEqual(err.code, 'ERR_FAST_HTTP_NO_ADDON', res.stdout + res.stderr);
    assert.ok(err.message.includes(file));
    assert.ok(err.message.includes(t));
  }
  const res = run(tmp, script.replace("console.log('{}')", "console.log('loaded')"),
    { FAST_HTTP_ADDON_PATH: localBuild });
  assert.strictEqual(res.stdout.trim(), 'loaded', res.stderr);
});

// The macOS build cannot run here, but it must compile: clippy type-checks the whole crate
// (and its tests) for the target and lints it like the Linux build.
function sysroot() {
  return spawnSync('rustc', ['--print', 'sysroot'], { encoding: 'utf8' }).stdout.trim();
}

for (const target of ['aarch64-apple-darwin', 'x86_64-apple-darwin']) {
  const installed = fs.existsSync(path.join(sysroot(), 'lib', 'rustlib', target, 'lib'));
  test(`cargo clippy --target ${target}`, {
    skip: !installed && `Rust target not installed here (rustup target add ${target})`,
  }, () => {
    const r = spawnSync('cargo', ['clippy', '--lib', '--all-targets', '--quiet', '--target', target,
      '--', '-D', 'warnings'], { cwd: root, encoding: 'utf8' });
    assert.strictEqual(r.status, 0, r.stderr);
  });
}
