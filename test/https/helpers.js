'use strict';

// The https judges: every scenario runs on node's https server and on fast-http's, with the
// same handler and options, over real TLS connections, and what each side shows (decrypted
// response bytes, server events, TLS facts on req.socket) must be the same.
//
// FAST_HTTPS_JUDGE_SELF=1 makes the fast-http side node's https too: a self-check of the
// judges (every scenario must pass node-vs-node, which shows it is deterministic). Without
// it the fast-http side is `require('fast-http').https`; when that does not exist the
// fast-http side fails with a message saying so, it is never skipped.
// FAST_HTTPS_JUDGE_IMPL=<path> loads any other module with node's https server API as the
// fast-http side (e.g. a deliberately broken wrapper, to check that the judges notice).
// HTTPS_JUDGE_DEBUG=1 adds node's side of each comparison to the test's diagnostics.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const tls = require('node:tls');
const nodeHttps = require('node:https');
const { ResponseParser, normalize, writeAsync } = require('../wire/helpers');
const { listenLocal, closeBounded } = require('../helpers/listen-local');

const DEFAULT_TIMEOUT = 15000;
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'tls');

function readPem(name) {
  return fs.readFileSync(path.join(FIXTURES, name));
}

const certs = {
  ca: readPem('ca-cert.pem'),
  rsa: { key: readPem('server-rsa-key.pem'), cert: readPem('server-rsa-cert.pem') },
  ecdsa: { key: readPem('server-ecdsa-key.pem'), cert: readPem('server-ecdsa-cert.pem') },
  client: { key: readPem('client-key.pem'), cert: readPem('client-cert.pem') },
};

const selfCheck = () => process.env.FAST_HTTPS_JUDGE_SELF === '1';

// Resolved lazily, per test: a missing or broken fast-http https fails each test with the
// reason instead of aborting the file before node:test reports anything.
function fastHttps() {
  if (selfCheck()) return nodeHttps;
  if (process.env.FAST_HTTPS_JUDGE_IMPL) return require(path.resolve(process.env.FAST_HTTPS_JUDGE_IMPL));
  const fast = require('../..');
  if (!fast.https || typeof fast.https.createServer !== 'function') {
    throw new Error("fast-http has no https server: require('fast-http').https.createServer " +
      'is missing (set FAST_HTTPS_JUDGE_SELF=1 to run the judges node-vs-node)');
  }
  return fast.https;
}

/** The two implementations, node's first (it is the spec). */
function httpsImpls() {
  return [
    { name: 'node:https', impl: nodeHttps },
    { name: 'fast-http', impl: fastHttps() },
  ];
}

/** Whether `server` is fast-http's own (true) or node's (false). */
function isFastHttpServer(server) {
  if (selfCheck() || process.env.FAST_HTTPS_JUDGE_IMPL) return true;
  return require('../..').isFastHttpServer(server);
}

// ---------------------------------------------------------------------------
// Server side

function serverOptions(extra = {}) {
  return { key: certs.rsa.key, cert: certs.rsa.cert, ...extra };
}

// Server events as a list of names (with what is comparable about them), observed by
// wrapping emit: a listener for 'tlsClientError' / 'clientError' would change what the
// server does with the connection.
const LOGGED = new Set(['connection', 'secureConnection', 'request', 'tlsClientError',
  'clientError', 'checkContinue', 'upgrade', 'close']);

function describeEvent(name, args) {
  if (name === 'connection') {
    // tls.Server's 'connection' is net's: the raw socket, before the handshake.
    return { event: name, tlsSocket: args[0] instanceof tls.TLSSocket };
  }
  if (name === 'secureConnection') {
    return { event: name, tlsSocket: args[0] instanceof tls.TLSSocket, encrypted: args[0].encrypted };
  }
  if (name === 'request' || name === 'checkContinue') {
    return { event: name, method: args[0].method, url: args[0].url };
  }
  if (name === 'tlsClientError' || name === 'clientError') {
    const err = args[0];
    return { event: name, code: err && err.code, isError: err instanceof Error,
      socketIsTls: args[1] instanceof tls.TLSSocket };
  }
  return { event: name };
}

/**
 * Starts `impl.createServer(options, handler)` on 127.0.0.1:0.
 * @returns {Promise<{server, port, events, close}>}
 */
async function startServer(impl, options, handler, setup) {
  const server = impl.createServer(options, handler);
  const events = [];
  const origEmit = server.emit;
  server.emit = function emit(name, ...args) {
    if (LOGGED.has(name)) events.push(describeEvent(name, args));
    return origEmit.call(this, name, ...args);
  };
  const sockets = new Set();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  if (setup) setup(server, events);
  await listenLocal(server, DEFAULT_TIMEOUT);
  return {
    server,
    port: server.address().port,
    events,
    close() {
      return closeBounded(server, sockets);
    },
  };
}

/** Resolves once `events` has an entry that `pred` accepts (or after `timeout`). */
function waitForEvent(events, pred, timeout = DEFAULT_TIMEOUT) {
  return new Promise((resolve) => {
    const deadline = Date.now() + timeout;
    const check = () => {
      if (events.some(pred) || Date.now() > deadline) resolve();
      else setTimeout(check, 5);
    };
    check();
  });
}

// ---------------------------------------------------------------------------
// Client side

/** tls.connect options for a client of the test CA (servername etc. as given). */
function clientOptions(port, extra = {}) {
  return { host: '127.0.0.1', port, ca: certs.ca, servername: 'localhost', ...extra };
}

/**
 * Opens a TLS connection and plays `steps` (strings/Buffers written; { waitResponses: n };
 * { end: true }); resolves with the decrypted bytes received once the server closes, or
 * once `until` final responses are complete (then FIN is sent and reading goes on until
 * the server closes). Never rejects: an error or timeout is part of the result.
 */
function tlsExchange(port, steps, opts = {}) {
  if (!Array.isArray(steps)) steps = [steps];
  const until = opts.until === undefined ? 'close' : opts.until;
  const parser = new ResponseParser(opts.methods);
  return new Promise((resolve) => {
    const chunks = [];
    let finished = false;
    let timedOut = false;
    let ended = false;
    let waiter = null;
    let error = null;
    let secure = null;
    let session = null;
    let sessionSeen;
    const sessionPromise = new Promise((res) => { sessionSeen = res; });
    let timeUp;
    const timeUpPromise = new Promise((res) => { timeUp = res; });
    const socket = tls.connect(clientOptions(port, opts.tls));
    const timer = setTimeout(() => {
      timedOut = true;
      timeUp();
      finish();
    }, opts.timeout || DEFAULT_TIMEOUT);

    // A TLS 1.3 ticket comes after the handshake, possibly after the response: wait for it
    // (until the exchange's own time is up) when the caller wants to resume with it.
    socket.on('session', (s) => {
      session = s;
      sessionSeen();
    });

    const finish = async () => {
      if (finished) return;
      finished = true;
      if (opts.wantSession && !session && !timedOut) {
        await Promise.race([sessionPromise, timeUpPromise]);
      }
      clearTimeout(timer);
      socket.destroy();
      if (waiter) waiter.resolve();
      resolve({
        data: Buffer.concat(chunks),
        timedOut,
        parseError: parser.error ? parser.error.message : null,
        responses: parser.final,
        error: error && { code: error.code, message: error.message },
        secure,
        session,
      });
    };
    const waitUntil = (check) => {
      if (finished || check()) return Promise.resolve();
      return new Promise((res) => {
        waiter = { check, resolve: res };
      });
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      parser.push(chunk);
      if (waiter && waiter.check()) {
        const w = waiter;
        waiter = null;
        w.resolve();
      }
      if (typeof until === 'number' && parser.final >= until && !ended) {
        ended = true;
        socket.end();
      }
    });
    socket.on('error', (err) => {
      error = err;
      finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    socket.once('secureConnect', async () => {
      secure = {
        authorized: socket.authorized,
        alpnProtocol: socket.alpnProtocol,
        protocol: socket.getProtocol(),
        reused: socket.isSessionReused(),
      };
      try {
        for (const step of steps) {
          if (finished) return;
          if (typeof step === 'string' || Buffer.isBuffer(step)) await writeAsync(socket, step);
          else if (step.waitResponses !== undefined) await waitUntil(() => parser.final >= step.waitResponses);
          else if (step.waitFor !== undefined) await waitUntil(() => Buffer.concat(chunks).includes(step.waitFor));
          else if (step.end) {
            ended = true;
            socket.end();
          } else throw new Error(`unknown step ${JSON.stringify(step)}`);
        }
        if (typeof until === 'number' && parser.final >= until && !ended) {
          ended = true;
          socket.end();
        }
      } catch (err) {
        error = err;
        finish();
      }
    });
  });
}

/**
 * Writes raw (unencrypted) bytes to the TLS port: garbage, plain HTTP, a truncated
 * ClientHello. Resolves with what came back and how the server ended the connection.
 */
function rawExchange(port, bytes, { end = true, timeout = DEFAULT_TIMEOUT } = {}) {
  return new Promise((resolve) => {
    const chunks = [];
    let done = false;
    let how = null;
    const socket = net.connect(port, '127.0.0.1');
    const timer = setTimeout(() => finish('timeout'), timeout);
    const finish = (why) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ data: Buffer.concat(chunks), how: how || why });
    };
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (err) => {
      how = err.code === 'ECONNRESET' ? 'reset' : err.code;
      finish();
    });
    socket.on('end', () => {
      how = how || 'end';
      finish();
    });
    socket.on('close', () => finish('close'));
    socket.on('connect', () => {
      if (bytes && bytes.length) socket.write(bytes);
      if (end) socket.end();
    });
  });
}

/**
 * A TLS 1.2/1.3 ClientHello record as a real client would send it, captured from
 * tls.connect, for truncation tests.
 */
function captureClientHello(options = {}) {
  return new Promise((resolve, reject) => {
    const server = net.createServer((sock) => {
      sock.once('data', (data) => {
        sock.destroy();
        server.close();
        resolve(data);
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const c = tls.connect({ host: '127.0.0.1', port: server.address().port, servername: 'localhost',
        ...options });
      c.on('error', () => {});
    });
    server.on('error', reject);
  });
}

// ---------------------------------------------------------------------------
// Comparison

function summarize(result) {
  return {
    timedOut: result.timedOut,
    parseError: result.parseError,
    responses: result.responses,
    error: result.error && result.error.code,
    wire: normalize(result.data),
  };
}

/** Runs `fn(impl, name)` for node's https, then fast-http's; returns both results. */
async function onBoth(fn) {
  const out = {};
  for (const { name, impl } of [{ name: 'node:https', impl: nodeHttps }, { name: 'fast-http' }]) {
    out[name] = await fn(impl || fastHttps(), name);
  }
  return out;
}

/** Runs `fn(impl, name)` on both servers, asserts the same result, and returns node's. */
async function sameOnBoth(fn) {
  const runs = await onBoth(fn);
  assert.deepEqual(runs['fast-http'], runs['node:https']);
  return runs['node:https'];
}

/**
 * Runs the same exchange on both servers and asserts the same decrypted response bytes
 * (Date masked) and the same server events and handler observations.
 *   scenario.handler(req, res, seen)   seen: an array the handler may push observations to
 *   scenario.request / until / methods / tls (tls.connect options) / serverOptions
 *   scenario.check(nodeResult)         sanity checks on node's side (the scenario is real)
 */
async function compareHttps(t, scenario) {
  const runs = await onBoth(async (impl) => {
    const seen = [];
    const handler = (req, res) => scenario.handler(req, res, seen);
    const srv = await startServer(impl, serverOptions(scenario.serverOptions), handler, scenario.setup);
    let result;
    try {
      result = await tlsExchange(srv.port, scenario.request, scenario);
    } finally {
      await srv.close();
    }
    return { summary: summarize(result), events: srv.events, seen };
  });
  const a = runs['node:https'];
  const b = runs['fast-http'];
  assert.equal(a.summary.timedOut, false, 'node:https itself timed out: the scenario is broken');
  assert.equal(a.summary.parseError, null, `node:https response unparseable: ${a.summary.parseError}`);
  if (typeof scenario.until === 'number') {
    assert.ok(a.summary.responses >= scenario.until,
      `node:https sent ${a.summary.responses} of ${scenario.until} responses: the scenario is broken`);
  }
  if (process.env.HTTPS_JUDGE_DEBUG) t.diagnostic(JSON.stringify(a));
  if (scenario.check) scenario.check(a);
  assert.deepStrictEqual(b.summary, a.summary, 'decrypted response bytes differ from node:https');
  assert.deepStrictEqual(b.events, a.events, 'server events differ from node:https');
  assert.deepStrictEqual(b.seen, a.seen, 'what the handler saw differs from node:https');
  return a;
}

/**
 * What `https.createServer(options)` throws (name, code, message), or null: the https judges
 * compare it between node's server and fast-http's.
 */
function createError(https, options) {
  try {
    https.createServer(options);
  } catch (err) {
    return { name: err.name, code: err.code, message: err.message };
  }
  return null;
}

module.exports = {
  sameOnBoth,
  DEFAULT_TIMEOUT,
  createError,
  FIXTURES,
  captureClientHello,
  certs,
  clientOptions,
  compareHttps,
  fastHttps,
  httpsImpls,
  isFastHttpServer,
  onBoth,
  rawExchange,
  serverOptions,
  startServer,
  summarize,
  tlsExchange,
  waitForEvent,
};
