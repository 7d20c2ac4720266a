'use strict';

// Request bodies (Content-Length and chunked, split across packets so the
// parser has to resume mid-token), trailers in both directions, and the
// Expect header flows.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { compare, echoHandler, raw } = require('./helpers');

// Small pauses between writes make it very likely each piece arrives as its
// own TCP segment; correctness doesn't depend on it, the bytes must match
// either way.
// Each piece a read of its own on the server.
const SPLIT = { serverRead: true };

test('POST with Content-Length body echoed', (t) => compare(t, {
  handler: echoHandler,
  request: raw(
    'POST /submit HTTP/1.1',
    'Host: localhost',
    'Content-Type: application/x-www-form-urlencoded',
    'Content-Length: 27',
    '',
    'name=fast&value=http%20body'),
  until: 1,
  check: (s, obs) => assert.equal(obs.requests[0].bodyLength, 27),
}));

test('POST with Content-Length body split across packets', (t) => compare(t, {
  handler: echoHandler,
  request: [
    'POST /split HTTP/1.1\r\nHost: local',
    SPLIT,
    'host\r\nContent-Length: 10\r\n\r\n01234',
    SPLIT,
    '56789',
  ],
  until: 1,
}));

test('POST with chunked body (extensions) echoed', (t) => compare(t, {
  handler: echoHandler,
  request: raw(
    'POST /chunked HTTP/1.1',
    'Host: localhost',
    'Transfer-Encoding: chunked',
    '',
    '5;ext=1',
    'hello',
    '1',
    ' ',
    'A',
    '0123456789',
    '0',
    '', ''),
  until: 1,
  check: (s, obs) => assert.equal(obs.requests[0].body, 'hello 0123456789'),
}));

test('POST chunked body split inside chunk-size and data', (t) => compare(t, {
  handler: echoHandler,
  request: [
    'POST /chunked HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n1',
    SPLIT,
    '0\r\n0123456789ab',
    SPLIT,
    'cdef\r\n0\r',
    SPLIT,
    '\n\r\n',
  ],
  until: 1,
  check: (s, obs) => assert.equal(obs.requests[0].bodyLength, 16),
}));

test('POST with empty chunked body', (t) => compare(t, {
  handler: echoHandler,
  request: raw('POST /empty HTTP/1.1', 'Host: localhost',
               'Transfer-Encoding: chunked', '', '0', '', ''),
  until: 1,
}));

test('request trailers are parsed (chunked body with trailers)', (t) => compare(t, {
  handler: echoHandler,
  request: raw(
    'POST /trailers HTTP/1.1',
    'Host: localhost',
    'Transfer-Encoding: chunked',
    'Trailer: X-Checksum, X-Other',
    '',
    '4',
    'data',
    '0',
    'X-Checksum: abc123',
    'x-other: two',
    'X-Checksum: dup',
    '', ''),
  until: 1,
  check: (s, obs) => assert.equal(obs.requests[0].rawTrailers.length, 6),
}));

test('response trailers via addTrailers', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain', Trailer: 'Content-MD5, X-Count' });
    res.write('some ');
    res.write('data');
    res.addTrailers({ 'Content-MD5': '7895bf4b8828b55ceaf47747b4bca667', 'X-Count': 2 });
    res.end();
  },
  request: raw('GET / HTTP/1.1', 'Host: localhost', 'TE: trailers', '', ''),
  until: 1,
  check: (s) => assert.match(s.wire, /0\r\nContent-MD5: 7895bf4b8828b55ceaf47747b4bca667\r\n/),
}));

test('request body not consumed by handler; next request still served', (t) => compare(t, {
  handler: (req, res) => res.end(`handled ${req.method} ${req.url}\n`),
  request: [
    raw('POST /ignored HTTP/1.1', 'Host: localhost', 'Content-Length: 12', '', 'unread bytes'),
    SPLIT,
    raw('GET /next HTTP/1.1', 'Host: localhost', '', ''),
  ],
  until: 2,
}));

test('Expect: 100-continue, body sent after 100 Continue', (t) => compare(t, {
  handler: echoHandler,
  request: [
    raw('PUT /upload HTTP/1.1', 'Host: localhost', 'Content-Length: 11',
        'Expect: 100-continue', '', ''),
    // The client must not send the body before the interim response; waiting
    // for it is the point of the scenario.
    { waitFor: 'HTTP/1.1 100 Continue\r\n\r\n' },
    'hello world',
  ],
  until: 1,
  check: (s) => assert.match(s.wire, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/),
}));

test('Expect: 100-continue with a checkContinue listener that rejects', (t) => compare(t, {
  handler: echoHandler,
  setup: (server, observer) => {
    server.on('checkContinue', (req, res) => {
      observer.events.push({ event: 'checkContinue', url: req.url });
      res.writeHead(413, { 'Content-Length': 9 });
      res.end('too large');
    });
  },
  request: raw('PUT /big HTTP/1.1', 'Host: localhost', 'Content-Length: 99999',
               'Expect: 100-continue', '', ''),
  check: (s) => assert.match(s.wire, /^HTTP\/1\.1 413 /),
}));

test('Expect with an unknown expectation gets 417', (t) => compare(t, {
  handler: echoHandler,
  request: raw('GET / HTTP/1.1', 'Host: localhost', 'Expect: something-else', '', ''),
  until: 1,
  check: (s) => assert.match(s.wire, /^HTTP\/1\.1 417 Expectation Failed\r\n/),
}));

test('body read after the response ended, then the next request', (t) => compare(t, {
  // The app answers first and reads the body afterwards: every byte and 'end' must still
  // reach it, and the connection must go on to the next request.
  handler: (req, res, observer) => {
    res.end('early\n');
    let n = 0;
    req.on('data', (d) => { n += d.length; });
    req.on('end', () => observer.requests.push({ url: req.url, late: n, trailers: req.trailers }));
  },
  request: raw('POST /late HTTP/1.1', 'Host: localhost', 'Transfer-Encoding: chunked', '',
               '5', 'hello', '6', ' world', '0', 'X-T: 1', '', '') +
           raw('GET /next HTTP/1.1', 'Host: localhost', '', ''),
  until: 2,
  check: (s, obs) => {
    assert.deepEqual(obs.requests.map((r) => r.late), [11, 0]);
    assert.deepEqual(obs.requests[0].trailers, { 'x-t': '1' });
  },
}));
