'use strict';
// `node -r fast-http/register` and `node --import fast-http/register`: every way an app or its
// dependencies reach node:http's server gets fast-http's (require, static and dynamic
// import, `http` and `node:http`, process.getBuiltinModule, .mts and .ts under type
// stripping, an ES module dependency of a CommonJS app), and an app that never uses http does
// not load fast-http. Each fixture (test/fixtures/register-modules/) serves one request and
// exits; FAST_HTTP_STATS says whether fast-http created the server and served the request.
const { describe, it, before, after } = require('node:test');
const { getBody } = require('./helpers/get-body');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { pathToFileURL } = require('node:url');

const FIXTURES = path.join(__dirname, 'fixtures', 'register-modules');
const REGISTER = path.resolve(__dirname, '..', 'lib', 'register.js');
const WAYS_IN = {
  '-r': ['-r', REGISTER],
  '--import': ['--import', pathToFileURL(REGISTER).href],
};
// Bounds only, never expectations: generous for a loaded 2-core box.
const CHILD_BOUND_MS = 30_000;
const TEST_TIMEOUT_MS = 60_000;

const [major, minor] = process.versions.node.split('.').map(Number);
/** Flags this Node needs to strip types, or null when it cannot run TypeScript at all. */
const stripTypesFlags = process.features.typescript ? []
  : (major > 22 || (major === 22 && minor >= 6)) ? ['--experimental-strip-types'] : null;
const noTypes = stripTypesFlags === null &&
  `Node ${process.versions.node} cannot run TypeScript (no type stripping before 22.6)`;
const noRequireEsm = !process.features.require_module &&
  `Node ${process.versions.node} cannot require() an ES module`;

let tmp;
// An app folder where fast-http is installed as node_modules/fast-http (a link to this
// checkout, as `npm install fast-http@npm:...` names it), for the register by package name.
let appDir;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'register-modules-'));
  appDir = path.join(tmp, 'app');
  fs.mkdirSync(path.join(appDir, 'node_modules'), { recursive: true });
  fs.symlinkSync(path.resolve(__dirname, '..'), path.join(appDir, 'node_modules', 'fast-http'), 'dir');
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

let runs = 0;
/**
 * Runs `fixture` under register; requests '/' once if it prints a port. Resolves with the
 * first line it printed, the response body, its exit and its FAST_HTTP_STATS lines.
 */
async function run(fixture, wayIn, flags = [], byName = false) {
  const statsFile = path.join(tmp, `stats-${++runs}.jsonl`);
  const env = { ...process.env, FAST_HTTP_STATS: statsFile };
  delete env.NODE_TEST_CONTEXT;
  delete env.NODE_OPTIONS;
  const preload = byName ? [wayIn, 'fast-http/register'] : WAYS_IN[wayIn];
  const child = spawn(process.execPath, [...flags, ...preload, path.join(FIXTURES, fixture)], {
    cwd: byName ? appDir : FIXTURES, env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const bound = setTimeout(() => child.kill('SIGKILL'), CHILD_BOUND_MS);
  try {
    const lines = readline.createInterface({ input: child.stdout });
    const first = await new Promise((resolve) => {
      lines.once('line', (line) => resolve(JSON.parse(line)));
      lines.once('close', () => resolve(null));
    });
    let body = null;
    if (first?.port !== undefined) body = await getBody(first.port);
    const exit = await exited;
    const stats = fs.existsSync(statsFile)
      ? fs.readFileSync(statsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
      : [];
    return { first, body, exit, stats, stderr };
  } finally {
    clearTimeout(bound);
    child.kill('SIGKILL');
  }
}


function assertServedByFastHttp(r) {
  const why = `stderr:\n${r.stderr}`;
  assert.deepEqual(r.exit, { code: 0, signal: null }, why);
  assert.equal(r.body, 'ok', why);
  assert.equal(r.stats.length, 1, why);
  const [line] = r.stats;
  assert.equal(line.serversCreated, 1, `node:http's own server served the app\n${why}`);
  assert.equal(line.connectionsAccepted, 1, why);
  assert.equal(line.requestsDispatched, 1, why);
  assert.equal(line.fallbackConnections, 0, why);
  assert.doesNotMatch(r.stderr, /fast-http/, why);
}

/** An https fixture (serve-https.js): it requested itself, over fast-http's https server. */
function assertHttpsServedByFastHttp(r) {
  const why = `stderr:\n${r.stderr}`;
  assert.deepEqual(r.exit, { code: 0, signal: null }, why);
  assert.deepEqual(r.first, { body: 'true', fast: true }, why);
  assert.equal(r.stats.length, 1, why);
  const [line] = r.stats;
  assert.equal(line.httpsServersCreated, 1, why);
  assert.equal(line.httpsFallbackServers, 0, `node:https's own server served the app\n${why}`);
  assert.equal(line.requestsDispatched, 1, why);
  assert.doesNotMatch(r.stderr, /fast-http/, why);
}

const HTTPS_CASES = [
  ['CommonJS entry, require(\'https\').createServer', 'cjs-require-https.js'],
  ['CommonJS entry, new (require(\'node:https\').Server)', 'cjs-require-node-https.js'],
  ['ESM entry, static import from \'node:https\'', 'esm-node-https.mjs'],
];

const CASES = [
  ['CommonJS entry, require(\'node:http\')', 'cjs-require-node-http.js'],
  ['CommonJS entry, require(\'http\')', 'cjs-require-http.js'],
  ['CommonJS entry, a CommonJS dependency requires http', 'cjs-dep.js'],
  ['CommonJS entry, process.getBuiltinModule(\'node:http\')', 'cjs-get-builtin.js'],
  ['ESM entry, static import from \'node:http\'', 'esm-node-http.mjs'],
  ['ESM entry, static import from \'http\'', 'esm-http.mjs'],
  ['ESM entry, import(\'node:http\')', 'esm-dynamic-import.mjs'],
  ['CommonJS entry import()s ESM that imports node:http (h3\'s serve())', 'cjs-import-esm.js'],
  ['CommonJS app import()s its ESM dependency', 'cjs-import-esm-dep.js'],
  ['CommonJS app require()s its ESM dependency', 'cjs-require-esm-dep.js', { skip: noRequireEsm }],
  ['CommonJS app loads fast-http itself before node:http', 'cjs-fast-http-first.js'],
  ['ESM app imports fast-http itself before node:http', 'esm-fast-http-first.mjs'],
  ['.mts entry (type stripping)', 'entry.mts', { skip: noTypes, flags: stripTypesFlags }],
  ['.ts entry in a "type": "module" folder (type stripping)', path.join('type-module', 'app.ts'),
    { skip: noTypes, flags: stripTypesFlags }],
];

for (const wayIn of Object.keys(WAYS_IN)) {
  describe(`node ${wayIn} fast-http/register`, () => {
    for (const [name, fixture, opts = {}] of CASES) {
      it(`${name}: fast-http serves`, { timeout: TEST_TIMEOUT_MS, skip: opts.skip }, async () => {
        assertServedByFastHttp(await run(fixture, wayIn, opts.flags ?? []));
      });
    }

    for (const [name, fixture] of HTTPS_CASES) {
      it(`${name}: fast-http serves https`, { timeout: TEST_TIMEOUT_MS }, async () => {
        assertHttpsServedByFastHttp(await run(fixture, wayIn));
      });
    }

    it('by package name (fast-http/register from the app\'s node_modules): fast-http serves',
      { timeout: TEST_TIMEOUT_MS }, async () => {
        assertServedByFastHttp(await run('esm-node-http.mjs', wayIn, [], true));
        assertServedByFastHttp(await run('cjs-require-node-http.js', wayIn, [], true));
      });

    for (const fixture of ['cjs-no-http.js', 'esm-no-http.mjs']) {
      it(`an app that never uses http (${fixture}) does not load fast-http`,
        { timeout: TEST_TIMEOUT_MS }, async () => {
          const r = await run(fixture, wayIn);
          assert.deepEqual(r.exit, { code: 0, signal: null }, r.stderr);
          assert.deepEqual(r.first, { fastHttpLoaded: false });
          assert.equal(r.stats.length, 1, r.stderr);
          assert.equal(r.stats[0].serversCreated, 0);
        });
    }
  });
}
