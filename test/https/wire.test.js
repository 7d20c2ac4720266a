'use strict';
// Decrypted bytes on the wire: node's https server and fast-http's answer the same
// requests with the same bytes (Date masked), the same server events and the same
// observations in the handler.
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { raw, echoHandler } = require('../wire/helpers');
const { compareHttps } = require('./helpers');

const T = { timeout: 60000 };

function echo(req, res, seen) {
  echoHandler(req, res, { requests: seen });
}

function hello(req, res) {
  res.end('hello world');
}

test('GET hello', T, async (t) => {
  await compareHttps(t, {
    handler: hello,
    request: raw('GET / HTTP/1.1', 'Host: localhost', '', ''),
    until: 1,
    check: (a) => assert.match(a.summary.wire, /hello world$/),
  });
});

test('GET with Connection: close: the server closes after the response', T, async (t) => {
  await compareHttps(t, {
    handler: hello,
    request: raw('GET /x?y=1 HTTP/1.1', 'Host: localhost', 'Connection: close', '', ''),
    check: (a) => assert.match(a.summary.wire, /^HTTP\/1\.1 200 OK\r\n[^]*Connection: close\r\n/),
  });
});

test('HEAD', T, async (t) => {
  await compareHttps(t, {
    handler: (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.end('not sent for HEAD');
    },
    request: raw('HEAD / HTTP/1.1', 'Host: localhost', '', ''),
    methods: ['HEAD'],
    until: 1,
    check: (a) => assert.doesNotMatch(a.summary.wire, /not sent/),
  });
});

test('POST with a Content-Length body', T, async (t) => {
  await compareHttps(t, {
    handler: echo,
    request: raw('POST /post HTTP/1.1', 'Host: localhost', 'Content-Type: text/plain',
      'Content-Length: 11', '', 'hello there'),
    until: 1,
    check: (a) => assert.equal(a.seen[0].body, 'hello there'),
  });
});

test('chunked request body and chunked response', T, async (t) => {
  await compareHttps(t, {
    handler: (req, res, seen) => {
      const parts = [];
      req.on('data', (c) => parts.push(c.toString('latin1')));
      req.on('end', () => {
        seen.push({ body: parts.join(''), trailers: req.trailers });
        res.write('first,');
        res.write('second,');
        res.end('third');
      });
    },
    request: raw('POST /chunked HTTP/1.1', 'Host: localhost', 'Transfer-Encoding: chunked', '',
      '5', 'hello', '6', ' world', '0', 'X-Trailer: yes', '', ''),
    until: 1,
    check: (a) => {
      assert.match(a.summary.wire, /Transfer-Encoding: chunked/);
      assert.equal(a.seen[0].body, 'hello world');
    },
  });
});

test('keep-alive: two requests on one connection', T, async (t) => {
  let n = 0;
  await compareHttps(t, {
    setup: () => { n = 0; },
    handler: (req, res) => res.end(`response ${++n} to ${req.url}`),
    request: [
      raw('GET /one HTTP/1.1', 'Host: localhost', '', ''),
      { waitResponses: 1 },
      raw('GET /two HTTP/1.1', 'Host: localhost', '', ''),
    ],
    until: 2,
    check: (a) => assert.match(a.summary.wire, /response 2 to \/two$/),
  });
});

test('pipelined: three requests in one write', T, async (t) => {
  await compareHttps(t, {
    handler: echo,
    request: raw('GET /1 HTTP/1.1', 'Host: localhost', '', '') +
      raw('POST /2 HTTP/1.1', 'Host: localhost', 'Content-Length: 3', '', 'abc') +
      raw('GET /3 HTTP/1.1', 'Host: localhost', '', ''),
    until: 3,
    check: (a) => assert.deepEqual(a.seen.map((s) => s.url), ['/1', '/2', '/3']),
  });
});

test('Expect: 100-continue', T, async (t) => {
  await compareHttps(t, {
    handler: echo,
    request: [
      raw('PUT /upload HTTP/1.1', 'Host: localhost', 'Expect: 100-continue', 'Content-Length: 4', '', ''),
      { waitFor: 'HTTP/1.1 100 Continue\r\n\r\n' },
      'data',
    ],
    until: 1,
    check: (a) => assert.match(a.summary.wire, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK/),
  });
});

test('a 64 KiB response body and a 64 KiB request body', T, async (t) => {
  const big = Buffer.alloc(64 * 1024, 'abcdefghijklmnopqrstuvwxyz0123456789');
  await compareHttps(t, {
    handler: (req, res, seen) => {
      let got = 0;
      req.on('data', (c) => { got += c.length; });
      req.on('end', () => {
        seen.push({ got });
        res.setHeader('Content-Length', big.length);
        res.end(big);
      });
    },
    request: [raw('POST /big HTTP/1.1', 'Host: localhost', `Content-Length: ${big.length}`, '', ''), big],
    until: 1,
    check: (a) => {
      assert.deepEqual(a.seen, [{ got: big.length }]);
      assert.ok(a.summary.wire.endsWith(big.toString('latin1').slice(-100)));
    },
  });
});

test('a malformed request gets node\'s 400 over TLS', T, async (t) => {
  await compareHttps(t, {
    handler: hello,
    request: 'GET / HTTP/1.1\r\nHost localhost\r\n\r\n',
    check: (a) => {
      assert.match(a.summary.wire, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.ok(a.events.some((e) => e.event === 'clientError'));
    },
  });
});
