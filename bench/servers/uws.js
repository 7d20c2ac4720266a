'use strict';

// uWebSockets.js reference row. uWS has its own API, so the handlers are
// re-expressed here, but every body and header value comes from
// ../handlers.js (and the realistic row's app from ../realistic.js) so the responses match
// the node:http-API servers. The https rows run on SSLApp.
// Which build is loaded (BENCH_UWS_MODULE, or a package bench/run.js installs into
// .cache/bench-deps, glibc-patched when needed) is decided by ../lib/uws-binary.js, which
// also rejects a JS fallback: only a native uws*.node counts as uWS.

const {
  parseArgs, exitWithParent, prepare, getUser, isHttps, tlsFiles, HELLO_BODY, JSON_HEADERS, JSON_PAYLOAD, BIG_BODY,
} = require('../handlers');
const app = require('../realistic');
const { loadUws } = require('../lib/uws-binary');

let uWS;
try {
  uWS = loadUws().uws;
} catch (err) {
  // The runner shows this as "not available" instead of a failed server.
  process.stdout.write(`UNAVAILABLE ${String(err.message).split('\n')[0]}\n`);
  process.exit(0);
}
const { workload, port } = parseArgs();
const JSON_HEADER_ENTRIES = Object.entries(JSON_HEADERS);

function hello(res) {
  // uWS corks synchronous handlers itself; there is no setHeader/writeHead
  // distinction, so hello and hello-set are the same code here.
  res.writeStatus('200 OK').writeHeader('Content-Type', 'text/plain').end(HELLO_BODY);
}

function json(res) {
  res.writeStatus('200 OK');
  for (const [name, value] of JSON_HEADER_ENTRIES) res.writeHeader(name, value);
  res.end(JSON.stringify(JSON_PAYLOAD));
}

function big(res) {
  res.writeStatus('200 OK').writeHeader('Content-Type', 'application/octet-stream').end(BIG_BODY);
}

function postEcho(res) {
  // uWS reuses the ArrayBuffer after the callback returns, so each chunk is
  // copied; an aborted request must not be written to.
  const chunks = [];
  let aborted = false;
  res.onAborted(() => { aborted = true; });
  res.onData((ab, isLast) => {
    chunks.push(Buffer.from(ab.slice(0)));
    if (!isLast || aborted) return;
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/octet-stream')
        .end(Buffer.concat(chunks));
    });
  });
}

// The same app as bench/handlers.js's realistic(): the same render, the same heap.
function realistic(res, req) {
  const body = app.render(app.idFromPath(req.getUrl()), getUser);
  if (body === null) {
    res.writeStatus('404 Not Found').writeHeader('Content-Type', 'text/plain').end('Not Found');
    return;
  }
  res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
}

const handlers = {
  hello, 'hello-set': hello, json, '64k': big, 'post-echo': postEcho, pipeline: hello, memory: hello, realistic,
  // The https rows on SSLApp, uWS's TLS server (BoringSSL), with the same key and certificate.
  'https-hello': hello,
  'https-handshake-ecdsa': hello,
  'https-handshake-rsa': hello,
  'https-idle': hello,
  'https-pipeline': hello,
};
const handler = handlers[workload];
if (!handler) {
  process.stdout.write(`UNAVAILABLE no uWebSockets.js handler for ${workload}\n`);
  process.exit(0);
}
prepare(workload);

let server;
if (isHttps(workload)) {
  const files = tlsFiles(workload);
  server = uWS.SSLApp({ key_file_name: files.key, cert_file_name: files.cert });
} else {
  server = uWS.App();
}
server
  .any('/*', (res, req) => handler(res, req))
  .listen('127.0.0.1', port, (token) => {
    if (!token) {
      process.stderr.write(`uws: listen on 127.0.0.1:${port} failed\n`);
      process.exit(1);
    }
    process.stdout.write(`READY ${uWS.us_socket_local_port(token)}\n`);
  });
exitWithParent();
