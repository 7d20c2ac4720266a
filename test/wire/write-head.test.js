'use strict';

// writeHead(status, [reason], {headers}) keeps the head as a decision until end() writes it
// with the body in one native call; every other way the response can continue (write,
// flushHeaders, a HEAD request, headers that change the framing, errors) must still give
// node's bytes and node's errors.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { compare, raw } = require('./helpers');

const GET = raw('GET / HTTP/1.1', 'Host: localhost', '', '');
const HEAD = raw('HEAD / HTTP/1.1', 'Host: localhost', '', '');
const GET_10 = raw('GET / HTTP/1.0', 'Host: localhost', '', '');

test('writeHead then write() then end(): the head goes out with the first chunk', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('first ');
    setTimeout(() => res.end('second'), 5);
  },
  request: GET,
  until: 1,
}));

test('writeHead then flushHeaders() sends the head before the body', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(200, { 'X-Early': 'yes' });
    res.flushHeaders();
    setTimeout(() => res.end('later'), 5);
  },
  request: GET,
  until: 1,
}));

test('writeHead with Content-Length, then end(Buffer)', (t) => compare(t, {
  handler: (req, res) => {
    const body = Buffer.from('exactly');
    res.writeHead(200, { 'Content-Length': body.length, 'Content-Type': 'application/octet-stream' });
    res.end(body);
  },
  request: GET,
  until: 1,
}));

test('writeHead answering HEAD sends no body', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('not for HEAD');
  },
  request: HEAD,
  methods: ['HEAD'],
  until: 1,
  check: (s) => assert.doesNotMatch(s.wire, /not for HEAD/),
}));

test('writeHead with Connection: close closes after the response', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(200, { Connection: 'close', 'Content-Type': 'text/plain' });
    res.end('bye');
  },
  request: GET,
  until: 'close',
}));

test('writeHead to an HTTP/1.0 client', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('old client');
  },
  request: GET_10,
  until: 'close',
}));

test('writeHead with no headers then end() with no body', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(202);
    res.end();
  },
  request: GET,
  until: 1,
}));

test('writeHead with a trailer declared, then addTrailers and end', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(200, { Trailer: 'X-Sum' });
    res.addTrailers({ 'X-Sum': '42' });
    res.end('with trailer');
  },
  request: GET,
  until: 1,
}));

test('writeHead state is node\'s before end(): headersSent, statusCode, statusMessage', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead('201', { 'X-A': 'b' });
    const seen = [res.headersSent, res.statusCode, res.statusMessage, res.getHeader('x-a'),
      res.chunkedEncoding, res._last];
    let again;
    try {
      res.writeHead(200);
    } catch (err) {
      again = err.code;
    }
    let set;
    try {
      res.setHeader('X-Late', '1');
    } catch (err) {
      set = err.code;
    }
    res.end(JSON.stringify({ seen, again, set }));
  },
  request: GET,
  until: 1,
}));

test('writeHead rejects bad names, bad values and bad status codes as node does', (t) => compare(t, {
  handler: (req, res) => {
    const codes = [];
    for (const args of [
      [200, { 'Bad Name': 'x' }],
      [200, { 'X-Ok': 'line\nbreak' }],
      [200, { 'X-Undefined': undefined }],
      [99, {}],
      [1000, {}],
      [200, 'Bad\nReason', {}],
    ]) {
      try {
        res.writeHead(...args);
        codes.push('no error');
        break;
      } catch (err) {
        codes.push(`${err.name}:${err.code}:${err.message}`);
      }
    }
    // A failed writeHead leaves no head: the response can still be sent.
    res.statusCode = 200;
    res.statusMessage = 'OK';
    res.end(JSON.stringify(codes));
  },
  request: GET,
  until: 1,
}));

test('setHeader then writeHead({headers}) merges (node\'s slow case)', (t) => compare(t, {
  handler: (req, res) => {
    res.setHeader('X-Set', '1');
    res.writeHead(200, { 'X-Head': '2' });
    res.end('merged');
  },
  request: GET,
  until: 1,
}));

// Large Buffer bodies go to the kernel without a copy when nothing is queued before them;
// what the kernel does not take (4 MiB is more than a loopback socket buffer) is queued.
for (const size of [64 * 1024, 4 * 1024 * 1024]) {
  const body = Buffer.alloc(size, 'abcdefghijklmnopqrstuvwxyz0123456789\n');
  test(`writeHead + end(${size} B Buffer): chunked, one chunk`, (t) => compare(t, {
    handler: (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end(body);
    },
    request: GET,
    until: 1,
  }));

  test(`end(${size} B Buffer) alone: Content-Length`, (t) => compare(t, {
    handler: (req, res) => {
      res.end(body);
    },
    request: GET,
    until: 1,
  }));
}

test('large Buffer bodies on pipelined requests keep their order', (t) => compare(t, {
  handler: (req, res) => {
    const body = Buffer.alloc(32 * 1024, req.url.slice(1));
    // The second response ends first: it waits behind the first one.
    setTimeout(() => res.end(body), req.url === '/a' ? 20 : 0);
  },
  request: raw('GET /a HTTP/1.1', 'Host: localhost', '', 'GET /b HTTP/1.1', 'Host: localhost', '', ''),
  until: 2,
}));

test('setHeader store: names like Object.prototype members are plain headers', (t) => compare(t, {
  handler: (req, res) => {
    const before = [res.getHeader('constructor'), res.hasHeader('constructor'),
      res.hasHeader('__proto__')];
    res.setHeader('Constructor', 'a');
    res.setHeader('__proto__', 'b');
    res.setHeader('X-Plain', 'c');
    const after = [res.getHeader('constructor'), res.getHeader('__proto__'),
      Object.getPrototypeOf(res.getHeaders()), res.getHeaderNames(), res.hasHeader('valueOf')];
    res.removeHeader('x-plain');
    res.end(JSON.stringify({ before, after }));
  },
  request: GET,
  until: 1,
}));

// Header lines are cached per name and value (response-head.js): a name whose value changes
// from one response to the next must carry each response's own value.
test('one header name with changing values across responses (writeHead and setHeader)', (t) => compare(t, {
  handler: (req, res) => {
    const v = req.url.slice(1);
    if (v.startsWith('s')) {
      res.setHeader('X-V', v);
      res.end(v);
    } else {
      res.writeHead(200, { 'X-V': v, 'Content-Type': v.length > 1 ? 'text/html' : 'text/plain' });
      res.end(v);
    }
  },
  request: raw(
    'GET /a HTTP/1.1', 'Host: localhost', '',
    'GET /bb HTTP/1.1', 'Host: localhost', '',
    'GET /a HTTP/1.1', 'Host: localhost', '',
    'GET /s1 HTTP/1.1', 'Host: localhost', '',
    'GET /s2 HTTP/1.1', 'Host: localhost', '',
    ''),
  until: 5,
}));
