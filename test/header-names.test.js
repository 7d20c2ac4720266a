'use strict';
// setHeader(), getHeader() and hasHeader() remember each name's lower case
// (lib/http/response-head.js lowerName): what they answer, throw and send must stay node's,
// past the remembered names' bound, and a getHeader() an app puts on node's prototype runs.
const { test } = require('node:test');
const assert = require('node:assert');
const { ServerResponse } = require('node:http');
const { both } = require('./helpers/both');

function calls(res, log) {
  const attempt = (fn) => {
    try {
      log.push(JSON.stringify(fn()) ?? 'undefined');
    } catch (err) {
      log.push(`${err.code}: ${err.message}`);
    }
  };
  attempt(() => res.getHeader('X-Missing'));
  attempt(() => res.hasHeader('X-Missing'));
  res.setHeader('X-Powered-By', 'a');
  res.setHeader('x-powered-by', 'b');
  res.setHeader('Content-Type', 'text/plain');
  attempt(() => [res.getHeader('X-POWERED-BY'), res.getHeader('content-type')]);
  attempt(() => [res.hasHeader('CONTENT-TYPE'), res.hasHeader('Content-Length')]);
  // More names than the remembered ones (512).
  for (let i = 0; i < 600; i++) res.setHeader(`X-Name-${i}`, String(i));
  attempt(() => [res.getHeader('x-NAME-599'), res.hasHeader('X-Name-0'), res.getHeader('X-Name-600')]);
  for (let i = 0; i < 600; i++) res.removeHeader(`X-Name-${i}`);
  attempt(() => res.getHeader(1));
  attempt(() => res.hasHeader(null));
  attempt(() => res.getHeaderNames());
}

test('getHeader, hasHeader and setHeader answer as node\'s', { timeout: 20000 }, async () => {
  const logs = await both((http, log, done) => {
    const server = http.createServer((req, res) => {
      calls(res, log);
      res.end('ok');
    });
    server.listen(0, '127.0.0.1', () => {
      http.get({ port: server.address().port, host: '127.0.0.1', agent: false }, (res) => {
        log.push(`${res.headers['x-powered-by']} ${res.headers['content-type']}`);
        res.resume();
        res.on('end', () => server.close(done));
      });
    });
  });
  assert.deepStrictEqual(logs['fast-http'], logs['node:http']);
  assert.ok(logs['node:http'].includes('["b","text/plain"]'));
});

test('a getHeader put on node\'s ServerResponse.prototype runs on fast-http\'s responses', { timeout: 20000 }, async () => {
  // On node's ServerResponse.prototype: one on OutgoingMessage's would reach the client too.
  const original = ServerResponse.prototype.getHeader;
  ServerResponse.prototype.getHeader = function patched(name) {
    return `patched:${original.call(this, name)}`;
  };
  try {
    const logs = await both((http, log, done) => {
      const server = http.createServer((req, res) => {
        res.setHeader('X-A', '1');
        log.push(res.getHeader('x-a'));
        res.end();
      });
      server.listen(0, '127.0.0.1', () => {
        http.get({ port: server.address().port, host: '127.0.0.1', agent: false }, (res) => {
          res.resume();
          res.on('end', () => server.close(done));
        });
      });
    });
    assert.deepStrictEqual(logs['fast-http'], logs['node:http']);
    assert.deepStrictEqual(logs['node:http'], ['patched:1']);
  } finally {
    delete ServerResponse.prototype.getHeader;
  }
});
