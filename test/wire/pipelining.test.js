'use strict';

// Pipelined requests: responses must be written in request order even when
// an earlier handler finishes later than the ones after it.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { compare, echoHandler, raw } = require('./helpers');

function pipelined(n, extra = []) {
  let s = '';
  for (let i = 0; i < n; i++) {
    s += raw(`GET /${i} HTTP/1.1`, 'Host: localhost', ...(extra[i] || []), '', '');
  }
  return s;
}

// The first request is answered last in time; node queues the later
// responses behind it. Order is asserted on node's side too, so the scenario
// can't pass vacuously if both sides agreed on something else.
function slowFirstHandler(req, res, observer) {
  observer.requests.push(req.url);
  const reply = () => {
    res.setHeader('Content-Type', 'text/plain');
    res.end(`response for ${req.url}\n`);
  };
  if (req.url === '/0') setTimeout(reply, 50);
  else reply();
}

function assertInOrder(count) {
  return (s) => {
    const urls = [...s.wire.matchAll(/response for (\/\d+)/g)].map((m) => m[1]);
    assert.deepStrictEqual(urls, Array.from({ length: count }, (_, i) => `/${i}`));
  };
}

test('10 pipelined requests in one write, slow first response, in order', (t) => compare(t, {
  handler: slowFirstHandler,
  request: pipelined(10),
  until: 10,
  check: assertInOrder(10),
}));

test('10 pipelined requests written in 7-byte pieces', (t) => {
  const all = pipelined(10);
  const steps = [];
  for (let i = 0; i < all.length; i += 7) {
    steps.push(all.slice(i, i + 7));
    if (i % 70 === 0) steps.push({ delay: 2 });
  }
  return compare(t, {
    handler: slowFirstHandler,
    request: steps,
    until: 10,
    check: assertInOrder(10),
  });
});

test('pipelined GET, HEAD and POST with bodies in one write', (t) => compare(t, {
  handler: echoHandler,
  request:
    raw('GET /a HTTP/1.1', 'Host: localhost', '', '') +
    raw('HEAD /b HTTP/1.1', 'Host: localhost', '', '') +
    raw('POST /c HTTP/1.1', 'Host: localhost', 'Content-Length: 5', '', 'abcde') +
    raw('POST /d HTTP/1.1', 'Host: localhost', 'Transfer-Encoding: chunked', '',
        '3', 'xyz', '0', '', '') +
    raw('DELETE /e HTTP/1.1', 'Host: localhost', '', ''),
  methods: ['GET', 'HEAD', 'POST', 'POST', 'DELETE'],
  until: 5,
  check: (s, obs) => assert.deepStrictEqual(
    obs.requests.map((r) => r.method), ['GET', 'HEAD', 'POST', 'POST', 'DELETE']),
}));

test('pipelined requests where the last one asks for Connection: close', (t) => compare(t, {
  handler: slowFirstHandler,
  request: pipelined(4, { 3: ['Connection: close'] }),
  check: assertInOrder(4),
}));

// llhttp refuses bytes after a Connection: close request (HPE_CLOSED_CONNECTION).
// With the first response still pending nothing has been written yet, so
// node answers 400 and drops the pending responses.
test('bytes after a Connection: close request, first response pending', (t) => compare(t, {
  handler: slowFirstHandler,
  request: pipelined(4, { 1: ['Connection: close'] }),
  check: (s, obs) => {
    assert.match(s.wire, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.equal(obs.events[0].code, 'HPE_CLOSED_CONNECTION');
  },
}));

// Same, but the handler answers synchronously, so the first response is
// already on its way when the parse error is raised.
test('bytes after a Connection: close request, responses immediate', (t) => compare(t, {
  handler: (req, res) => res.end(`response for ${req.url}\n`),
  request: pipelined(4, { 1: ['Connection: close'] }),
}));

// A response streamed over time while a later one, at least the socket's high-water mark
// long, ends and waits: the later one's bytes must not count as backpressure on the
// earlier one (it could never drain), or the connection hangs.
for (const size of [16 * 1024, 70000, 1024 * 1024]) {
  test(`a streamed response ahead of a waiting ${size}-byte one`, (t) => compare(t, {
    handler: (req, res) => {
      if (req.url === '/0') {
        res.write('a');
        setTimeout(() => res.end('b'), 50);
      } else {
        res.end(Buffer.alloc(size, 120));
      }
    },
    request: pipelined(2),
    until: 2,
  }));
}

// 40 pipelined requests in one write: more responses than one batch call hands over (16),
// ended in one batch through each of the addon's response paths (implicit head, writeHead,
// a head node serialized, a large Buffer body sent from JS memory, HEAD, trailers), in
// request order and byte for byte as node:http (issue #34 item 1).
test('40 pipelined requests ended in one batch, every response path', (t) => compare(t, {
  handler: (req, res) => {
    const i = Number(req.url.slice(1));
    switch (i % 6) {
      case 0: res.end(`plain ${i}\n`); break;
      case 1:
        res.writeHead(201, 'Made', { 'Content-Type': 'text/plain', 'X-I': String(i) });
        res.end(Buffer.from(`head ${i}\n`));
        break;
      case 2:
        res.setHeader('X-Flushed', 'yes');
        res.flushHeaders();
        res.end(`flushed ${i}\n`);
        break;
      case 3: res.end(Buffer.alloc(20000 + i, 97 + (i % 26))); break;
      case 4:
        res.writeHead(200, { 'Transfer-Encoding': 'chunked', Trailer: 'X-T' });
        res.addTrailers({ 'X-T': String(i) });
        res.end(`trailed ${i}\n`);
        break;
      default: res.statusCode = 204; res.end(); break;
    }
  },
  request: pipelined(40),
  until: 40,
}));
