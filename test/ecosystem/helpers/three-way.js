'use strict';
// The ecosystem judge: one app (test/ecosystem/fixtures/<name>.js) run three ways, each in a
// child process of its own (helpers/child.js):
//   node      on node:http                                  — the spec
//   fast      on require('fast-http').createServer
//   register  on node:http's own API under `node -r fast-http/register`
// The test process is only the client (it never loads fast-http's server nor the preload):
// it drives the app, collects what it saw, asks the app for what the app saw (its records),
// closes the server, and compares all of that with the node run.
//
// ECO_FAST_IMPL=node runs the "fast" and "register" modes on node:http too (no preload, no
// addon): a self-check that every scenario is deterministic — the whole suite must pass so.
// ECO_DEBUG=1 prints each child's stderr.

const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const path = require('node:path');
const { isDeepStrictEqual } = require('node:util');
const { tlsFiles } = require('./fixture-kit');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const REGISTER = path.join(ROOT, 'lib', 'register.js');
const CHILD = path.join(__dirname, 'child.js');
const NODE_IMPL = process.env.ECO_FAST_IMPL === 'node';

/** Bounds only (a hang must end the test, not the suite), never expectations about time. */
const START_BOUND_MS = 30_000;
const CALL_BOUND_MS = 30_000;
const STOP_BOUND_MS = 10_000;
const TEST_BOUND_MS = 90_000;
/** How long a client waits for a response or a close that should come (a hang's bound). */
const HANG_BOUND_MS = 5_000;

const MODES = {
  node: { name: 'node:http', execArgv: [] },
  fast: { name: "fast-http createServer", execArgv: [] },
  register: { name: 'fast-http -r register', execArgv: NODE_IMPL ? [] : ['-r', REGISTER] },
};

// ---------------------------------------------------------------------------
// The app in its child process

/**
 * Starts `fixture` in `mode`. Resolves with the app handle once it serves:
 * `{ mode, port, isFastHttp, info, call(name, ...args), records(), close(), stop(), output() }`.
 */
function startApp(mode, fixture, options = {}, { env: extraEnv = {}, execArgv = [] } = {}) {
  const env = { ...process.env, ...extraEnv, ECO_MODE: mode };
  delete env.NODE_TEST_CONTEXT;
  const args = [...MODES[mode].execArgv, ...execArgv, CHILD, fixture, JSON.stringify(options)];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let output = '';
  let stderr = '';
  const collect = (chunk) => {
    output += chunk;
    if (process.env.ECO_DEBUG) process.stderr.write(`[${fixture} ${mode}] ${chunk}`);
  };
  child.stdout.setEncoding('utf8').on('data', collect);
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk;
    collect(chunk);
  });
  // Not 'close': with an IPC channel it may never come. 'exit', then the output to its end.
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      Promise.all([child.stdout, child.stderr].map(streamClosed)).then(() => resolve({ code, signal }));
    });
  });

  const cleanups = [];
  let nextId = 0;
  const pending = new Map();
  const died = (why) => new Error(`${fixture} (${MODES[mode].name}) ${why}\n--- its output:\n${output}`);
  child.on('message', (msg) => {
    if (msg?.type !== 'reply') return;
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.ok) p.resolve(msg.value);
    else p.reject(died(`command ${p.name} failed: ${msg.error}`));
  });
  exited.then(({ code, signal }) => {
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(died(`exited (code ${code}, signal ${signal}) during ${p.name}`));
    }
    pending.clear();
  });

  const app = {
    mode,
    fixture,
    call(name, ...callArgs) {
      if (!child.connected) return Promise.reject(died(`is gone (${name})`));
      return new Promise((resolve, reject) => {
        const id = ++nextId;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(died(`did not answer ${name} within ${CALL_BOUND_MS} ms`));
        }, CALL_BOUND_MS);
        pending.set(id, { resolve, reject, timer, name });
        child.send({ type: 'call', id, name, args: callArgs });
      });
    },
    records() {
      return app.call('records');
    },
    /** The records so far, then forgotten. */
    take() {
      return app.call('take');
    },
    /** Resolves true once the app recorded an entry named one of `names` (false: bound). */
    waitFor(names, bound) {
      return app.call('waitFor', names, bound);
    },
    /** The fixture's close (default: server.close(), whether its callback ran). */
    close() {
      return app.call('close');
    },
    /** Registers `fn` (client-side cleanup: open sockets, clients) to run at stop(). */
    onStop(fn) {
      cleanups.push(fn);
    },
    /** Ends the client's leftovers and the child: closes its IPC channel, then kills it if
     * it lingers. */
    async stop() {
      for (const fn of cleanups.splice(0)) {
        try {
          fn();
        } catch {}
      }
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_BOUND_MS);
      const r = await exited;
      clearTimeout(timer);
      return r;
    },
    output: () => output,
    stderr: () => stderr,
    exited,
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      app.stop();
      reject(died(`did not start within ${START_BOUND_MS} ms`));
    }, START_BOUND_MS);
    const onReady = (msg) => {
      if (msg?.type !== 'ready') return;
      clearTimeout(timer);
      child.off('message', onReady);
      Object.assign(app, { port: msg.port, isFastHttp: msg.isFastHttp, info: msg.info });
      resolve(app);
    };
    child.on('message', onReady);
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(Object.assign(died(`exited before serving (code ${code}, signal ${signal})`),
        { exitCode: code, signal, stderr }));
    });
  });
}

function streamClosed(stream) {
  return stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once('close', resolve));
}

/**
 * One run of a scenario in `mode`: start, exercise (the client part, which returns what the
 * client saw), then the app's records, then close the server. The child is always stopped.
 */
async function runScenario(mode, spec, t) {
  const options = typeof spec.options === 'function' ? await spec.options(mode) : spec.options;
  const app = await startApp(mode, spec.fixture, options || {}, spec.spawn || {});
  // Also when the test ends without the exercise ending (a timeout, a throw in a callback).
  t?.after(() => app.stop());
  try {
    const client = await spec.exercise(app, mode);
    const result = { client, app: await app.records() };
    if (spec.close !== false) result.close = await app.close();
    return { result, app };
  } finally {
    await app.stop();
  }
}

/**
 * Declares a scenario: a describe with the node:http baseline (and `spec.check` on it, the
 * proof that the scenario shows what it is about), then one test per fast-http mode whose
 * result must deep-equal the baseline after `spec.normalize`.
 *
 * spec: { fixture, options, exercise(app, mode), normalize(result), check(result),
 *         close (false: the exercise closes), spawn: { env, execArgv }, timeout, modes, todo }
 * The fast modes must also be served by a fast-http Server (unless ECO_FAST_IMPL=node).
 * `todo` (a reason) marks the fast modes' tests as node:test todos: a known difference from
 * node:http, still run and shown, not failing the suite.
 */
function threeWay(title, spec) {
  const normalize = spec.normalize || ((r) => r);
  const timeout = spec.timeout || TEST_BOUND_MS;
  describe(title, { timeout: 4 * timeout }, () => {
    let baseline = null;
    const nodeResult = (t) => {
      baseline ??= runScenario('node', spec, t).then(({ result }) => normalize(result));
      return baseline;
    };
    it('node:http (baseline)', { timeout }, async (t) => {
      const result = await nodeResult(t);
      if (spec.check) spec.check(result);
    });
    for (const mode of spec.modes || ['fast', 'register']) {
      it(`${MODES[mode].name} matches node:http`, { timeout, todo: spec.todo }, async (t) => {
        const expected = await nodeResult(t);
        const { result, app } = await runScenario(mode, spec, t);
        assertSame(normalize(result), expected, MODES[mode].name);
        if (!NODE_IMPL) assert.equal(app.isFastHttp, true, 'the app is served by a fast-http Server');
      });
    }
  });
}

/** Fails with the list of differences (paths into the result), if there are any. */
function assertSame(actual, expected, name) {
  const diffs = differences(expected, actual, name);
  if (diffs.length > 0) {
    assert.fail(`${name} differs from node:http:\n${diffs.join('\n')}`);
  }
}

const MAX_DIFFS = 12;

function fmt(v) {
  const s = v === undefined ? 'undefined' : JSON.stringify(v);
  return s.length > 600 ? `${s.slice(0, 600)}...` : s;
}

function isPlainArray(v) {
  return Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object');
}

/** Where `actual` differs from `expected`: one line pair per differing leaf. */
function differences(expected, actual, name, at = '', out = []) {
  if (out.length >= MAX_DIFFS || isDeepStrictEqual(expected, actual)) return out;
  const objects = expected !== null && actual !== null && typeof expected === 'object' &&
    typeof actual === 'object' && Array.isArray(expected) === Array.isArray(actual) &&
    !isPlainArray(expected);
  const sameShape = objects && (Array.isArray(expected)
    ? (expected.length === 0) === (actual.length === 0) :
    isDeepStrictEqual(Object.keys(expected).sort(), Object.keys(actual).sort()));
  if (!sameShape) {
    out.push(`  at ${at || '(the result)'}\n    node:http: ${fmt(expected)}\n    ${name}: ${fmt(actual)}`);
    return out;
  }
  if (Array.isArray(expected) && expected.length !== actual.length) {
    out.push(`  at ${at || '(the result)'} (- only on node:http, + only on ${name}):\n` +
      sequenceDiff(expected, actual).join('\n'));
    return out;
  }
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  for (const k of keys) {
    const e = expected[k];
    const label = e && typeof e === 'object' && !Array.isArray(e) && (e.label ?? e.path);
    const step = Array.isArray(expected) ? `[${k}${label ? ` ${label}` : ''}]` : `.${k}`;
    differences(e, actual[k], name, at + step, out);
  }
  if (out.length >= MAX_DIFFS && !out.at(-1).startsWith('  ...')) out.push('  ... (more differences)');
  return out;
}

/** A line diff of two sequences (longest common subsequence), entries as JSON. */
function sequenceDiff(a, b) {
  const x = a.map(fmt);
  const y = b.map(fmt);
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const lines = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      lines.push(`      ${x[i]}`);
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      lines.push(`    + ${y[j++]}`);
    } else {
      lines.push(`    - ${x[i++]}`);
    }
  }
  return lines;
}

// ---------------------------------------------------------------------------
// Client side (node's own http client and raw sockets; this process is never patched)

/** `<length>:<sha256 prefix>` — large bodies compare by this. */
function digest(buf) {
  return `${buf.length}:${crypto.createHash('sha256').update(buf).digest('hex').slice(0, 16)}`;
}

/**
 * One request; resolves with `{ status, statusMessage, httpVersion, rawHeaders, body }`, the
 * body as text (`bodyAs: 'text'`), a digest ('digest') or a Buffer ('buffer'); or with
 * `{ error }` when the request fails or no response ends within HANG_BOUND_MS (so the
 * comparison shows it next to node's response). `body` may be a string/Buffer
 * (Content-Length) or an array of chunks (written one by one, chunked unless a
 * content-length header is given). `agent` defaults to false (a fresh connection,
 * `Connection: close`). `tls` (true, or more tls.connect options such as a client's `key`
 * and `cert`) makes it an https request, to an https fixture (tlsClientOptions()).
 */
function request(port, opts = {}) {
  const {
    method = 'GET', path: urlPath = '/', headers = {}, body, agent = false, bodyAs = 'text',
    rawTrailers = false, bound = HANG_BOUND_MS, tls = null,
  } = opts;
  return new Promise((resolve) => {
    const reject = (err) => resolve({ error: err.code || err.message });
    const reqHeaders = { ...headers };
    const chunks = Array.isArray(body) ? body : null;
    if (body !== undefined && !chunks && !Object.keys(reqHeaders).some((h) => /^content-length$/i.test(h))) {
      reqHeaders['content-length'] = Buffer.byteLength(body);
    }
    const reqOptions = { host: '127.0.0.1', port, method, path: urlPath, headers: reqHeaders, agent };
    const req = tls ?
      https.request({ ...reqOptions, ...tlsClientOptions(tls === true ? {} : tls) }) :
      http.request(reqOptions);
    const timer = setTimeout(() => req.destroy(new Error('no response within the bound')), bound);
    req.once('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.on('response', (res) => {
      const parts = [];
      res.on('data', (c) => parts.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const buf = Buffer.concat(parts);
        const out = {
          status: res.statusCode,
          statusMessage: res.statusMessage,
          httpVersion: res.httpVersion,
          rawHeaders: res.rawHeaders,
          body: bodyAs === 'digest' ? digest(buf) : bodyAs === 'buffer' ? buf : buf.toString('utf8'),
        };
        if (rawTrailers) out.rawTrailers = res.rawTrailers;
        resolve(out);
      });
    });
    if (chunks) {
      (async () => {
        for (const c of chunks) {
          if (!req.write(c)) await new Promise((r) => req.once('drain', r));
        }
        req.end();
      })();
    } else {
      req.end(body);
    }
  });
}

/**
 * A raw exchange: connect, let `drive(socket, collected)` write (and wait) as it likes, then
 * collect everything until the server closes (or `until(bytes)` is true, then end ours).
 * Resolves with `{ bytes, ended: 'server-close' | 'until' | 'error:CODE' | 'bound' }`.
 */
function rawExchange(port, drive, { until = null, bound = HANG_BOUND_MS, pauseFirst = null } = {}) {
  return new Promise((resolve) => {
    const parts = [];
    let size = 0;
    let done = false;
    const socket = net.connect(port, '127.0.0.1');
    const finish = (how) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ bytes: Buffer.concat(parts, size), ended: how });
    };
    const timer = setTimeout(() => finish('bound'), bound);
    socket.on('data', (c) => {
      parts.push(c);
      size += c.length;
      if (until && until(Buffer.concat(parts, size))) finish('until');
    });
    socket.on('end', () => finish('server-close'));
    socket.on('error', (err) => finish(`error:${err.code}`));
    socket.on('close', () => finish('server-close'));
    socket.once('connect', async () => {
      if (pauseFirst) socket.pause();
      try {
        await drive(socket);
      } catch (err) {
        finish(`drive:${err.message}`);
        return;
      }
      if (pauseFirst) {
        await pauseFirst();
        socket.resume();
      }
    });
  });
}

/**
 * TLS client options for an https fixture (served with test/fixtures/tls's localhost
 * certificate, signed by its CA): the CA to trust and the name to check, plus `extra` (a
 * client certificate, say).
 */
function tlsClientOptions(extra = {}) {
  return { ca: tlsFiles.ca(), servername: 'localhost', ...extra };
}

/** One turn of the event loop. */
function tick() {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves with `value` after HANG_BOUND_MS: the other side of a race with what should come. */
function bound(value) {
  return new Promise((resolve) => setTimeout(resolve, HANG_BOUND_MS, value).unref());
}

/** Polls `cond` (async) once per loop turn until true; false after `tries` turns. */
async function until(cond, tries = 2000) {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return true;
    await tick();
  }
  return false;
}

/** socket.write as a promise of the data being handed to the kernel. */
function write(socket, data) {
  return new Promise((resolve, reject) => socket.write(data, (err) => (err ? reject(err) : resolve())));
}

/** Splits a raw HTTP/1 response into its head lines and body (no chunked decoding). */
function splitResponse(bytes) {
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) return { head: [bytes.toString('latin1')], body: Buffer.alloc(0) };
  return {
    head: bytes.subarray(0, end).toString('latin1').split('\r\n'),
    body: bytes.subarray(end + 4),
  };
}

// ---------------------------------------------------------------------------
// Masks for values that differ from run to run on node:http itself

/**
 * rawHeaders (or head lines 'Name: value') with varying values replaced. `masks` maps a
 * lower-case header name to a replacement string or a function of the value; Date is always
 * masked.
 */
function maskHeaders(raw, masks = {}) {
  const all = { date: '<date>', ...masks };
  const apply = (name, value) => {
    const m = all[name.toLowerCase()];
    if (m === undefined) return value;
    return typeof m === 'function' ? m(value) : m;
  };
  const out = raw.slice();
  for (let i = 0; i + 1 < out.length; i += 2) out[i + 1] = apply(out[i], out[i + 1]);
  return out;
}

/** Head lines ('Name: value', the status line first) with the same masks as maskHeaders. */
function maskHeadLines(lines, masks = {}) {
  return lines.map((line, i) => {
    if (i === 0) return line;
    const colon = line.indexOf(':');
    if (colon === -1) return line;
    const [name, value] = [line.slice(0, colon), line.slice(colon + 1).trim()];
    return `${name}: ${maskHeaders([name, value], masks)[1]}`;
  });
}

/** A response from request() with its headers masked. */
function maskResponse(res, masks) {
  if (!res.rawHeaders) return res;
  return { ...res, rawHeaders: maskHeaders(res.rawHeaders, masks) };
}

/** A range of ports below the kernel's ephemeral range (Linux), else null. */
function belowEphemeral() {
  try {
    const low = Number(require('node:fs').readFileSync('/proc/sys/net/ipv4/ip_local_port_range',
      'utf8').trim().split(/\s+/)[0]);
    return low > 11024 ? [low - 10000, low] : null;
  } catch {
    return null;
  }
}

function bindable(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(null));
    s.listen(port, () => {
      const got = s.address().port;
      s.close(() => resolve(got));
    });
  });
}

/**
 * A free TCP port for fixtures that need a fixed one: one the app can listen on a moment
 * later. Taken below the kernel's ephemeral range where there is one: a port the kernel just
 * handed out and took back may go to another test's connection (the suite runs two files at
 * once) before the app binds it (EADDRINUSE).
 */
async function freePort() {
  const range = belowEphemeral();
  for (let i = 0; range !== null && i < 50; i++) {
    const port = await bindable(range[0] + Math.floor(Math.random() * (range[1] - range[0])));
    if (port !== null) return port;
  }
  return bindable(0);
}

module.exports = {
  MODES, NODE_IMPL, ROOT, REGISTER, CHILD, TEST_BOUND_MS, CALL_BOUND_MS, HANG_BOUND_MS,
  startApp, runScenario, threeWay, assertSame, differences,
  request, tlsClientOptions, rawExchange, write, splitResponse, digest, tick, bound, until,
  maskHeaders, maskHeadLines, maskResponse, freePort,
};
