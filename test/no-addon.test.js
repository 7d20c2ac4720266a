'use strict';
// Where no native addon loads, fast-http must not be why an app fails to start:
// require('fast-http') and `-r fast-http/register` give node:http's own server, with ONE
// warning line on stderr naming the platform and the fix; FAST_HTTP_REQUIRE_NATIVE=1 turns
// that into the ERR_FAST_HTTP_NO_ADDON error; isFastHttpServer() and `native` say which
// server the app got. npm hides install-script output, so this text is the guide users see.
//
// Two honest simulations, each run the way an app meets it (installed as node_modules/fast-http,
// the README's npm alias, so the fix names `npm rebuild fast-http`):
//  - an unsupported platform: a preload makes process.platform 'win32' before the loader runs,
//    so it looks for the Windows package and binary, which do not exist;
//  - this platform with no binary: a copy of the package without any .node file and without
//    its platform package (what `npm install --omit=optional` without Rust leaves).
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, describe, test } = require('node:test');
const { packageName, triple } = require('../lib/internal/binary-name');

const root = path.join(__dirname, '..');
const TIMEOUT = 60_000;

let tmp;
let app;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-no-addon-'));
  app = path.join(tmp, 'app');
  const pkg = path.join(app, 'node_modules', 'fast-http');
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(path.join(app, 'package.json'), '{"name":"app","private":true}\n');
  for (const f of ['package.json', 'index.d.ts']) {
    fs.copyFileSync(path.join(root, f), path.join(pkg, f));
  }
  fs.cpSync(path.join(root, 'lib'), path.join(pkg, 'lib'), { recursive: true });
  // Makes the loader see Windows: set before anything of fast-http loads.
  fs.writeFileSync(path.join(tmp, 'as-windows.js'),
    "Object.defineProperty(process, 'platform', { value: 'win32' });\n");
  // An app of its own kind: node:http's createServer, a request to itself, a JSON report.
  fs.writeFileSync(path.join(app, 'plain-app.js'), `
    const http = require('node:http');
    const server = http.createServer((req, res) => res.end('hello ' + req.url));
    ${report('server')}`);
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// Code that serves one request on `server`, then prints what the app got as one JSON line.
function report(server) {
  return `
    ${server}.listen(0, '127.0.0.1', () => {
      http.get({ host: '127.0.0.1', port: ${server}.address().port, path: '/x' }, (res) => {
        let body = '';
        res.on('data', (c) => { body += c; });
        res.on('end', () => {
          const fast = require('fast-http');
          console.log(JSON.stringify({
            body,
            native: fast.native,
            isFastHttpServer: fast.isFastHttpServer(${server}),
            nodesServer: Object.getPrototypeOf(${server}) === require('_http_server').Server.prototype,
          }));
          ${server}.close();
        });
      });
    });`;
}

// require('fast-http') (twice, and import() too: still one warning) and its own createServer.
const requireApp = `
  const http = require('node:http');
  const fast = require('fast-http');
  require('fast-http');
  import('fast-http').then((esm) => {
    for (const name of ['createServer', 'Server', 'isFastHttpServer', 'native']) {
      if (!(name in esm) || esm[name] !== fast[name]) throw new Error('ESM and CJS differ: ' + name);
    }
    const server = fast.createServer((req, res) => res.end('hello ' + req.url));
    if (!(server instanceof http.Server) || fast.Server !== http.Server) {
      throw new Error('not node:http\\'s Server');
    }
    ${report('server')}
  });`;

function run(args, { env = {}, preload = [] } = {}) {
  const r = spawnSync(process.execPath, [...preload.flatMap((p) => ['-r', p]), ...args], {
    cwd: app, encoding: 'utf8', timeout: 30_000,
    env: { ...process.env, FAST_HTTP_ADDON_PATH: '', FAST_HTTP_REQUIRE_NATIVE: '', ...env },
  });
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    stderrLines: r.stderr.split('\n').filter((l) => l.trim() !== ''),
  };
}

const cases = [
  {
    name: 'an unsupported platform (process.platform faked to win32)',
    preload: () => [path.join(tmp, 'as-windows.js')],
    platform: `win32-${process.arch}-msvc`,
    fix: /no Windows addon yet \(docs\/windows\.md/,
  },
  {
    name: `${triple()} without a binary or its platform package`,
    preload: () => [],
    platform: triple(),
    // No lockfile here: the message names npm's lockfile bug first (test/missing-platform-
    // package.test.js has the other cases).
    fix: new RegExp(`${packageName()} \\(the prebuilt binary for ${triple()}\\) is not installed\\. ` +
      'Most often npm keeps .* \\(npm/cli#4828, .*Or install Rust \\(https://rustup\\.rs\\) ' +
      'and run `npm rebuild fast-http`'),
  },
];

for (const c of cases) {
  describe(`no addon: ${c.name}`, () => {
    function assertWarning(lines) {
      assert.equal(lines.length, 1, `exactly one line on stderr:\n${lines.join('\n')}`);
      const [line] = lines;
      assert.ok(line.startsWith(`fast-http: no native addon for ${c.platform}, so node:http's ` +
        'own server is used. To fix: '), line);
      assert.match(line, c.fix);
      assert.match(line, /FAST_HTTP_REQUIRE_NATIVE=1 makes this an error/);
    }

    function assertError(r, how) {
      assert.notEqual(r.status, 0, `${how} fails`);
      assert.match(r.stderr, /ERR_FAST_HTTP_NO_ADDON/);
      assert.ok(r.stderr.includes(`no usable native addon for ${c.platform} (Node ` +
        `${process.version}`), r.stderr);
      assert.match(r.stderr, new RegExp(`To fix: [^\n]*${c.fix.source}`));
    }

    test("require('fast-http'): node:http's server serves, one warning line",
      { timeout: TIMEOUT }, () => {
        const r = run(['-e', requireApp], { preload: c.preload() });
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(JSON.parse(r.stdout), {
          body: 'hello /x', native: false, isFastHttpServer: false, nodesServer: true,
        });
        assertWarning(r.stderrLines);
      });

    test('-r fast-http/register: the app keeps node:http, one warning line',
      { timeout: TIMEOUT }, () => {
        const r = run(['plain-app.js'], { preload: [...c.preload(), 'fast-http/register'] });
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(JSON.parse(r.stdout), {
          body: 'hello /x', native: false, isFastHttpServer: false, nodesServer: true,
        });
        assertWarning(r.stderrLines);
      });

    test("FAST_HTTP_REQUIRE_NATIVE=1: require('fast-http') throws the error instead",
      { timeout: TIMEOUT }, () => {
        const r = run(['-e', `
          try { require('fast-http'); } catch (e) {
            console.log(JSON.stringify({ code: e.code, message: e.message }));
          }`], { preload: c.preload(), env: { FAST_HTTP_REQUIRE_NATIVE: '1' } });
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(r.stderrLines, [], 'no warning besides the error');
        const err = JSON.parse(r.stdout);
        assert.equal(err.code, 'ERR_FAST_HTTP_NO_ADDON');
        assert.ok(err.message.startsWith(`fast-http: no usable native addon for ${c.platform} ` +
          `(Node ${process.version}, N-API ${process.versions.napi}).\n`), err.message);
        assert.match(err.message, new RegExp(`\nTo fix: [^\n]*${c.fix.source}`));
        assertError({ status: 1, stderr: `${err.code} ${err.message}` }, 'require');
      });

    test('FAST_HTTP_REQUIRE_NATIVE=1: -r fast-http/register makes the app fail with it',
      { timeout: TIMEOUT }, () => {
        const r = run(['plain-app.js'], {
          preload: [...c.preload(), 'fast-http/register'], env: { FAST_HTTP_REQUIRE_NATIVE: '1' },
        });
        assert.equal(r.stdout, '', 'the app did not serve');
        assertError(r, 'the app');
      });
  });
}

test("README's example warning is the one printed (linux-riscv64-gnu, arch faked)", {
  timeout: TIMEOUT,
  skip: triple() !== 'linux-x64-gnu' && 'the example is for a glibc Linux',
}, () => {
  const preload = path.join(tmp, 'as-riscv64.js');
  fs.writeFileSync(preload, "Object.defineProperty(process, 'arch', { value: 'riscv64' });\n");
  const r = run(['-e', "require('fast-http')"], { preload: [preload] });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderrLines.length, 1, r.stderr);
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  assert.ok(readme.includes(`\n${r.stderrLines[0]}\n`),
    `README.md quotes the warning as printed:\n${r.stderrLines[0]}`);
});

test('with the addon: fast-http serves both ways, nothing on stderr', { timeout: TIMEOUT }, () => {
  // The same apps, against this checkout (which has the addon built), as the control.
  const link = path.join(tmp, 'with-addon');
  fs.mkdirSync(path.join(link, 'node_modules'), { recursive: true });
  fs.symlinkSync(root, path.join(link, 'node_modules', 'fast-http'), 'dir');
  fs.copyFileSync(path.join(app, 'plain-app.js'), path.join(link, 'plain-app.js'));
  for (const args of [['-e', requireApp.replace(/if \(!\(server instanceof[^}]*}/, '')],
    ['-r', 'fast-http/register', 'plain-app.js']]) {
    const r = spawnSync(process.execPath, args, {
      cwd: link, encoding: 'utf8', timeout: 30_000,
      env: { ...process.env, FAST_HTTP_ADDON_PATH: '', FAST_HTTP_REQUIRE_NATIVE: '1' },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.deepEqual(JSON.parse(r.stdout), {
      body: 'hello /x', native: true, isFastHttpServer: true, nodesServer: false,
    });
  }
});
