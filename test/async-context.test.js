'use strict';
// The async context listeners run in, compared with node:http: node runs a connection's
// request handlers and body listeners in its parser's resource (one per connection), so they
// share one executionAsyncId and executionAsyncResource, and what a handler stores there with
// AsyncLocalStorage.enterWith is what the next request on the connection starts with.
// fast-http runs handlers from the tick queue (so an uncaught throw prints node's source
// excerpt: test/stack-trace.test.js), inside the connection's resource.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const ah = require('node:async_hooks');

const IMPLS = { 'node:http': require('node:http'), 'fast-http': require('..') };

/** Two requests on one connection (the first with a body in a later read), then another. */
function observe(http) {
  return new Promise((resolve, reject) => {
    const seen = [];
    const resources = [];
    const index = (r) => {
      if (!resources.includes(r)) resources.push(r);
      return resources.indexOf(r);
    };
    const server = http.createServer((req, res) => {
      const id = ah.executionAsyncId();
      seen.push(`${req.url} handler: resource #${index(ah.executionAsyncResource())}`);
      req.on('data', () => {
        seen.push(`${req.url} data: same id as its handler ${ah.executionAsyncId() === id}, ` +
          `resource #${index(ah.executionAsyncResource())}`);
      });
      req.on('end', () => res.end('ok'));
    });
    const timer = setTimeout(() => reject(new Error(`stuck after ${seen}`)), 20000);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      const c = net.connect(port, '127.0.0.1');
      let answers = 0;
      c.setEncoding('latin1');
      c.on('data', (d) => {
        answers += d.split('HTTP/1.1 200').length - 1;
        if (answers === 2) {
          c.end();
          const other = net.connect(port, '127.0.0.1', () => {
            other.write('GET /3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
          });
          other.resume();
          other.on('close', () => {
            clearTimeout(timer);
            server.close(() => resolve(seen));
          });
        }
      });
      c.write('POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n');
      const poll = setInterval(() => {
        if (seen.length === 0) return;
        clearInterval(poll);
        c.write('abc');
        c.write('GET /2 HTTP/1.1\r\nHost: x\r\n\r\n');
      }, 5);
    });
  });
}

test('handlers and body listeners share their connection\'s async context, as on node:http',
  { timeout: 60_000 }, async () => {
    const logs = {};
    for (const [name, http] of Object.entries(IMPLS)) logs[name] = await observe(http);
    assert.deepEqual(logs['node:http'], [
      '/1 handler: resource #0',
      '/1 data: same id as its handler true, resource #0',
      '/2 handler: resource #0',
      '/3 handler: resource #1',
    ], 'node:http itself');
    assert.deepEqual(logs['fast-http'], logs['node:http']);
  });

test('a handler\'s executionAsyncResource() has node\'s type and socket', { timeout: 30_000 },
  async () => {
    const logs = {};
    for (const [name, http] of Object.entries(IMPLS)) {
      logs[name] = await new Promise((resolve) => {
        const server = http.createServer((req, res) => {
          const r = ah.executionAsyncResource();
          const shape = `${r.constructor.name} [${Object.keys(r)}] ${r.type} ` +
            `socket ${r.socket === req.socket}`;
          res.end('ok', () => server.close(() => resolve(shape)));
        });
        server.listen(0, '127.0.0.1', () => {
          const c = net.connect(server.address().port, '127.0.0.1', () => {
            c.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
          });
          c.resume();
        });
      });
    }
    assert.equal(logs['node:http'], 'HTTPServerAsyncResource [type,socket] HTTPINCOMINGMESSAGE ' +
      'socket true');
    assert.equal(logs['fast-http'], logs['node:http']);
  });
