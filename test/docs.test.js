'use strict';
// What the README and docs/ say, checked against the code where a check can say it: a new user
// reaches a running example within the README's first screen, and it serves; the bug-report
// script CONTRIBUTING.md gives runs; every file the docs name and link exists; every key of
// the FAST_HTTP_STATS line and every FAST_HTTP_* variable the code reads is described in
// docs/diagnostics.md.
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { after, before, test } = require('node:test');

const root = path.join(__dirname, '..');
const TIMEOUT = 60_000;
// The README's first screen: a new user reads this far before scrolling.
const FIRST_SCREEN = 40;
// Folders a run writes and git ignores: the docs name files in them that a checkout lacks.
const OUTPUTS = ['bench/results/', '.cache/', 'dist/', 'target/'];

const read = (file) => fs.readFileSync(path.join(root, file), 'utf8');

function docs() {
  return ['README.md', 'CONTRIBUTING.md', 'SECURITY.md', 'CHANGELOG.md', 'bench/README.md',
    ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
}

/** The fenced ```js block at or after `from` (a line index) in `text`: { start, code }. */
function jsBlock(text, from = 0) {
  const lines = text.split('\n');
  const start = lines.findIndex((l, i) => i >= from && l.trim() === '```js');
  assert.notEqual(start, -1, 'a ```js block');
  const end = lines.findIndex((l, i) => i > start && l.trim() === '```');
  return { start: start + 1, code: lines.slice(start + 1, end).join('\n') };
}

let app;

before(() => {
  // An app with fast-http installed under the README's alias (this checkout, built).
  app = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-docs-'));
  fs.mkdirSync(path.join(app, 'node_modules'));
  fs.symlinkSync(root, path.join(app, 'node_modules', 'fast-http'), 'dir');
  fs.writeFileSync(path.join(app, 'package.json'), '{"name":"app","private":true}\n');
});

after(() => {
  if (app) fs.rmSync(app, { recursive: true, force: true });
});

test("the README's first example is on its first screen, and it serves", { timeout: TIMEOUT }, async () => {
  const readme = read('README.md');
  const { start, code } = jsBlock(readme);
  assert.ok(start <= FIRST_SCREEN, `the first example starts at line ${start}`);
  assert.ok(readme.split('\n').slice(0, start).some((l) => l.startsWith('npm install ')),
    'the install command comes before it');
  // Port 3000 may be taken: the same program on a port of its own, which it prints.
  const program = code.replace('.listen(3000);', `.listen(0, '127.0.0.1', function () {
    console.log(JSON.stringify({ port: this.address().port, fast: require('fast-http').isFastHttpServer(this) }));
  });`);
  assert.notEqual(program, code, 'the example listens on 3000');
  fs.writeFileSync(path.join(app, 'example.js'), program);
  const child = spawn(process.execPath, ['example.js'], {
    cwd: app, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FAST_HTTP_REQUIRE_NATIVE: '1', FAST_HTTP_ADDON_PATH: '' },
  });
  try {
    const started = await new Promise((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(JSON.parse(out));
      });
      child.stderr.on('data', (d) => {
        err += d;
      });
      child.on('exit', (code) => reject(new Error(`example exited (${code}): ${err}`)));
    });
    assert.equal(started.fast, true, 'served by fast-http');
    const body = await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: started.port, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => resolve(`${res.statusCode} ${res.headers['content-type']} ${text}`));
      }).on('error', reject);
    });
    assert.equal(body, '200 text/plain Hello World');
  } finally {
    child.kill();
  }
});

test("CONTRIBUTING.md's side-by-side script runs and compares the two servers", {
  timeout: TIMEOUT,
}, () => {
  const text = read('CONTRIBUTING.md');
  const marker = text.split('\n').findIndex((l) => l.includes('side-by-side.js: test/docs.test.js'));
  assert.notEqual(marker, -1);
  fs.writeFileSync(path.join(app, 'side-by-side.js'), jsBlock(text, marker).code);
  const r = spawnSync(process.execPath, ['side-by-side.js'], {
    cwd: app, encoding: 'utf8', timeout: TIMEOUT - 10_000,
    env: { ...process.env, FAST_HTTP_REQUIRE_NATIVE: '1', FAST_HTTP_ADDON_PATH: '' },
  });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  const { version } = require('../package.json');
  assert.equal(lines[0], `fast-http ${version} (native: true), Node ${process.version}, ` +
    `${process.platform}-${process.arch}`);
  assert.match(lines[2], /^"HTTP\/1\.1 200 OK\\r\\nContent-Type: text\/plain\\r\\nDate: \(masked\)/);
  assert.equal(lines.at(-1), 'same bytes', r.stdout);
});

test('every file the docs link or name exists', { timeout: TIMEOUT }, () => {
  const missing = [];
  for (const doc of docs()) {
    const text = read(doc);
    for (const [, link] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(link)) continue;
      if (!fs.existsSync(path.join(root, path.dirname(doc), link))) missing.push(`${doc}: link ${link}`);
    }
    const named = /`((?:src|lib|test|scripts|bench|docs|npm|examples|fuzz)\/[^`\s]*)`/g;
    for (const [, name] of text.matchAll(named)) {
      if (/[<*{]/.test(name) || OUTPUTS.some((o) => name.startsWith(o))) continue;
      const file = name.replace(/[,:;.)]+$/, '');
      if (!fs.existsSync(path.join(root, file))) missing.push(`${doc}: ${file}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('docs/diagnostics.md describes every key of the stats line and every FAST_HTTP_ variable', {
  timeout: TIMEOUT,
}, () => {
  const file = path.join(os.tmpdir(), `fast-http-docs-stats-${process.pid}.jsonl`);
  // The line is written by a process that made a server.
  const r = spawnSync(process.execPath, ['-e', "require('fast-http-native').createServer()"], {
    cwd: root, encoding: 'utf8', timeout: TIMEOUT - 10_000,
    env: { ...process.env, FAST_HTTP_STATS: file },
  });
  assert.equal(r.status, 0, r.stderr);
  const keys = Object.keys(JSON.parse(fs.readFileSync(file, 'utf8')));
  fs.rmSync(file);
  const doc = read('docs/diagnostics.md');
  assert.deepEqual(keys.filter((k) => !doc.includes(`| \`${k}\` |`)), [], 'keys without a row');
  const used = new Set();
  for (const dir of ['lib', 'lib/http', 'lib/https', 'lib/internal', 'scripts']) {
    for (const f of fs.readdirSync(path.join(root, dir))) {
      if (!f.endsWith('.js')) continue;
      for (const [name] of read(`${dir}/${f}`).matchAll(/process\.env\.(FAST_HTTP_[A-Z_]+)/g)) {
        used.add(name.slice('process.env.'.length));
      }
    }
  }
  assert.ok(used.has('FAST_HTTP_STATS'), [...used].join(', '));
  assert.deepEqual([...used].filter((v) => !doc.includes(`\`${v}`)), [], 'variables not described');
});
