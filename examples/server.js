'use strict';

// Example fast-http app (`npm start`). It is written exactly as a node:http
// app would be; only the require differs.
//
//   PORT=8080 HOST=0.0.0.0 npm start
//
//   curl http://127.0.0.1:3000/
//   curl http://127.0.0.1:3000/json
//   curl --data-binary @package.json http://127.0.0.1:3000/echo
//   curl http://127.0.0.1:3000/stream?lines=100000 | tail -1

const { pipeline } = require('node:stream');
// The package root, i.e. require('fast-http') for an installed copy.
const { createServer, STATUS_CODES } = require('..');

const PORT = Number.parseInt(process.env.PORT || '3000', 10);
// Loopback by default so that trying the example never exposes a port to the
// network; set HOST=0.0.0.0 (or ::) to listen on all interfaces.
const HOST = process.env.HOST || '127.0.0.1';
const MAX_STREAM_LINES = 1_000_000;
const SHUTDOWN_GRACE_MS = 10_000;

function sendText(res, status, text, extraHeaders) {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...extraHeaders,
  });
  res.end(text);
}

// POST /echo: streams the request body straight back. pipeline() (pipe plus
// error handling) respects backpressure in both directions and destroys
// both streams if the client goes away mid-transfer.
function echo(req, res) {
  if (req.method !== 'POST') {
    sendText(res, 405, `${STATUS_CODES[405]}\n`, { allow: 'POST' });
    return;
  }
  const headers = { 'content-type': req.headers['content-type'] || 'application/octet-stream' };
  // Echo a known length so the reply is not chunked when the request wasn't.
  if (req.headers['content-length'] !== undefined) {
    headers['content-length'] = req.headers['content-length'];
  }
  res.writeHead(200, headers);
  pipeline(req, res, (err) => {
    if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') {
      console.error('echo failed:', err.message);
    }
  });
}

// GET /stream?lines=N: a chunked response written line by line. When write()
// returns false the socket buffer is full, so we wait for 'drain' instead of
// buffering the whole response in memory; if the client disconnects ('close'
// before we finish) we stop producing.
function stream(req, res, url) {
  const requested = Number.parseInt(url.searchParams.get('lines') || '1000', 10);
  if (!Number.isSafeInteger(requested) || requested < 0 || requested > MAX_STREAM_LINES) {
    sendText(res, 400, `lines must be an integer between 0 and ${MAX_STREAM_LINES}\n`);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });

  let i = 0;
  let aborted = false;
  res.on('close', () => {
    aborted = !res.writableFinished;
  });

  function writeSome() {
    while (i < requested && !aborted) {
      i += 1;
      if (!res.write(`line ${i} of ${requested}\n`)) {
        res.once('drain', writeSome);
        return;
      }
    }
    if (!aborted) res.end();
  }
  writeSome();
}

const server = createServer((req, res) => {
  let url;
  try {
    // Only path and query matter here; the base just makes req.url parseable.
    url = new URL(req.url, 'http://localhost');
  } catch {
    sendText(res, 400, `${STATUS_CODES[400]}\n`);
    return;
  }
  switch (url.pathname) {
    case '/':
      sendText(res, 200, 'Hello from fast-http!\n');
      return;
    case '/json': {
      const body = JSON.stringify({
        message: 'Hello from fast-http!',
        method: req.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        userAgent: req.headers['user-agent'] || null,
      });
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
      return;
    }
    case '/echo':
      echo(req, res);
      return;
    case '/stream':
      stream(req, res, url);
      return;
    default:
      sendText(res, 404, `${STATUS_CODES[404]}\n`);
  }
});

server.on('error', (err) => {
  console.error(`server error: ${err.message}`);
  process.exitCode = 1;
});

server.listen(PORT, HOST, () => {
  const { address, port, family } = server.address();
  const host = family === 'IPv6' ? `[${address}]` : address;
  console.log(`fast-http example listening on http://${host}:${port}/`);
});

// Graceful shutdown: stop accepting connections, close keep-alive sockets
// that are idle right now, let in-flight requests finish, and only force the
// remaining sockets closed after a grace period. A second signal exits at once.
let shuttingDown = false;
function shutdown(signal) {
  if (shuttingDown) {
    process.exit(1);
  }
  shuttingDown = true;
  console.log(`${signal} received, shutting down`);
  server.close((err) => {
    if (err) console.error(`close failed: ${err.message}`);
    process.exit(err ? 1 : 0);
  });
  server.closeIdleConnections();
  // unref: this timer alone must not keep the process alive.
  setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
