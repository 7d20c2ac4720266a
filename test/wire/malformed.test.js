'use strict';

// Malformed and borderline requests. Each malformed case runs twice:
//  - with no 'clientError' listener, where node writes its canned
//    400/413/431 response and destroys the socket;
//  - with a listener that records err.code / err.rawPacket and destroys the
//    socket itself, so nothing may be written by the server.
// The clientError code is captured in both modes (helpers.js wraps
// server.emit, which doesn't count as a listener) and must match node's.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { compare, echoHandler, raw } = require('./helpers');

const H = 'Host: localhost';

// Consumes the body before answering, so a parse error in the body aborts
// the request before any response bytes exist and the canned response is
// written; also records whether the request was seen and aborted.
function consumingHandler(req, res, observer) {
  const seen = { method: req.method, url: req.url, aborted: false };
  observer.requests.push(seen);
  req.on('aborted', () => { seen.aborted = true; });
  req.on('error', () => {});
  req.resume();
  req.on('end', () => res.end(`ok ${req.url}\n`));
}

const MALFORMED = [
  {
    name: 'invalid method token',
    request: raw('G@T / HTTP/1.1', H, '', ''),
    code: 'HPE_INVALID_METHOD',
  },
  {
    name: 'unknown method',
    request: raw('FOO / HTTP/1.1', H, '', ''),
    code: 'HPE_INVALID_METHOD',
  },
  {
    name: 'request line without spaces',
    request: raw('GET/HTTP/1.1', H, '', ''),
    code: 'HPE_INVALID_METHOD',
  },
  {
    name: 'space inside the request target',
    request: raw('GET /a b HTTP/1.1', H, '', ''),
    code: 'HPE_INVALID_CONSTANT',
  },
  {
    name: 'NUL byte in URL',
    request: raw('GET /a\0b HTTP/1.1', H, '', ''),
    code: 'HPE_INVALID_URL',
  },
  {
    name: 'garbage HTTP version (HTTP/1.x)',
    request: raw('GET / HTTP/1.x', H, '', ''),
    code: 'HPE_INVALID_VERSION',
  },
  {
    name: 'unsupported HTTP version (HTTP/1.9)',
    request: raw('GET / HTTP/1.9', H, '', ''),
    code: 'HPE_INVALID_VERSION',
  },
  {
    name: 'invalid character in header name',
    request: raw('GET / HTTP/1.1', H, 'Fo(o: x', '', ''),
    code: 'HPE_INVALID_HEADER_TOKEN',
  },
  {
    name: 'header line without colon',
    request: raw('GET / HTTP/1.1', H, 'NoColonHere', '', ''),
    code: 'HPE_INVALID_HEADER_TOKEN',
  },
  {
    name: 'whitespace between header name and colon',
    request: raw('GET / HTTP/1.1', H, 'X-Foo : x', '', ''),
    code: 'HPE_INVALID_HEADER_TOKEN',
  },
  {
    name: 'control character in header value',
    request: raw('GET / HTTP/1.1', H, 'X-Ctl: a\x01b', '', ''),
    code: 'HPE_INVALID_HEADER_TOKEN',
  },
  {
    name: 'obs-fold continuation line',
    request: raw('GET / HTTP/1.1', H, 'X-Folded: a', '  b', '', ''),
    code: 'HPE_INVALID_HEADER_TOKEN',
  },
  {
    name: 'first header line starts with whitespace',
    request: raw('GET / HTTP/1.1', ' Host: localhost', '', ''),
    code: 'HPE_UNEXPECTED_SPACE',
  },
  {
    name: 'bare LF line endings',
    request: 'GET / HTTP/1.1\nHost: localhost\n\n',
    code: 'HPE_INVALID_VERSION',
  },
  {
    name: 'bare LF after a header',
    request: 'GET / HTTP/1.1\r\nHost: localhost\nX: y\r\n\r\n',
    code: 'HPE_CR_EXPECTED',
  },
  {
    name: 'bare CR in header value',
    request: raw('GET / HTTP/1.1', H, 'X: a\rb', '', ''),
    code: 'HPE_LF_EXPECTED',
  },
  {
    name: 'header section over 16 KiB (431)',
    request: raw('GET / HTTP/1.1', H, `X-Big: ${'a'.repeat(17 * 1024)}`, '', ''),
    code: 'HPE_HEADER_OVERFLOW',
  },
  {
    name: 'non-numeric Content-Length',
    request: raw('POST / HTTP/1.1', H, 'Content-Length: 1a', '', '1'),
    code: 'HPE_INVALID_CONTENT_LENGTH',
  },
  {
    name: 'negative Content-Length',
    request: raw('POST / HTTP/1.1', H, 'Content-Length: -1', '', ''),
    code: 'HPE_INVALID_CONTENT_LENGTH',
  },
  {
    name: 'Content-Length overflowing 64 bits',
    request: raw('POST / HTTP/1.1', H, 'Content-Length: 99999999999999999999999', '', ''),
    code: 'HPE_INVALID_CONTENT_LENGTH',
  },
  {
    name: 'duplicate differing Content-Length',
    request: raw('POST / HTTP/1.1', H, 'Content-Length: 3', 'Content-Length: 4', '', 'abcd'),
    code: 'HPE_UNEXPECTED_CONTENT_LENGTH',
  },
  {
    // RFC 9112 lets servers accept this; llhttp in node 20 does not.
    name: 'duplicate identical Content-Length',
    request: raw('POST / HTTP/1.1', H, 'Content-Length: 3', 'Content-Length: 3', '', 'abc'),
    code: 'HPE_UNEXPECTED_CONTENT_LENGTH',
  },
  {
    name: 'both Content-Length and Transfer-Encoding',
    request: raw('POST / HTTP/1.1', H, 'Content-Length: 3', 'Transfer-Encoding: chunked',
                 '', '0', '', ''),
    code: 'HPE_INVALID_TRANSFER_ENCODING',
  },
  {
    name: 'Transfer-Encoding with chunked not last',
    request: raw('POST / HTTP/1.1', H, 'Transfer-Encoding: chunked, gzip', '', ''),
    code: 'HPE_INVALID_TRANSFER_ENCODING',
  },
  {
    name: 'Transfer-Encoding chunked applied twice',
    request: raw('POST / HTTP/1.1', H, 'Transfer-Encoding: chunked',
                 'Transfer-Encoding: chunked', '', '0', '', ''),
    code: 'HPE_INVALID_TRANSFER_ENCODING',
  },
  {
    name: 'request Transfer-Encoding without chunked',
    request: raw('POST / HTTP/1.1', H, 'Transfer-Encoding: gzip', '', 'abc'),
    code: 'HPE_INVALID_TRANSFER_ENCODING',
  },
  {
    name: 'bad chunk size',
    request: raw('POST / HTTP/1.1', H, 'Transfer-Encoding: chunked', '',
                 'zz', 'hello', '0', '', ''),
    code: 'HPE_INVALID_CHUNK_SIZE',
  },
  {
    name: 'chunk data not followed by CRLF',
    request: raw('POST / HTTP/1.1', H, 'Transfer-Encoding: chunked', '',
                 '3', 'abcX', '0', '', ''),
    code: 'HPE_STRICT',
  },
  {
    name: 'chunk extensions over the limit (413)',
    request: raw('POST / HTTP/1.1', H, 'Transfer-Encoding: chunked', '',
                 `1;${'e'.repeat(20000)}`, 'a', '0', '', ''),
    code: 'HPE_CHUNK_EXTENSIONS_OVERFLOW',
  },
];

function checkCode(code, status) {
  return (s, obs) => {
    const errors = obs.events.filter((e) => e.event === 'clientError');
    assert.deepStrictEqual(errors.map((e) => e.code), [code]);
    if (status) assert.match(s.wire, new RegExp(`^HTTP/1\\.1 ${status} `));
  };
}

function defaultStatus(code) {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return 413;
  return 400;
}

for (const c of MALFORMED) {
  test(`malformed: ${c.name} -> default response`, (t) => compare(t, {
    handler: consumingHandler,
    request: c.request,
    check: checkCode(c.code, defaultStatus(c.code)),
  }));
}

for (const c of MALFORMED) {
  test(`malformed: ${c.name} -> clientError listener destroys`, (t) => compare(t, {
    handler: consumingHandler,
    setup: (server, observer) => {
      server.on('clientError', (err, socket) => {
        observer.listener = {
          code: err.code,
          hasRawPacket: Buffer.isBuffer(err.rawPacket),
          isError: err instanceof Error,
        };
        socket.destroy();
      });
    },
    request: c.request,
    check: (s, obs) => {
      checkCode(c.code)(s, obs);
      assert.equal(s.wire, '');
      assert.equal(obs.listener.code, c.code);
    },
  }));
}

// The pattern from node's docs: answer with a custom response and end.
for (const c of [MALFORMED[0], MALFORMED.find((m) => m.code === 'HPE_HEADER_OVERFLOW')]) {
  test(`malformed: ${c.name} -> clientError listener writes its own response`,
       (t) => compare(t, {
         handler: consumingHandler,
         setup: (server) => {
           server.on('clientError', (err, socket) => {
             const body = `bad request: ${err.code}\n`;
             socket.end('HTTP/1.1 400 Bad Request\r\n' +
                        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
                        `Connection: close\r\n\r\n${body}`);
           });
         },
         request: c.request,
         check: (s) => assert.match(s.wire, new RegExp(`bad request: ${c.code}`)),
       }));
}

test('malformed: maxHeaderSize option lowers the 431 threshold', (t) => compare(t, {
  handler: consumingHandler,
  serverOptions: { maxHeaderSize: 1024 },
  request: raw('GET / HTTP/1.1', H, `X-Big: ${'b'.repeat(2048)}`, '', ''),
  check: checkCode('HPE_HEADER_OVERFLOW', 431),
}));

test('malformed: garbage after a valid request, response already sent', (t) => compare(t, {
  // Synchronous answer: the first response is on the wire before the parser
  // reaches the garbage, so node must not append a 400 to it.
  handler: (req, res) => res.end(`ok ${req.url}\n`),
  request: raw('GET /first HTTP/1.1', H, '', '') + raw('GARBAGE', '', ''),
  check: checkCode('HPE_INVALID_METHOD'),
}));

test('malformed: garbage after a valid request, response not started', (t) => compare(t, {
  handler: consumingHandler,
  request: raw('GET /first HTTP/1.1', H, '', '') + raw('GARBAGE', '', ''),
  check: checkCode('HPE_INVALID_METHOD', 400),
}));

test('malformed: garbage arriving later on a kept-alive connection', (t) => compare(t, {
  handler: consumingHandler,
  request: [
    raw('GET /first HTTP/1.1', H, '', ''),
    { waitResponses: 1 },
    raw('NOT HTTP AT ALL', '', ''),
  ],
  check: checkCode('HPE_INVALID_METHOD'),
}));

// Borderline inputs node accepts; fast-http must accept them the same way.
test('accepted: HTTP/0.9-style request line', (t) => compare(t, {
  handler: echoHandler,
  request: 'GET /\r\n\r\n',
  check: (s, obs) => assert.equal(obs.requests.length, 1),
}));

test('accepted: HTTP/2.0 version in an HTTP/1 request line', (t) => compare(t, {
  handler: echoHandler,
  request: raw('GET / HTTP/2.0', H, '', ''),
  check: (s, obs) => assert.equal(obs.requests[0].httpVersion, '2.0'),
}));

test('accepted: empty line before the request line', (t) => compare(t, {
  handler: echoHandler,
  request: `\r\n${raw('GET /after-crlf HTTP/1.1', H, '', '')}`,
  until: 1,
}));
