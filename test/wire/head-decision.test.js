'use strict';

// writeHead's head decision is made on a copy of the response's fields and applied at the end
// (lib/http/response-head.js); when node's writeHead throws half-way, the fields it had set
// before the throw stay set, and what the app does next (another head, the connection's
// fate) follows them: the copy is applied unfinished on a throw.

const { test } = require('node:test');
const { compare, raw } = require('./helpers');

const GET = raw('GET / HTTP/1.1', 'Host: localhost', '', '');

test('a writeHead that throws on a later header keeps what node set before the throw', (t) => compare(t, {
  handler: (req, res) => {
    let code;
    try {
      res.writeHead(202, { Connection: 'close', 'Content-Length': 3, 'X-Bad': 'a\nb' });
    } catch (err) {
      code = err.code;
    }
    // node's writeHead set the status, its default message, _last and the length before
    // the bad value threw: the next head and the connection follow them.
    const seen = [code, res.statusCode, res.statusMessage, res._last, res._contentLength,
      res._removedConnection, res._removedContLen, res.shouldKeepAlive, res.headersSent];
    res.statusCode = 200;
    res.setHeader('X-Seen', JSON.stringify(seen));
    res.end('abc');
  },
  request: GET,
  until: 1,
}));

test('a writeHead that throws on the trailer check keeps node\'s framing decisions', (t) => compare(t, {
  handler: (req, res) => {
    let code;
    try {
      res.writeHead(200, { Connection: 'close', Trailer: 'X-T', 'Transfer-Encoding': 'gzip' });
    } catch (err) {
      code = err.code;
    }
    const seen = [code, res.chunkedEncoding, res._last, res.shouldKeepAlive, res.headersSent];
    res.end(JSON.stringify(seen));
  },
  request: GET,
  until: 1,
}));
