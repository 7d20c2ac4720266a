'use strict';

// 10 MB in each direction. These compare length + sha256 + head/tail of the
// wire bytes instead of the full string (see summarize() in helpers.js).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { Readable } = require('node:stream');
const { compare, poll, raw, writeAsync } = require('./helpers');

const MB = 1024 * 1024;
const TOTAL = 10 * MB;
const CHUNK = 64 * 1024;
const COUNT = TOTAL / CHUNK;
const BIG_TIMEOUT = 60000;

// Non-uniform content with the chunk index stamped in, so a reordered,
// dropped or duplicated chunk changes the hash.
const BASE = Buffer.alloc(CHUNK);
for (let j = 0; j < CHUNK; j++) BASE[j] = (j * 31 + 7) & 0xff;
function chunkAt(i) {
  const b = Buffer.from(BASE);
  b.writeUInt32BE(i, 0);
  return b;
}

// Writes until write() returns false, then waits for 'drain'. Records whether
// backpressure was ever signalled; the client below keeps the socket paused
// until it is, so on a healthy implementation it always is.
function streamingHandler(withLength) {
  return (req, res, observer) => {
    res.setHeader('Content-Type', 'application/octet-stream');
    if (withLength) res.setHeader('Content-Length', TOTAL);
    let i = 0;
    const pump = () => {
      while (i < COUNT) {
        if (!res.write(chunkAt(i++))) {
          observer.backpressure = true;
          res.once('drain', pump);
          return;
        }
      }
      res.end();
      observer.requests.push({ chunks: i, ended: true });
    };
    pump();
  };
}

function pausedDownload(request) {
  return (observer) => [
    request,
    async (socket) => {
      // Not reading makes the server's socket buffer fill, so write() has to
      // return false; resume once the handler has seen it (or given up).
      socket.pause();
      await poll(() => observer.backpressure || observer.requests.length > 0,
                 BIG_TIMEOUT / 2);
      socket.resume();
    },
  ];
}

function bigCheck(minLength) {
  return (s, obs) => {
    assert.ok(s.length > minLength, `only ${s.length} bytes received`);
    if (obs.backpressure !== undefined) assert.equal(obs.backpressure, true);
  };
}

test('10 MB chunked response streamed with backpressure', { timeout: BIG_TIMEOUT * 3 },
     (t) => compare(t, {
       handler: streamingHandler(false),
       request: pausedDownload(raw('GET /big HTTP/1.1', 'Host: localhost', '', '')),
       until: 1,
       big: true,
       timeout: BIG_TIMEOUT,
       check: (s, obs) => {
         bigCheck(TOTAL)(s, obs);
         assert.match(s.head, /Transfer-Encoding: chunked\r\n/);
         assert.equal(obs.backpressure, true);
       },
     }));

test('10 MB response with Content-Length streamed with backpressure',
     { timeout: BIG_TIMEOUT * 3 },
     (t) => compare(t, {
       handler: streamingHandler(true),
       request: pausedDownload(raw('GET /big HTTP/1.1', 'Host: localhost', '', '')),
       until: 1,
       big: true,
       timeout: BIG_TIMEOUT,
       check: (s, obs) => {
         bigCheck(TOTAL)(s, obs);
         assert.equal(obs.backpressure, true);
       },
     }));

test('10 MB response piped from a Readable stream', { timeout: BIG_TIMEOUT * 3 },
     (t) => compare(t, {
       handler: (req, res) => {
         res.setHeader('Content-Type', 'application/octet-stream');
         Readable.from((function* gen() {
           for (let i = 0; i < COUNT; i++) yield chunkAt(i);
         })()).pipe(res);
       },
       request: raw('GET /piped HTTP/1.1', 'Host: localhost', 'Connection: close', '', ''),
       big: true,
       timeout: BIG_TIMEOUT,
       check: bigCheck(TOTAL),
     }));

// Counts and hashes what arrives; the reply carries the totals so the
// comparison covers both the wire and the server-side view.
function uploadHandler(req, res, observer) {
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  let dataEvents = 0;
  req.on('data', (c) => {
    // One pause mid-body exercises request-side flow control: the server must
    // stop delivering (and stop reading) until resume().
    if (dataEvents === 0) {
      req.pause();
      setTimeout(() => req.resume(), 50);
    }
    dataEvents++;
    bytes += c.length;
    hash.update(c);
  });
  req.on('end', () => {
    const seen = { method: req.method, bytes, sha256: hash.digest('hex') };
    // The number of 'data' events depends on TCP segmentation; only that
    // the body was streamed (more than one event) is compared.
    seen.streamed = dataEvents > 1;
    observer.requests.push(seen);
    const body = JSON.stringify(seen);
    res.writeHead(200, { 'Content-Type': 'application/json',
                         'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
}

function expectedUpload() {
  const hash = crypto.createHash('sha256');
  for (let i = 0; i < COUNT; i++) hash.update(chunkAt(i));
  return { bytes: TOTAL, sha256: hash.digest('hex') };
}

test('10 MB upload with Content-Length streamed in chunks', { timeout: BIG_TIMEOUT * 3 },
     (t) => compare(t, {
       handler: uploadHandler,
       request: [
         raw('PUT /upload HTTP/1.1', 'Host: localhost',
             'Content-Type: application/octet-stream', `Content-Length: ${TOTAL}`, '', ''),
         async (socket) => {
           for (let i = 0; i < COUNT; i++) await writeAsync(socket, chunkAt(i));
         },
       ],
       until: 1,
       timeout: BIG_TIMEOUT,
       check: (s, obs) => {
         const exp = expectedUpload();
         assert.equal(obs.requests[0].bytes, exp.bytes);
         assert.equal(obs.requests[0].sha256, exp.sha256);
       },
     }));

test('10 MB chunked upload', { timeout: BIG_TIMEOUT * 3 }, (t) => compare(t, {
  handler: uploadHandler,
  request: [
    raw('POST /upload HTTP/1.1', 'Host: localhost', 'Transfer-Encoding: chunked', '', ''),
    async (socket) => {
      for (let i = 0; i < COUNT; i++) {
        const c = chunkAt(i);
        await writeAsync(socket, Buffer.concat([
          Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n'),
        ]));
      }
      await writeAsync(socket, '0\r\n\r\n');
    },
  ],
  until: 1,
  timeout: BIG_TIMEOUT,
  check: (s, obs) => {
    const exp = expectedUpload();
    assert.equal(obs.requests[0].bytes, exp.bytes);
    assert.equal(obs.requests[0].sha256, exp.sha256);
  },
}));
