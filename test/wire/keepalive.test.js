'use strict';

// Connection persistence decisions. Where the server is expected to close,
// the exchange has no `until`, so it only ends on the server's FIN (or times
// out, which fails the comparison). Where it must stay open, a follow-up
// request is sent after the previous response and must be answered.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { compare, raw } = require('./helpers');

function helloHandler(req, res) {
  res.setHeader('Content-Type', 'text/plain');
  res.end(`hello ${req.url}\n`);
}

// HTTP/1.0 keep-alive only survives with an explicit Content-Length.
function lengthHandler(req, res) {
  const body = `hello ${req.url}\n`;
  res.writeHead(200, { 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function chunkedHandler(req, res) {
  res.write('part one, ');
  res.end('part two\n');
}

test('HTTP/1.0 without keep-alive: server closes after response', (t) => compare(t, {
  handler: helloHandler,
  request: raw('GET /one HTTP/1.0', 'Host: localhost', '', ''),
  check: (s) => assert.match(s.wire, /^HTTP\/1\.1 200 OK\r\n[^]*Connection: close\r\n/),
}));

test('HTTP/1.0 without Content-Length: body delimited by close', (t) => compare(t, {
  handler: chunkedHandler,
  request: raw('GET /stream HTTP/1.0', '', ''),
  check: (s) => assert.doesNotMatch(s.wire, /Transfer-Encoding/),
}));

test('HTTP/1.0 with Connection: keep-alive serves a second request', (t) => compare(t, {
  handler: lengthHandler,
  request: [
    raw('GET /first HTTP/1.0', 'Host: localhost', 'Connection: keep-alive', '', ''),
    { waitResponses: 1 },
    raw('GET /second HTTP/1.0', 'Host: localhost', 'Connection: keep-alive', '', ''),
  ],
  until: 2,
  check: (s) => assert.equal(s.responses, 2),
}));

test('HTTP/1.0 keep-alive with implicit length closes instead', (t) => compare(t, {
  // Node only honours 1.0 keep-alive when the handler set Content-Length
  // itself; end(body) alone makes it fall back to a close-delimited body.
  handler: helloHandler,
  request: raw('GET / HTTP/1.0', 'Connection: keep-alive', '', ''),
}));

test('HTTP/1.1 Connection: close: server closes after response', (t) => compare(t, {
  handler: helloHandler,
  request: raw('GET / HTTP/1.1', 'Host: localhost', 'Connection: close', '', ''),
  check: (s) => assert.match(s.wire, /Connection: close\r\n/),
}));

test('HTTP/1.1 Connection: close with chunked response', (t) => compare(t, {
  handler: chunkedHandler,
  request: raw('GET / HTTP/1.1', 'Host: localhost', 'Connection: close', '', ''),
}));

test('keep-alive: three sequential requests reuse one socket', (t) => compare(t, {
  handler: helloHandler,
  request: [
    raw('GET /1 HTTP/1.1', 'Host: localhost', '', ''),
    { waitResponses: 1 },
    raw('GET /2 HTTP/1.1', 'Host: localhost', '', ''),
    { waitResponses: 2 },
    raw('GET /3 HTTP/1.1', 'Host: localhost', '', ''),
  ],
  until: 3,
  check: (s) => assert.equal(s.responses, 3),
}));

test('handler sets Connection: close on a keep-alive request', (t) => compare(t, {
  handler: (req, res) => {
    res.setHeader('Connection', 'close');
    res.end('bye');
  },
  request: raw('GET / HTTP/1.1', 'Host: localhost', '', ''),
}));

test('maxRequestsPerSocket: last allowed response announces close', (t) => compare(t, {
  handler: helloHandler,
  // A property, not a createServer() option, in node 20.
  setup: (server) => { server.maxRequestsPerSocket = 2; },
  request: [
    raw('GET /1 HTTP/1.1', 'Host: localhost', '', ''),
    { waitResponses: 1 },
    raw('GET /2 HTTP/1.1', 'Host: localhost', '', ''),
  ],
  // Node 20 announces Connection: close here but leaves the socket open
  // until the keep-alive timeout, so end the exchange with our FIN instead.
  until: 2,
}));
