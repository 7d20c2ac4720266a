'use strict';
// An https server that node's own https serves (an option fast-http's TLS does not implement)
// says why: one stderr line per distinct reason in a process, naming the option and what would
// make the server fast-http's; the reason as `server.fastHttp` ({ native: false, reason }; fast-
// http's servers have { native: true }); and per reason in the FAST_HTTP_STATS line. Each case
// runs in its own process, whose stderr and stats line are the observable.
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, test } = require('node:test');
const fast = require('..');
const { key, cert } = require('./helpers/tls-fixtures');

const root = path.join(__dirname, '..');
const TIMEOUT = 60_000;

let tmp;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-fallback-reason-'));
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/**
 * Runs `body` (code with `https`, `key`, `cert` and `report(server)` in scope; `report`
 * collects what a server says of itself) in a child; resolves its stderr lines, the reports
 * and its stats line.
 */
function child(name, body, { register = false, flags = [] } = {}) {
  const stats = path.join(tmp, `${name}.jsonl`);
  const code = `
    const https = ${register ? "require('node:https')" : "require('fast-http-native/https')"};
    const { isFastHttpServer } = require('fast-http-native');
    const { key, cert } = require(${JSON.stringify(path.join(__dirname, 'helpers', 'tls-fixtures'))});
    const reports = [];
    const report = (server) => reports.push({ fastHttp: server.fastHttp,
      own: Object.prototype.hasOwnProperty.call(server, 'fastHttp'),
      enumerable: Object.keys(server).includes('fastHttp'), fast: isFastHttpServer(server) });
    ${body}
    process.on('exit', () => console.log(JSON.stringify(reports)));`;
  const r = spawnSync(process.execPath,
    [...flags, ...(register ? ['-r', path.join(root, 'lib', 'register.js')] : []), '-e', code], {
      cwd: root, encoding: 'utf8', timeout: TIMEOUT - 10_000,
      env: { ...process.env, FAST_HTTP_STATS: stats, FAST_HTTP_REQUIRE_NATIVE: '1' },
    });
  assert.equal(r.status, 0, r.stderr);
  return {
    lines: r.stderr.split('\n').filter(Boolean),
    reports: JSON.parse(r.stdout),
    stats: JSON.parse(fs.readFileSync(stats, 'utf8').trim()),
  };
}

const TLS10 = "https option minVersion 'TLSv1': fast-http's TLS (rustls) has TLS 1.2 and 1.3, " +
  "no TLS 1.0 / 1.1; with 'TLSv1.2' or 'TLSv1.3' the server is fast-http's";
const SECURE_OPTIONS = "https option secureOptions: OpenSSL's SSL_OP_* flags have no " +
  "counterpart in fast-http's TLS (rustls, which never offers TLS 1.0 / 1.1, renegotiation or " +
  "compression); without it the server is fast-http's";
const line = (reason) => `fast-http: an https server runs on node's own TLS (${reason}).`;

test("two options node's TLS serves: one line per distinct reason, server.fastHttp, stats", {
  timeout: TIMEOUT,
}, () => {
  const got = child('two-options', `
    report(https.createServer({ key, cert, minVersion: 'TLSv1' }));
    report(new https.Server({ key, cert, minVersion: 'TLSv1' }, () => {}));
    report(https.createServer({ key, cert, secureOptions: require('node:constants').SSL_OP_NO_TICKET }));
    report(https.createServer({ key, cert }));`);
  assert.deepEqual(got.lines, [line(TLS10), line(SECURE_OPTIONS)]);
  const fallback = (reason) => ({
    fastHttp: { native: false, reason }, own: true, enumerable: false, fast: false,
  });
  assert.deepEqual(got.reports, [
    fallback(TLS10), fallback(TLS10), fallback(SECURE_OPTIONS),
    { fastHttp: { native: true }, own: false, enumerable: false, fast: true },
  ]);
  assert.equal(got.stats.httpsServersCreated, 4);
  assert.equal(got.stats.httpsFallbackServers, 3);
  assert.deepEqual(got.stats.httpsFallbackReasons, { [TLS10]: 2, [SECURE_OPTIONS]: 1 });
});

test('a version from tls.DEFAULT_MIN_VERSION (--tls-min-v1.0) is named as such', {
  timeout: TIMEOUT,
}, () => {
  const got = child('default-min', 'report(https.createServer({ key, cert }));',
    { flags: ['--tls-min-v1.0'] });
  const reason = "https option tls.DEFAULT_MIN_VERSION (no minVersion) 'TLSv1': fast-http's " +
    "TLS (rustls) has TLS 1.2 and 1.3, no TLS 1.0 / 1.1; with 'TLSv1.2' or 'TLSv1.3' the " +
    "server is fast-http's";
  assert.deepEqual(got.lines, [line(reason)]);
  assert.deepEqual(got.reports[0].fastHttp, { native: false, reason });
});

test("node:https under -r fast-http/register: the same line and reason; ciphers named", {
  timeout: TIMEOUT,
}, () => {
  const got = child('register', `
    report(https.createServer({ key, cert, ciphers: 'HIGH:!aNULL' }));
    report(https.createServer({ key, cert }));`, { register: true });
  const reason = "https option ciphers 'HIGH:!aNULL': it names suites, aliases or operators " +
    "fast-http's TLS cannot honour exactly (it has TLS 1.3's suites and ECDHE with AES-GCM or " +
    'ChaCha20-Poly1305; no DHE, CBC or RSA key exchange, no @SECLEVEL); with a list of those ' +
    "suites the server is fast-http's";
  assert.deepEqual(got.lines, [line(reason)]);
  assert.deepEqual(got.reports.map((r) => r.fastHttp), [{ native: false, reason }, { native: true }]);
  assert.deepEqual(got.stats.httpsFallbackReasons, { [reason]: 1 });
});

test('servers fast-http serves say so, http and https; node:http\'s own have nothing', {
  timeout: TIMEOUT,
}, () => {
  assert.deepEqual(fast.createServer().fastHttp, { native: true });
  assert.deepEqual(fast.https.createServer({ key, cert }).fastHttp, { native: true });
  assert.equal(require('node:http').createServer().fastHttp, undefined);
  assert.equal(require('node:https').createServer({ key, cert }).fastHttp, undefined);
});
