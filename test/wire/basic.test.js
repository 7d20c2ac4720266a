'use strict';

// Response head serialization: status line, implicit vs explicit headers,
// bodiless statuses. Keep-alive exchanges stop after the expected number of
// responses (`until`), then we send FIN so the server's close ends the capture;
// any stray bytes the server sends after a response are therefore compared too.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { compare, echoHandler, raw } = require('./helpers');

const GET = raw('GET / HTTP/1.1', 'Host: localhost', '', '');
const HEAD = raw('HEAD / HTTP/1.1', 'Host: localhost', '', '');

function helloHandler(req, res) {
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Mixed-Case-Header', 'Preserved');
  res.end('hello world\n');
}

function chunkedHandler(req, res) {
  res.setHeader('Content-Type', 'text/plain');
  res.write('first chunk\n');
  res.write(Buffer.from('second chunk\n'));
  res.write('');
  res.end('last chunk\n');
}

function hasStatus(status) {
  return (summary) => assert.match(summary.wire, new RegExp(`^HTTP/1\\.1 ${status} `));
}

test('GET: setHeader + end with implicit Content-Length', (t) => compare(t, {
  handler: helloHandler,
  request: GET,
  until: 1,
  check: hasStatus(200),
}));

test('HEAD: same handler keeps headers, drops body', (t) => compare(t, {
  handler: helloHandler,
  request: HEAD,
  methods: ['HEAD'],
  until: 1,
  check: (s) => assert.doesNotMatch(s.wire, /hello world/),
}));

test('GET: empty end() sends Content-Length: 0', (t) => compare(t, {
  handler: (req, res) => res.end(),
  request: GET,
  until: 1,
}));

test('writeHead with object headers (incl. array value)', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(201, {
      'Content-Type': 'text/plain',
      'X-Multi': ['one', 'two'],
      'content-length': 7,
      'X-Number': 42,
    });
    res.end('created');
  },
  request: GET,
  until: 1,
  check: hasStatus(201),
}));

test('writeHead with flat array headers (duplicates kept)', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(200, ['X-A', '1', 'X-B', '2', 'X-A', '3', 'Content-Length', '2']);
    res.end('ok');
  },
  request: GET,
  until: 1,
}));

test('writeHead with nested [name, value] array headers', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(200, [['X-A', '1'], ['x-b', '2'], ['X-A', '3']]);
    res.end('ok');
  },
  request: GET,
  until: 1,
}));

test('setHeader then writeHead merges both header sources', (t) => compare(t, {
  handler: (req, res) => {
    res.setHeader('X-From-SetHeader', 'yes');
    res.setHeader('X-Overridden', 'old');
    res.writeHead(202, { 'X-Overridden': 'new', 'X-From-WriteHead': 'yes' });
    res.end('accepted');
  },
  request: GET,
  until: 1,
}));

test('multiple Set-Cookie via setHeader array', (t) => compare(t, {
  handler: (req, res) => {
    res.setHeader('Set-Cookie', ['a=1; Path=/', 'b=2; HttpOnly', 'c=3; Secure']);
    res.end('cookies');
  },
  request: GET,
  until: 1,
  check: (s) => assert.equal(s.wire.split('Set-Cookie:').length - 1, 3),
}));

test('multiple Set-Cookie via appendHeader and writeHead array', (t) => compare(t, {
  handler: (req, res) => {
    res.appendHeader('Set-Cookie', 'a=1');
    res.appendHeader('Set-Cookie', ['b=2', 'c=3']);
    res.writeHead(200, ['Set-Cookie', 'd=4']);
    res.end();
  },
  request: GET,
  until: 1,
}));

test('chunked response from several writes', (t) => compare(t, {
  handler: chunkedHandler,
  request: GET,
  until: 1,
  check: (s) => assert.match(s.wire, /Transfer-Encoding: chunked/),
}));

test('HEAD with a chunked-style handler sends no body', (t) => compare(t, {
  handler: chunkedHandler,
  request: HEAD,
  methods: ['HEAD'],
  until: 1,
}));

test('flushHeaders then write sends the head early, body chunked', (t) => compare(t, {
  handler: (req, res) => {
    res.setHeader('X-Early', '1');
    res.flushHeaders();
    setTimeout(() => {
      res.write('late ');
      res.end('body');
    }, 10);
  },
  request: GET,
  until: 1,
}));

test('204 No Content ignores the body passed to end()', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(204, { 'X-Reason': 'nothing' });
    res.end('this must not be sent');
  },
  request: GET,
  until: 1,
  check: (s) => assert.doesNotMatch(s.wire, /must not be sent/),
}));

test('304 Not Modified with ETag', (t) => compare(t, {
  handler: (req, res) => {
    res.statusCode = 304;
    res.setHeader('ETag', '"abc"');
    res.setHeader('Cache-Control', 'max-age=60');
    res.end();
  },
  request: raw('GET / HTTP/1.1', 'Host: localhost', 'If-None-Match: "abc"', '', ''),
  until: 1,
  check: hasStatus(304),
}));

test('custom status message via writeHead(status, reason, headers)', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(200, 'Everything Is Fine', { 'Content-Length': 2 });
    res.end('ok');
  },
  request: GET,
  until: 1,
  check: (s) => assert.match(s.wire, /^HTTP\/1\.1 200 Everything Is Fine\r\n/),
}));

test('custom status message via res.statusMessage', (t) => compare(t, {
  handler: (req, res) => {
    res.statusCode = 418;
    res.statusMessage = 'Short And Stout';
    res.end('teapot');
  },
  request: GET,
  until: 1,
}));

test('unknown status code gets reason "unknown"', (t) => compare(t, {
  handler: (req, res) => {
    res.writeHead(599);
    res.end('x');
  },
  request: GET,
  until: 1,
}));

test('sendDate = false omits the Date header', (t) => compare(t, {
  handler: (req, res) => {
    res.sendDate = false;
    res.end('no date');
  },
  request: GET,
  until: 1,
  check: (s) => assert.doesNotMatch(s.wire, /Date:/),
}));

test('request line and headers are parsed the same (echo)', (t) => compare(t, {
  handler: echoHandler,
  request: raw(
    'GET /path/to%20thing?q=1&q=2#frag HTTP/1.1',
    'Host: example.com:8080',
    'X-Dup: one',
    'x-dup: two',
    'Cookie: a=1',
    'Cookie: b=2',
    'Set-Cookie: s=1',
    'Set-Cookie: s=2',
    'Content-Type: text/plain',
    'User-Agent: first',
    'User-Agent: second',
    'X-Empty:',
    'X-Spaces:    padded value   ',
    '', ''),
  until: 1,
}));

test('absolute-form request target and OPTIONS *', (t) => compare(t, {
  handler: echoHandler,
  request: [
    raw('GET http://example.com/abs?x=1 HTTP/1.1', 'Host: example.com', '', ''),
    raw('OPTIONS * HTTP/1.1', 'Host: example.com', '', ''),
  ],
  until: 2,
}));

test('HTTP/1.1 request without Host gets 400', (t) => compare(t, {
  handler: helloHandler,
  request: raw('GET / HTTP/1.1', 'Accept: */*', '', ''),
  check: hasStatus(400),
}));
