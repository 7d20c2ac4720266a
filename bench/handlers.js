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

// workload name -> handler. pipeline and memory deliberately reuse hello: they
// measure the transport (pipelined parsing, per-connection footprint), not the
// handler.
const handlers = {
  hello,
  'hello-set': helloSetHeader,
  json,
  '64k': big,
  'post-echo': postEcho,
  pipeline: hello,
  memory: hello,
};

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

// The runner closes our stdin when it is done (or dies); exit then, so a
// crashed run never leaves a pinned server behind.
function exitWithParent() {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}

function serve(http) {
  const { workload, port } = parseArgs();
  const server = http.createServer(handlers[workload]);
  if (workload === 'memory') {
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
  exitWithParent,
  HELLO_BODY,
  JSON_HEADERS,
  JSON_PAYLOAD,
  BIG_BODY,
  POST_BODY,
};
