'use strict';

// The request handlers every node:http-API server in the benchmark runs.
// bench/servers/fast-http.js and bench/servers/node-http.js both call
// serve() below with their own `http` module, so the handler code, the server
// options and the listen call are literally the same for both; the only
// variable is the server core. bench/servers/uws.js cannot use this API, so
// it reimplements the handlers on uWS but takes its bodies and header values
// from the constants here, so the responses stay byte-comparable.

const HELLO_BODY = 'Hello World';

// Five application headers, the typical amount a JSON API sets itself
// (Content-Length/Date/Connection are added by the server on top).
const JSON_HEADERS = {
  'Content-Type': 'application/json',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  Vary: 'Accept-Encoding',
};

// Serialized per request on purpose: real handlers build their payload per
// request, and that cost is the same for every server.
const JSON_PAYLOAD = { message: 'Hello, World!', id: 1, ok: true, tags: ['fast', 'http'] };

// 64 KiB of a printable repeating pattern (not zeros) so a truncated or
// misplaced chunk is caught by the byte-for-byte proof check.
const BIG_BODY = Buffer.alloc(64 * 1024, 'abcdefghijklmnopqrstuvwxyz0123456789\n');

// Must match bench/wrk/post-echo.lua: string.rep("0123456789abcdef", 256).
const POST_BODY = '0123456789abcdef'.repeat(256);

function hello(req, res) {
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  res.end(HELLO_BODY);
}

function helloSetHeader(req, res) {
  res.setHeader('Content-Type', 'text/plain');
  res.end(HELLO_BODY);
}

function json(req, res) {
  res.writeHead(200, JSON_HEADERS);
  res.end(JSON.stringify(JSON_PAYLOAD));
}

function big(req, res) {
  res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
  res.end(BIG_BODY);
}

function postEcho(req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
    res.end(Buffer.concat(chunks));
  });
}

// The realistic row's app (bench/realistic.js): its live heap is built by prepare() before the
// server listens, and only for that row (other rows must not carry a 150 MB heap).
const app = require('./realistic');
let heap = null;
const getUser = (id) => heap.get(id);

function realistic(req, res) {
  const body = app.render(app.idFromPath(req.url), getUser);
  if (body === null) {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('Not Found');
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(body);
}

/** Work a workload needs before the server listens: the realistic row's heap. */
function prepare(workload) {
  if (workload !== 'realistic' || heap !== null) return;
  heap = app.buildHeap(app.recordCount(app.liveHeapMb()));
}

// workload name -> handler. pipeline, memory and the https rows deliberately reuse hello:
// they measure the transport (pipelined parsing, TLS, per-connection footprint), not the
// handler.
const handlers = {
  hello,
  'hello-set': helloSetHeader,
  json,
  '64k': big,
  'post-echo': postEcho,
  pipeline: hello,
  memory: hello,
  'https-hello': hello,
  'https-handshake-ecdsa': hello,
  'https-handshake-rsa': hello,
  'https-idle': hello,
  'https-pipeline': hello,
  realistic,
};

// The https rows' certificates (test/fixtures/tls, made with its gen.sh): every
// https server gets the same key and certificate for the same row, so a handshake costs the
// same signature for both.
const TLS_DIR = require('node:path').join(__dirname, '..', 'test', 'fixtures', 'tls');
/** The key and certificate files of an https row (uWS's SSLApp takes file names). */
function tlsFiles(workload) {
  const kind = workload === 'https-handshake-rsa' ? 'rsa' : 'ecdsa';
  const file = (what) => require('node:path').join(TLS_DIR, `server-${kind}-${what}.pem`);
  return { key: file('key'), cert: file('cert') };
}
function tlsOptions(workload) {
  const fs = require('node:fs');
  const files = tlsFiles(workload);
  return { key: fs.readFileSync(files.key), cert: fs.readFileSync(files.cert) };
}

const isHttps = (workload) => workload.startsWith('https-');

// argv: <workload> <port>; env BENCH_WORKLOAD / BENCH_PORT as a fallback so
// the server files can also be started by hand.
function parseArgs(argv = process.argv.slice(2), env = process.env) {
  const workload = argv[0] || env.BENCH_WORKLOAD || 'hello';
  const port = Number(argv[1] || env.BENCH_PORT || 3000);
  if (!Object.prototype.hasOwnProperty.call(handlers, workload)) {
    throw new Error(`unknown workload "${workload}" (known: ${Object.keys(handlers).join(', ')})`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port "${port}"`);
  return { workload, port };
}

// GC pauses on the main thread since start, from perf_hooks' 'gc' entries: what the runner
// asks for around each round of a row that reports GC time (BENCH_GC=perf_hooks, set for the
// servers that run on Node). Bun has no 'gc' entries and Deno's observer stays silent, so the
// runner reads their engines' GC logs instead (bench/run.js, gcSource).
let gcTotals = null;
function observeGc() {
  const { PerformanceObserver } = require('node:perf_hooks');
  gcTotals = { ms: 0, count: 0 };
  const add = (entries) => {
    for (const e of entries) {
      gcTotals.ms += e.duration;
      gcTotals.count++;
    }
  };
  const observer = new PerformanceObserver((list) => add(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  // Entries are delivered in a later task: a query takes the ones still queued first.
  gcTotals.flush = () => add(observer.takeRecords());
}

// The runner closes our stdin when it is done (or dies); exit then, so a
// crashed run never leaves a pinned server behind. A line "gc" on stdin asks for the GC
// totals: the answer is one line "GC <ms> <count>" on stdout.
function exitWithParent() {
  if (process.env.BENCH_GC === 'perf_hooks' && gcTotals === null) observeGc();
  let pending = '';
  process.stdin.on('data', (chunk) => {
    pending += chunk;
    let nl;
    while ((nl = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line === 'gc') {
        if (gcTotals) gcTotals.flush();
        process.stdout.write(gcTotals ? `GC ${gcTotals.ms} ${gcTotals.count}\n` : 'GC - -\n');
      }
    }
  });
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
}

// `loadHttps()` gives the https module of the server under test; it throws when that server
// has none, which is reported to the runner as "UNAVAILABLE <reason>" (a "not available"
// cell in the table, not a failed run).
function serve(http, loadHttps) {
  const { workload, port } = parseArgs();
  let server;
  if (isHttps(workload)) {
    let https;
    try {
      if (!loadHttps) throw new Error('this server has no https implementation');
      https = loadHttps();
    } catch (err) {
      process.stdout.write(`UNAVAILABLE ${err.message}\n`);
      process.exit(0);
    }
    server = https.createServer(tlsOptions(workload), handlers[workload]);
  } else {
    server = http.createServer(handlers[workload]);
  }
  prepare(workload);
  if (workload === 'memory' || workload === 'https-idle') {
    // The default 5 s keep-alive timeout would start closing the idle
    // connections while the client is still opening the rest.
    server.keepAliveTimeout = 120000;
  }
  server.listen(port, '127.0.0.1', () => {
    let actual = port;
    try {
      const addr = server.address();
      if (addr && addr.port) actual = addr.port;
    } catch {
      // address() is optional for this harness; the runner passes a free port.
    }
    process.stdout.write(`READY ${actual}\n`);
  });
  exitWithParent();
  return server;
}

module.exports = {
  handlers,
  serve,
  parseArgs,
  tlsOptions,
  tlsFiles,
  TLS_DIR,
  exitWithParent,
  prepare,
  getUser,
  isHttps,
  HELLO_BODY,
  JSON_HEADERS,
  JSON_PAYLOAD,
  BIG_BODY,
  POST_BODY,
};
