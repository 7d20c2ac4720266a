'use strict';
// The install path as a user gets it, with the README's own command:
// `npm install fast-http@npm:fast-http-native` (fast-http on the registry is someone else's
// package, so ours is published as fast-http-native and installed under the alias the apps
// `require`). `npm pack` of the main package and of this platform's prebuilt package (made from
// the local build, as build:platforms lays it out) are served by a small registry in this
// process, which also has the other platforms' packuments (from npm/*, as a publish would): npm
// resolves the alias, picks the platform package that fits by itself, and skips the rest. Cargo
// is hidden from PATH, so nothing can be compiled unnoticed. Installed with install scripts and
// with --ignore-scripts (both must work where a binary fits), without the alias
// (`require('fast-http-native')`), and without the platform package (install must still succeed;
// require falls back to node:http with one warning, or throws with FAST_HTTP_REQUIRE_NATIVE=1).
// Also: the sizes docs/platforms.md quotes match `npm pack`, and the macOS targets type-check
// (clippy) when their Rust std is installed.
const assert = require('node:assert');
const { execFile, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { after, before, test } = require('node:test');
const { PACKAGE, binaryName, packageName, triple } = require('../../lib/internal/binary-name');
const { stagePackage } = require('../../scripts/build-platforms');
const { checkPackFigures } = require('./pack-figures');

const root = path.join(__dirname, '..', '..');
const pkg = require('../../package.json');
const t = triple();
const localBuild = path.join(root, binaryName(t));
const hasTemplate = fs.existsSync(path.join(root, 'npm', t, 'package.json'));
// The README's install command, word for word.
const README_INSTALL = `fast-http@npm:${PACKAGE}`;
const INSTALL_TIMEOUT = 240_000;

let tmp;
let env;
let npmCli;
let registry;
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

// Asynchronous: the registry the installs talk to runs in this process.
function npm(args, cwd) {
  return new Promise((resolve) => {
    execFile(process.execPath, [npmCli, ...args], {
      cwd, env, encoding: 'utf8', timeout: INSTALL_TIMEOUT - 10_000, maxBuffer: 64 << 20,
    }, (err, stdout, stderr) => {
      resolve({ status: err ? (err.code ?? 1) : 0, stdout, out: `${stdout}${stderr}` });
    });
  });
}

async function pack(dir) {
  const r = await npm(['pack', '--json', '--pack-destination', path.join(tmp, 'tarballs')], dir);
  assert.strictEqual(r.status, 0, r.out);
  const [info] = JSON.parse(r.stdout);
  return { file: path.join(tmp, 'tarballs', info.filename), info };
}

/**
 * A registry with what a publish of this version would put there: the main package and every
 * platform package's packument, the tarballs of the two packed here. Nothing else exists.
 */
function startRegistry() {
  const packuments = new Map();
  const files = new Map();
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(req.url.slice(1).split('?')[0]);
    const body = packuments.get(name) ?? files.get(name);
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"Not found"}');
      return;
    }
    res.writeHead(200, {
      'content-type': Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json',
    });
    res.end(Buffer.isBuffer(body) ? body : JSON.stringify(body));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const url = `http://127.0.0.1:${server.address().port}/`;
    resolve({
      url,
      server,
      publish(manifest, tarball) {
        const file = `-/${manifest.name}-${manifest.version}.tgz`;
        const dist = { tarball: `${url}${file}` };
        if (tarball) {
          const bytes = fs.readFileSync(tarball);
          files.set(file, bytes);
          dist.integrity = `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`;
          dist.shasum = crypto.createHash('sha1').update(bytes).digest('hex');
        }
        packuments.set(manifest.name, {
          name: manifest.name,
          'dist-tags': { latest: manifest.version },
          versions: { [manifest.version]: { ...manifest, _id: `${manifest.name}@${manifest.version}`, dist } },
        });
      },
    });
  }));
}

function freshApp(name) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"app","private":true}\n');
  return dir;
}

// A private cache per install: every package comes from the registry above.
async function install(app, specs, extra = []) {
  const started = Date.now();
  const r = await npm(['install', '--registry', registry.url, '--no-audit', '--no-fund',
    '--foreground-scripts', '--cache', path.join(app, '.npm-cache'), ...extra, ...specs], app);
  return { ...r, ms: Date.now() - started };
}

// Serves one request through `impl` (a module name, or node:http with register preloaded) and
// reports which addon file it loaded and what the app got.
function serveScript(impl) {
  return `
const http = require('node:http');
Promise.resolve(${impl === 'import' ? "import('fast-http')" : impl === 'register' ? 'http'
    : `require(${JSON.stringify(impl)})`}).then(({ createServer }) => {
  const server = createServer((req, res) => res.end('hello from ' + req.url));
  server.listen(0, '127.0.0.1', () => {
    http.get({ port: server.address().port, host: '127.0.0.1', path: '/installed' }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => {
        const addon = Object.keys(require.cache).find((f) => f.endsWith('.node'));
        const fast = require(${JSON.stringify(impl === 'import' || impl === 'register' ? 'fast-http' : impl)});
        console.log(JSON.stringify({ status: res.statusCode, body, addon: addon || null,
          native: fast.native, isFastHttpServer: fast.isFastHttpServer(server) }));
        server.close();
      });
    });
  });
});`;
}

function run(app, args, extraEnv = {}) {
  const r = spawnSync(process.execPath, args, {
    cwd: app, env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function serve(app, impl, extraEnv) {
  const args = impl === 'register' ? ['-r', 'fast-http/register', '-e', serveScript(impl)]
    : ['-e', serveScript(impl)];
  const r = run(app, args, extraEnv);
  assert.strictEqual(r.status, 0, r.stderr);
  return { ...JSON.parse(r.stdout), stderr: r.stderr };
}

function assertServesFromPrebuilt(app, ways, folder = 'fast-http') {
  const expected = fs.realpathSync(path.join(app, 'node_modules', packageName(t), binaryName(t)));
  for (const impl of ways) {
    const got = serve(app, impl);
    assert.strictEqual(got.status, 200, impl);
    assert.strictEqual(got.body, 'hello from /installed', impl);
    assert.strictEqual(got.native, true, impl);
    assert.strictEqual(got.isFastHttpServer, true, `${impl}: served by fast-http`);
    assert.strictEqual(fs.realpathSync(got.addon), expected, impl);
    assert.strictEqual(got.stderr, '', impl);
  }
  // Installed under the folder the app requires, as the registry's package; nothing compiled.
  const main = path.join(app, 'node_modules', folder);
  assert.strictEqual(JSON.parse(fs.readFileSync(path.join(main, 'package.json'))).name, PACKAGE);
  assert.deepStrictEqual(fs.readdirSync(main).filter((f) => f.endsWith('.node') || f === 'target'),
    []);
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-install-'));
  npmCli = findNpmCli();
  assert.ok(npmCli, "npm's npm-cli.js was found next to node or on PATH");
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  // The outer `npm test` exports npm_config_* (its prefix, cache, ...) and npm_lifecycle_*:
  // an inner npm would take the repository for its project. Start from a clean environment,
  // with a user config of its own (no registry, token or cache of the machine's).
  env = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'CARGO' && k !== 'FAST_HTTP_ADDON_PATH' &&
    k !== 'FAST_HTTP_REQUIRE_NATIVE'));
  env.PATH = pathWithoutCargo(bin);
  fs.writeFileSync(path.join(tmp, 'npmrc'), '');
  env.npm_config_userconfig = path.join(tmp, 'npmrc');
  fs.mkdirSync(path.join(tmp, 'tarballs'));
  registry = await startRegistry();
});

after(() => {
  registry?.server.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('package metadata: one optional dependency per platform package, versions in step', () => {
  assert.strictEqual(pkg.name, 'fast-http-native');
  assert.strictEqual(pkg.os, undefined, 'no os field: the main package installs on every OS');
  const platforms = fs.readdirSync(path.join(root, 'npm')).sort();
  const optional = pkg.optionalDependencies;
  assert.deepStrictEqual(Object.keys(optional).sort(), platforms.map((p) => packageName(p)).sort());
  for (const p of platforms) {
    const m = require(path.join(root, 'npm', p, 'package.json'));
    assert.strictEqual(m.name, `fast-http-native-${p}`);
    assert.strictEqual(m.name, packageName(p));
    assert.strictEqual(m.version, pkg.version, `${m.name}'s version`);
    assert.strictEqual(optional[m.name], pkg.version, `optionalDependencies["${m.name}"]`);
    assert.strictEqual(m.main, binaryName(p));
    assert.deepStrictEqual(m.files, [binaryName(p)]);
    assert.deepStrictEqual(m.os, [p.split('-')[0]]);
  }
});

test('npm pack: the main package ships sources and scripts, no binaries or build output',
  { timeout: INSTALL_TIMEOUT }, async (tc) => {
    const { file, info } = await pack(root);
    tarballs.main = file;
    const files = info.files.map((f) => f.path);
    const unwanted = files.filter((f) =>
      /\.node$|^(target|test|bench|npm|dist|\.cache)\//.test(f));
    assert.deepStrictEqual(unwanted, []);
    for (const f of ['lib/index.js', 'lib/internal/native.js', 'scripts/install.js',
      'scripts/build.js', 'Cargo.toml', 'Cargo.lock', 'build.rs', 'src/lib.rs', 'index.d.ts']) {
      assert.ok(files.includes(f), `${f} is in the tarball`);
    }
    tc.diagnostic(`${info.filename}: ${info.size} bytes packed, ${info.unpackedSize} unpacked, ` +
      `${files.length} files`);
    registry.publish(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')), file);
    // The other platforms' packuments, as a publish would leave them (npm reads their os/cpu/
    // libc and skips them; their tarballs are never asked for).
    for (const p of fs.readdirSync(path.join(root, 'npm'))) {
      if (p === t) continue;
      const m = JSON.parse(fs.readFileSync(path.join(root, 'npm', p, 'package.json'), 'utf8'));
      registry.publish({ ...m, version: pkg.version }, null);
    }
    // The figures docs/platforms.md quotes are this pack's, within a tolerance (checked after
    // publishing, so stale docs fail this test alone, not the installs that follow).
    for (const problem of checkPackFigures(info)) assert.fail(problem);
  });

const noTemplate = !hasTemplate && `no npm/${t}`;

test(`npm pack: ${packageName(t)} from the local build`, {
  skip: noTemplate, timeout: INSTALL_TIMEOUT,
}, async (tc) => {
  assert.ok(fs.existsSync(localBuild), `${localBuild} exists (npm install builds it)`);
  const dir = stagePackage(t, localBuild, path.join(tmp, 'staged'));
  const { file, info } = await pack(dir);
  tarballs.platform = file;
  assert.deepStrictEqual(info.files.map((f) => f.path).sort(),
    [binaryName(t), 'README.md', 'package.json'].sort());
  tc.diagnostic(`${info.filename}: ${info.size} bytes packed, ${info.unpackedSize} unpacked`);
  for (const problem of checkPackFigures(info, 'platform')) assert.fail(problem);
  registry.publish(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')), file);
});

for (const ignoreScripts of [false, true]) {
  const name = `\`npm install ${README_INSTALL}\`${ignoreScripts ? ' --ignore-scripts' : ''}, ` +
    "cargo hidden: require('fast-http'), import('fast-http') and -r fast-http/register serve " +
    'from the prebuilt package';
  test(name, { skip: noTemplate, timeout: INSTALL_TIMEOUT }, async (tc) => {
    assert.ok(tarballs.main && tarballs.platform, 'both tarballs were packed');
    const app = freshApp(ignoreScripts ? 'app-ignore-scripts' : 'app-scripts');
    const r = await install(app, [README_INSTALL], ignoreScripts ? ['--ignore-scripts'] : []);
    assert.strictEqual(r.status, 0, r.out);
    assert.doesNotMatch(r.out, /compiling|cargo was not found/);
    tc.diagnostic(`npm install took ${r.ms} ms`);
    const deps = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')).dependencies;
    assert.deepStrictEqual(deps, { 'fast-http': `npm:${PACKAGE}@^${pkg.version}` });
    // npm picked the platform package by itself, and only the one that fits.
    const installed = fs.readdirSync(path.join(app, 'node_modules'))
      .filter((f) => f.startsWith(`${PACKAGE}-`));
    assert.deepStrictEqual(installed, [packageName(t)]);
    assertServesFromPrebuilt(app, ['fast-http', 'import', 'register']);
  });
}

test(`\`npm install ${PACKAGE}\` (no alias): require('${PACKAGE}') serves`, {
  skip: noTemplate, timeout: INSTALL_TIMEOUT,
}, async () => {
  assert.ok(tarballs.main && tarballs.platform, 'both tarballs were packed');
  const app = freshApp('app-no-alias');
  const r = await install(app, [PACKAGE]);
  assert.strictEqual(r.status, 0, r.out);
  assertServesFromPrebuilt(app, [PACKAGE], PACKAGE);
});

test('installed without the platform package or cargo: install succeeds, node:http serves ' +
  'with one warning, FAST_HTTP_REQUIRE_NATIVE=1 throws', { timeout: INSTALL_TIMEOUT }, async () => {
  assert.ok(tarballs.main, 'the main tarball was packed');
  const app = freshApp('app-no-binary');
  const r = await install(app, [README_INSTALL, '--omit=optional']);
  assert.strictEqual(r.status, 0, r.out);
  assert.match(r.out, /cargo was not found/);
  assert.match(r.out, /npm rebuild fast-http`/);
  const fix = `reinstall without --omit=optional / --no-optional so npm installs ${packageName(t)} ` +
    `(the prebuilt binary for ${t}), or install Rust (https://rustup.rs) and run ` +
    '`npm rebuild fast-http`.';
  for (const impl of ['fast-http', 'register']) {
    const got = serve(app, impl);
    assert.strictEqual(got.body, 'hello from /installed', impl);
    assert.strictEqual(got.native, false, impl);
    assert.strictEqual(got.isFastHttpServer, false, impl);
    assert.strictEqual(got.addon, null, impl);
    assert.strictEqual(got.stderr, `fast-http: no native addon for ${t}, so node:http's own ` +
      `server is used. To fix: ${fix} (FAST_HTTP_REQUIRE_NATIVE=1 makes this an error.)\n`, impl);
  }
  const res = run(app, ['-e', `
    try { require('fast-http'); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`],
  { FAST_HTTP_REQUIRE_NATIVE: '1' });
  const err = JSON.parse(res.stdout);
  assert.strictEqual(err.code, 'ERR_FAST_HTTP_NO_ADDON');
  assert.ok(err.message.includes(`no usable native addon for ${t} (Node ${process.version}`),
    err.message);
  assert.ok(err.message.includes(`\nTo fix: ${fix}\n`), err.message);
});

test('a failing source build (cargo present, no platform package) does not fail the install',
  { timeout: INSTALL_TIMEOUT }, async () => {
    assert.ok(tarballs.main, 'the main tarball was packed');
    const app = freshApp('app-failed-build');
    // A cargo that answers --version and fails every build, first on PATH.
    const bin = path.join(tmp, 'failing-cargo');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'cargo'),
      '#!/bin/sh\n[ "$1" = --version ] && { echo "cargo 1.0.0"; exit 0; }\necho "error: simulated"; exit 101\n',
      { mode: 0o755 });
    const saved = env.PATH;
    env.PATH = `${bin}${path.delimiter}${saved}`;
    let r;
    try {
      r = await install(app, [README_INSTALL, '--omit=optional']);
    } finally {
      env.PATH = saved;
    }
    assert.strictEqual(r.status, 0, r.out);
    assert.match(r.out, /error: simulated/);
    assert.match(r.out, new RegExp(`building the native addon for ${t} failed \\(see above\\), so ` +
      "apps get node:http's own server. Fix the build, then run `npm rebuild fast-http`."));
    const got = serve(app, 'fast-http');
    assert.strictEqual(got.body, 'hello from /installed');
    assert.strictEqual(got.native, false);
    assert.match(got.stderr, new RegExp(`^fast-http: no native addon for ${t}, so node:http's own`));
  });

// The names are ours to publish: free on the public registry, or already ours (same
// description). Skipped, saying so, where the registry cannot be reached.
test('the npm names are free on the registry or ours', { timeout: 120_000 }, async (tc) => {
  for (const name of [PACKAGE, packageName(t)]) {
    const r = await npm(['view', name, 'name', 'description', '--json'], tmp);
    if (r.status === 0) {
      const info = JSON.parse(r.stdout);
      const ours = name === PACKAGE ? pkg.description
        : require(path.join(root, 'npm', t, 'package.json')).description;
      assert.strictEqual(info.description, ours, `${name} on npm is someone else's: ${r.stdout}`);
      tc.diagnostic(`${name}: published (ours)`);
    } else if (/E404/.test(r.out)) {
      tc.diagnostic(`${name}: free`);
    } else {
      tc.skip(`registry not reachable: ${r.out.trim().split('\n')[0]}`);
      return;
    }
  }
});

test('FAST_HTTP_ADDON_PATH: a missing or corrupt file is the same clear error', () => {
  const corrupt = path.join(tmp, 'corrupt.node');
  fs.writeFileSync(corrupt, 'not a shared library');
  const script = `
    try { require(${JSON.stringify(path.join(root, 'lib', 'internal', 'native.js'))}); console.log('{}'); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
  for (const file of [path.join(tmp, 'missing.node'), corrupt]) {
    const res = run(tmp, ['-e', script], { FAST_HTTP_ADDON_PATH: file });
    const err = JSON.parse(res.stdout);
    assert.strictEqual(err.code, 'ERR_FAST_HTTP_NO_ADDON', res.stdout + res.stderr);
    assert.ok(err.message.includes(file));
    assert.ok(err.message.includes(t));
  }
  const res = run(tmp, ['-e', script.replace("console.log('{}')", "console.log('loaded')")],
    { FAST_HTTP_ADDON_PATH: localBuild });
  assert.strictEqual(res.stdout.trim(), 'loaded', res.stderr);
});

// The macOS build cannot run here, but it must compile: clippy type-checks the whole crate
// (and its tests) for the target and lints it like the Linux build.
function sysroot() {
  return spawnSync('rustc', ['--print', 'sysroot'], { encoding: 'utf8' }).stdout.trim();
}

// ring (the TLS layer's crypto) compiles C and assembly for the target in its build script, so
// the check goes through cargo-zigbuild (zig as the macOS C compiler), as the build does.
const zigReady = () => {
  const { hasZig, hasZigbuild } = require('../../scripts/build-platforms');
  return hasZig() && hasZigbuild();
};
for (const target of ['aarch64-apple-darwin', 'x86_64-apple-darwin']) {
  const installed = fs.existsSync(path.join(sysroot(), 'lib', 'rustlib', target, 'lib'));
  const skip = !installed ? `Rust target not installed here (rustup target add ${target})`
    : !zigReady() && 'no zig / cargo-zigbuild here to compile ring\'s C for macOS ' +
      '(npm run build:platforms -- --install-tools installs them)';
  test(`cargo-zigbuild clippy --target ${target}`, { skip }, () => {
    const r = spawnSync('cargo-zigbuild', ['clippy', '--lib', '--all-targets', '--quiet',
      '--target', target, '--', '-D', 'warnings'], { cwd: root, encoding: 'utf8' });
    assert.strictEqual(r.status, 0, r.stderr);
  });
}
