'use strict';

// Shared machinery for the wire-level comparison suite: every scenario is run
// against node:http and against fast-http with the same handler, over raw
// `net` sockets, and the raw response bytes (Date value masked) must match.
//
// WIRE_DEBUG=1 adds node's captured bytes to each test's diagnostics.
// WIRE_FAST_IMPL=node makes the "fast" side use node:http as well. That is a
// self-check of the suite itself (every scenario must pass node-vs-node, which
// checks the scenarios are deterministic); WIRE_FAST_IMPL=<path> loads any
// other module with the node:http server API (e.g. a deliberately broken
// wrapper, to check that the suite notices). The default is fast-http from
// the package root.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const net = require('node:net');
const path = require('node:path');
const nodeHttp = require('node:http');
const { waitForRead } = require('../helpers/server-read');
const { listenLocal, closeBounded } = require('../helpers/listen-local');

const DEFAULT_TIMEOUT = 15000;

let fastImpl;
function loadFast() {
  const override = process.env.WIRE_FAST_IMPL;
  if (override === 'node') return nodeHttp;
  if (override) return require(path.resolve(override));
  // Loaded lazily so that a broken addon fails each test with the load error
  // instead of aborting the whole file before node:test can report anything.
  if (!fastImpl) fastImpl = require('../..');
  return fastImpl;
}

function impls() {
  return [
    { name: 'node:http', impl: nodeHttp },
    { name: 'fast-http', impl: loadFast() },
  ];
}

// ---------------------------------------------------------------------------
// Server side

// `observer` is shared with the scenario so handlers can push what the server
// saw (method, headers, body hashes, ...) and both sides can be compared.
async function startServer(impl, handler, options = {}, observer = newObserver()) {
  const server = options.serverOptions !== undefined ?
    impl.createServer(options.serverOptions, handler) :
    impl.createServer(handler);

  // Observe events by wrapping emit rather than adding listeners: a
  // 'clientError' listener would suppress the default 400/431 response that
  // several scenarios are about, and 'checkContinue' would change the
  // 100-continue flow.
  const origEmit = server.emit;
  server.emit = function emit(name, ...args) {
    if (name === 'clientError') {
      const err = args[0];
      observer.events.push({
        event: 'clientError',
        code: err && err.code,
        hasRawPacket: Buffer.isBuffer(err && err.rawPacket),
      });
    }
    return origEmit.call(this, name, ...args);
  };

  const sockets = new Set();
  server.on('connection', (socket) => {
    sockets.add(socket);
    if (socket && typeof socket.once === 'function') {
      socket.once('close', () => sockets.delete(socket));
    }
  });

  if (options.setup) options.setup(server, observer);

  await listenLocal(server, DEFAULT_TIMEOUT);

  return {
    server,
    port: server.address().port,
    observer,
    // The server side of the connection from local port `port`, once accepted.
    socketFor(port) {
      for (const s of sockets) if (s.remotePort === port) return s;
      return undefined;
    },
    close() {
      return closeBounded(server, sockets);
    },
  };
}

function newObserver() {
  return { events: [], requests: [] };
}

// ---------------------------------------------------------------------------
// Response framing parser (client side)
//
// Incremental so that the 10 MB cases don't re-scan or re-concat the whole
// buffer on every 'data' event. It only needs to know where each response
// ends, so that exchange() can stop after N responses on a kept-alive socket;
// with `keepBodies`, `bodies` holds each complete response's body (latin1).

class ResponseParser {
  constructor(methods = [], { keepBodies = false } = {}) {
    this.bodies = keepBodies ? [] : null;
    this.body = '';
    this.methods = methods; // request method per final response, default GET
    this.final = 0; // complete non-1xx responses
    this.interim = 0; // complete 1xx responses
    this.state = 'head';
    this.line = Buffer.alloc(0); // pending bytes for line-oriented states
    this.remaining = 0;
    this.error = null;
    this.statuses = [];
  }

  push(chunk) {
    let i = 0;
    while (i < chunk.length && !this.error) {
      switch (this.state) {
        case 'head': {
          // Accumulate until the blank line; the head is small so concat is ok.
          const start = this.line.length;
          this.line = Buffer.concat([this.line, chunk.subarray(i)]);
          const from = Math.max(0, start - 3);
          const end = this.line.indexOf('\r\n\r\n', from, 'latin1');
          if (end === -1) return;
          const head = this.line.subarray(0, end).toString('latin1');
          const consumed = end + 4 - start;
          this.line = Buffer.alloc(0);
          i += consumed;
          this.onHead(head);
          break;
        }
        case 'length': {
          const n = Math.min(this.remaining, chunk.length - i);
          this.keep(chunk, i, n);
          this.remaining -= n;
          i += n;
          if (this.remaining === 0) this.done();
          break;
        }
        case 'chunk-size':
        case 'chunk-crlf':
        case 'trailers': {
          const nl = chunk.indexOf(10, i);
          if (nl === -1) {
            this.line = Buffer.concat([this.line, chunk.subarray(i)]);
            return;
          }
          const line = Buffer.concat([this.line, chunk.subarray(i, nl + 1)])
            .toString('latin1');
          this.line = Buffer.alloc(0);
          i = nl + 1;
          this.onLine(line);
          break;
        }
        case 'chunk-data': {
          const n = Math.min(this.remaining, chunk.length - i);
          this.keep(chunk, i, n);
          this.remaining -= n;
          i += n;
          if (this.remaining === 0) this.state = 'chunk-crlf';
          break;
        }
        case 'close':
          // Body delimited by connection close: everything belongs to it.
          return;
        default:
          throw new Error(`bad parser state ${this.state}`);
      }
    }
  }

  onHead(head) {
    const lines = head.split('\r\n');
    const m = /^HTTP\/\d\.\d (\d{3})/.exec(lines[0]);
    if (!m) {
      this.error = new Error(`unparseable status line: ${JSON.stringify(lines[0])}`);
      return;
    }
    const status = Number(m[1]);
    this.statuses.push(status);
    let contentLength = null;
    let chunked = false;
    for (const line of lines.slice(1)) {
      const idx = line.indexOf(':');
      if (idx === -1) continue;
      const name = line.slice(0, idx).trim().toLowerCase();
      const value = line.slice(idx + 1).trim();
      if (name === 'content-length') contentLength = Number(value);
      if (name === 'transfer-encoding') {
        chunked = /(^|,)\s*chunked\s*$/i.test(value);
      }
    }
    if (status >= 100 && status < 200 && status !== 101) {
      this.interim++;
      this.state = 'head';
      return;
    }
    const method = this.methods[this.final] || 'GET';
    if (method === 'HEAD' || status === 204 || status === 304) {
      this.done();
    } else if (chunked) {
      this.state = 'chunk-size';
    } else if (contentLength !== null) {
      this.remaining = contentLength;
      if (contentLength === 0) this.done();
      else this.state = 'length';
    } else {
      this.state = 'close';
    }
  }

  onLine(line) {
    if (this.state === 'chunk-size') {
      const size = parseInt(line, 16);
      if (Number.isNaN(size)) {
        this.error = new Error(`bad chunk size line: ${JSON.stringify(line)}`);
      } else if (size === 0) {
        this.state = 'trailers';
      } else {
        this.remaining = size;
        this.state = 'chunk-data';
      }
    } else if (this.state === 'chunk-crlf') {
      this.state = 'chunk-size';
    } else if (this.state === 'trailers') {
      if (line === '\r\n' || line === '\n') this.done();
    }
  }

  keep(chunk, i, n) {
    if (this.bodies !== null) this.body += chunk.toString('latin1', i, i + n);
  }

  done() {
    this.final++;
    this.state = 'head';
    if (this.bodies !== null) {
      this.bodies.push(this.body);
      this.body = '';
    }
  }
}

// ---------------------------------------------------------------------------
// Client side

// Opens a raw connection and plays `steps`:
//   string | Buffer          written as-is
//   { serverRead: true }     wait until the server has read everything sent so far, so
//                            that the next write is a read of its own (needs
//                            opts.serverSocket(localPort), as runOne() passes)
//   { delay: ms }            pause (not a split: on a busy machine the server may read
//                            what comes before and after it at once; use serverRead)
//   { waitFor: 'text' }      wait until the response bytes contain 'text'
//   { waitResponses: n }     wait until n final responses have been parsed
//   { end: true }            half-close our side
//   async (socket, ctx) =>   custom writer (e.g. a streamed upload)
// Resolves when the server closes the connection, or once `until` final
// responses are complete (then we send FIN and keep collecting until the
// server closes, so trailing garbage from the server is caught too).
// Never rejects on timeout: it resolves with timedOut so the diff shows the
// partial bytes next to what node sent.
function exchange(port, steps, opts = {}) {
  if (!Array.isArray(steps)) steps = [steps];
  const until = opts.until === undefined ? 'close' : opts.until;
  const timeout = opts.timeout || DEFAULT_TIMEOUT;
  const parser = new ResponseParser(opts.methods);

  return new Promise((resolve) => {
    const chunks = [];
    let received = 0;
    let finished = false;
    let timedOut = false;
    let clientEnded = false;
    let waiter = null;
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);

    const timer = setTimeout(() => {
      timedOut = true;
      finish();
    }, timeout);

    function text() {
      return Buffer.concat(chunks).toString('latin1');
    }

    function checkWaiter() {
      if (!waiter) return;
      if (waiter.check()) {
        const w = waiter;
        waiter = null;
        w.resolve();
      }
    }

    function finish() {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      if (waiter) {
        const w = waiter;
        waiter = null;
        w.resolve();
      }
      resolve({
        data: Buffer.concat(chunks, received),
        timedOut,
        parseError: parser.error ? parser.error.message : null,
        responses: parser.final,
      });
    }

    socket.on('data', (chunk) => {
      chunks.push(chunk);
      received += chunk.length;
      parser.push(chunk);
      checkWaiter();
      if (typeof until === 'number' && parser.final >= until && !clientEnded) {
        clientEnded = true;
        socket.end();
      }
    });
    // Resets/EPIPE are timing dependent (the server may close while we still
    // write), so they're treated as a close rather than compared.
    socket.on('error', () => finish());
    socket.on('end', () => finish());
    socket.on('close', () => finish());

    function waitUntil(check) {
      if (finished || check()) return Promise.resolve();
      return new Promise((res) => {
        waiter = { check, resolve: res };
      });
    }

    async function waitServerRead() {
      const deadline = Date.now() + timeout;
      let peer;
      while (!finished && !(peer = opts.serverSocket(socket.localPort)) && Date.now() < deadline) {
        await sleep(2);
      }
      if (peer) await waitForRead(peer, socket.bytesWritten, Math.max(0, deadline - Date.now()));
    }

    const ctx = {
      socket,
      get finished() { return finished; },
      waitUntil,
      text,
    };

    socket.once('connect', async () => {
      try {
        for (const step of steps) {
          if (finished) return;
          if (typeof step === 'string' || Buffer.isBuffer(step)) {
            await writeAsync(socket, step);
          } else if (typeof step === 'function') {
            await step(socket, ctx);
          } else if (step.serverRead) {
            await waitServerRead();
          } else if (step.delay !== undefined) {
            await sleep(step.delay);
          } else if (step.waitFor !== undefined) {
            await waitUntil(() => text().includes(step.waitFor));
          } else if (step.waitResponses !== undefined) {
            await waitUntil(() => parser.final >= step.waitResponses);
          } else if (step.end) {
            clientEnded = true;
            socket.end();
          } else {
            throw new Error(`unknown step ${JSON.stringify(step)}`);
          }
        }
        if (typeof until === 'number' && parser.final >= until && !clientEnded) {
          clientEnded = true;
          socket.end();
        }
      } catch {
        finish();
      }
    });
  });
}

function writeAsync(socket, data) {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    if (socket.write(data)) return resolve();
    const done = () => {
      socket.removeListener('drain', done);
      socket.removeListener('close', done);
      resolve();
    };
    socket.once('drain', done);
    socket.once('close', done);
  });
}

// Polls `fn` until truthy or the deadline passes (then resolves anyway:
// callers use it to sequence, and the comparison reports what happened).
async function poll(fn, timeout = DEFAULT_TIMEOUT) {
  const deadline = Date.now() + timeout;
  while (!fn() && Date.now() < deadline) await sleep(5);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------
// Comparison

function normalize(buf) {
  const s = Buffer.isBuffer(buf) ? buf.toString('latin1') : String(buf);
  return s.replace(/(^|\r\n)Date: [^\r\n]*\r\n/g, '$1Date: <date>\r\n');
}

function summarize(result, big) {
  const wire = normalize(result.data);
  const out = {
    timedOut: result.timedOut,
    parseError: result.parseError,
    responses: result.responses,
  };
  if (big) {
    // A 10 MB string diff is useless; head + tail locate a mismatch, the hash
    // proves equality of everything in between.
    out.length = wire.length;
    out.sha256 = crypto.createHash('sha256').update(wire, 'latin1').digest('hex');
    out.head = wire.slice(0, 512);
    out.tail = wire.slice(-256);
  } else {
    out.wire = wire;
  }
  return out;
}

// Runs `scenario` on both implementations and asserts the same wire bytes and
// the same server-side observations.
//   scenario.handler(req, res, observer)
//   scenario.request   steps for exchange(), or observer => steps
//   scenario.until / methods / timeout   exchange() options
//   scenario.serverOptions, scenario.setup(server, observer)
//   scenario.big       compare by length + hash
//   scenario.check(nodeSummary, observer) extra sanity checks on node's side,
//                      so a scenario can't silently degrade into testing an
//                      empty exchange
async function runOne(impl, scenario) {
  const observer = newObserver();
  const handler = (req, res) => {
    try {
      scenario.handler(req, res, observer);
    } catch (err) {
      observer.events.push({ event: 'handler-threw', message: err.message });
      res.destroy();
    }
  };
  const srv = await startServer(impl, handler, scenario, observer);
  try {
    // A function lets client steps coordinate with what the server observed
    // (e.g. hold off reading until the handler has hit backpressure).
    const steps = typeof scenario.request === 'function' ?
      scenario.request(observer) : scenario.request;
    const result = await exchange(srv.port, steps, { ...scenario, serverSocket: srv.socketFor });
    // Give 'close'/'finish' driven observations a tick to land.
    await sleep(scenario.settle || 20);
    return { summary: summarize(result, scenario.big), observer };
  } finally {
    await srv.close();
  }
}

async function compare(t, scenario) {
  const [node, fast] = impls();
  const a = await runOne(node.impl, scenario);
  const b = await runOne(fast.impl, scenario);

  assert.equal(a.summary.timedOut, false,
               'node:http itself timed out: the scenario is broken');
  // A scenario waiting for `until` responses that node's connection ended without (a client
  // parser expecting a body HEAD does not have, ...) only ended by a timer: it tests nothing.
  if (typeof scenario.until === 'number') {
    assert.ok(a.summary.responses >= scenario.until,
      `node:http sent ${a.summary.responses} of ${scenario.until} responses: the scenario is broken`);
  }
  assert.equal(a.summary.parseError, null,
               `node:http response unparseable: ${a.summary.parseError}`);
  // WIRE_DEBUG=1 prints node's side, handy when writing a new scenario.
  if (process.env.WIRE_DEBUG) {
    t.diagnostic(JSON.stringify({ wire: a.summary, observer: a.observer }));
  }
  if (scenario.check) scenario.check(a.summary, a.observer);

  assert.deepStrictEqual(b.summary, a.summary, 'wire bytes differ from node:http');
  assert.deepStrictEqual(b.observer, a.observer,
                         'server-side observations differ from node:http');
  return a;
}

// Convenience for building raw requests from lines without counting CRLFs.
function raw(...lines) {
  return lines.join('\r\n');
}

function sha256(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

// Handler used by many scenarios: echoes what the server parsed, both on the
// wire (so framing of the echo is compared) and in the observer (so parsing
// is compared even when the response would hide a difference).
function echoHandler(req, res, observer) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const seen = {
      method: req.method,
      url: req.url,
      httpVersion: req.httpVersion,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      trailers: req.trailers,
      rawTrailers: req.rawTrailers,
      bodyLength: body.length,
      body: body.length <= 4096 ? body.toString('latin1') : sha256(body),
    };
    observer.requests.push(seen);
    const payload = JSON.stringify(seen);
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', Buffer.byteLength(payload));
    res.end(payload);
  });
}

module.exports = {
  compare,
  echoHandler,
  exchange,
  impls,
  normalize,
  poll,
  raw,
  ResponseParser,
  sha256,
  sleep,
  startServer,
  writeAsync,
};
