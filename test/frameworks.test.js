'use strict';

// Express 4 and Koa 2 apps must behave on fast-http exactly as on node:http.
// Each app (test/fixtures/*-app.js) is exercised in two ways:
//  - "register": a child process preloads lib/register.js and starts the app
//    the way unmodified apps do (require('http').createServer(app) for
//    Express, app.listen() for Koa); the child reports whether the resulting
//    server is a fast-http Server, so a register hook that silently falls
//    back to node:http fails the test;
//  - "in-process": require('fast-http').createServer(app) in this process.
// The same assertions run in both modes. Requests use node's own http client
// (this process never loads the register hook, so the client is stock node).

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert');
const crypto = require('node:crypto');
const http = require('node:http');
const path = require('node:path');

const fastHttp = require('fast-http-native');
const {
  startWithRegister, FIXTURES, START_TIMEOUT_MS, STOP_TIMEOUT_MS,
} = require('./helpers/child-app');

// Bounds only, never expectations: generous enough for a loaded 2-core box.
const REQUEST_TIMEOUT_MS = 20_000;
const TEST_TIMEOUT_MS = 60_000;

// ---------------------------------------------------------------------------
// Servers

function startInProcess(fixture) {
  const { createApp } = require(path.join(FIXTURES, fixture));
  const app = createApp();
  // Express apps are request listeners themselves; Koa apps provide one.
  const listener = typeof app.callback === 'function' ? app.callback() : app;
  const server = fastHttp.createServer(listener);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve({
        port: server.address().port,
        isFastHttp: server instanceof fastHttp.Server,
        close: () => closeServer(server),
      });
    });
  });
}

function closeServer(server) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('server.close() did not call back')),
      STOP_TIMEOUT_MS,
    );
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    // Keep-alive sockets from earlier requests would otherwise hold close().
    server.closeAllConnections();
  });
}

const MODES = [
  { name: 'register (node -r fast-http/register)', start: startWithRegister },
  { name: "in-process (require('fast-http').createServer)", start: startInProcess },
];

// ---------------------------------------------------------------------------
// Client

// One request over a fresh connection unless an agent is given. `body` may be
// a string/Buffer (sent with Content-Length) or an array of chunks (sent
// without one, i.e. chunked). Resolves with status, headers and body text.
function request(port, { method = 'GET', path: urlPath = '/', headers = {}, body, agent = false } = {}) {
  return new Promise((resolve, reject) => {
    const chunked = Array.isArray(body);
    const reqHeaders = { ...headers };
    if (body !== undefined && !chunked) reqHeaders['content-length'] = Buffer.byteLength(body);
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers: reqHeaders, agent });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => {
      req.destroy(new Error(`${method} ${urlPath}: no response within ${REQUEST_TIMEOUT_MS} ms`));
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        resolve({
          status: res.statusCode,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          reusedSocket: req.reusedSocket,
        });
      });
    });
    if (chunked) {
      for (const chunk of body) req.write(chunk);
      req.end();
    } else {
      req.end(body);
    }
  });
}

function assertJsonResponse(res, expectedStatus) {
  assert.strictEqual(res.status, expectedStatus, res.body);
  assert.strictEqual(res.headers['content-type'], 'application/json; charset=utf-8');
  assert.strictEqual(res.headers['content-length'], String(Buffer.byteLength(res.body)));
  return JSON.parse(res.body);
}

/**
 * The same suite in each mode: `body(srv)` declares the tests; `srv.port` and friends are
 * filled in by `before`, once the app listens.
 */
function frameworkSuite(title, fixture, body) {
  for (const mode of MODES) {
    describe(`${title} via ${mode.name}`, { timeout: 4 * TEST_TIMEOUT_MS }, () => {
      const srv = {};
      before(async () => {
        Object.assign(srv, await mode.start(fixture));
      }, { timeout: START_TIMEOUT_MS + STOP_TIMEOUT_MS });
      after(async () => {
        if (srv.close) await srv.close();
      }, { timeout: 2 * STOP_TIMEOUT_MS });

      it('is served by a fast-http Server', () => {
        assert.strictEqual(srv.isFastHttp, true);
      });

      body(srv);
    });
  }
}

// ---------------------------------------------------------------------------
// Express

frameworkSuite('Express 4', 'express-app.js', (srv) => {
  it('res.send(): text/html with ETag and Content-Length', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port);
    assert.strictEqual(res.status, 200);
    assert.strictEqual(res.body, 'Hello from Express');
    assert.strictEqual(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.strictEqual(res.headers['content-length'], '18');
    // Express's weak ETag: W/"<length in hex>-<hash>".
    assert.match(res.headers.etag, /^W\/"12-[^"]+"$/);
    assert.strictEqual(res.headers['x-powered-by'], 'Express');
    assert.strictEqual(res.headers['transfer-encoding'], undefined);
  });

  it('conditional GET answers 304 from the ETag (req.fresh)', { timeout: TEST_TIMEOUT_MS }, async () => {
    const first = await request(srv.port);
    const res = await request(srv.port, { headers: { 'if-none-match': first.headers.etag } });
    assert.strictEqual(res.status, 304);
    assert.strictEqual(res.body, '');
    assert.strictEqual(res.headers.etag, first.headers.etag);
  });

  it('HEAD sends the headers of GET without a body', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port, { method: 'HEAD' });
    assert.strictEqual(res.status, 200);
    assert.strictEqual(res.body, '');
    assert.strictEqual(res.headers['content-length'], '18');
    assert.strictEqual(res.headers['content-type'], 'text/html; charset=utf-8');
  });

  it('res.json() with req.query and req.get("host")', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port, { path: '/json?name=ann&tag=a&tag=b' });
    assert.deepStrictEqual(assertJsonResponse(res, 200), {
      hello: 'ann',
      tags: ['a', 'b'],
      host: `127.0.0.1:${srv.port}`,
    });
    assert.match(res.headers.etag, /^W\/"/);
  });

  it('express.json() parses a POST body; res.status(201)', { timeout: TEST_TIMEOUT_MS }, async () => {
    const payload = { n: 1, s: 'héllo wörld', list: [1, 2, 3] };
    const res = await request(srv.port, {
      method: 'POST',
      path: '/echo-json',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    assert.deepStrictEqual(assertJsonResponse(res, 201), {
      received: payload,
      contentType: 'application/json',
    });
  });

  it('express.json() parses a chunked POST body', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port, {
      method: 'POST',
      path: '/echo-json',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: ['{"a":', '[1,', '2]}'],
    });
    assert.deepStrictEqual(assertJsonResponse(res, 201), {
      received: { a: [1, 2] },
      contentType: 'application/json; charset=utf-8',
    });
  });

  it('route params and res.set()', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port, { path: '/users/42' });
    assert.strictEqual(res.status, 200);
    assert.strictEqual(res.body, 'user 42');
    assert.strictEqual(res.headers['x-user-id'], '42');
    assert.strictEqual(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.strictEqual(res.headers['content-length'], '7');
  });

  it('unknown routes get the default 404', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port, { path: '/nope' });
    assert.strictEqual(res.status, 404);
    assert.strictEqual(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.strictEqual(res.headers['x-content-type-options'], 'nosniff');
    assert.strictEqual(res.headers['content-length'], String(Buffer.byteLength(res.body)));
    assert.match(res.body, /Cannot GET \/nope/);
  });

  it('serves consecutive requests on one keep-alive connection', { timeout: TEST_TIMEOUT_MS }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const results = [];
      for (const urlPath of ['/', '/users/1', '/json']) {
        results.push(await request(srv.port, { path: urlPath, agent }));
      }
      assert.deepStrictEqual(results.map((r) => r.status), [200, 200, 200]);
      assert.deepStrictEqual(results.map((r) => r.reusedSocket), [false, true, true]);
      assert.strictEqual(results[1].body, 'user 1');
    } finally {
      agent.destroy();
    }
  });
});

// ---------------------------------------------------------------------------
// Koa

frameworkSuite('Koa 2', 'koa-app.js', (srv) => {
  it('string body: text/plain with Content-Length', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port);
    assert.strictEqual(res.status, 200);
    assert.strictEqual(res.body, 'Hello from Koa');
    assert.strictEqual(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.strictEqual(res.headers['content-length'], '14');
    assert.strictEqual(res.headers['x-middleware'], 'koa');
  });

  it('object body: JSON with query and host', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port, { path: '/json?name=bob' });
    assert.deepStrictEqual(assertJsonResponse(res, 200), {
      hello: 'bob',
      method: 'GET',
      host: `127.0.0.1:${srv.port}`,
    });
  });

  it('reads a Content-Length request body from ctx.req', { timeout: TEST_TIMEOUT_MS }, async () => {
    const body = 'hello, koa';
    const res = await request(srv.port, { method: 'POST', path: '/echo', body });
    assert.deepStrictEqual(assertJsonResponse(res, 200), {
      length: body.length,
      sha256: crypto.createHash('sha256').update(body).digest('hex'),
      head: body,
      chunked: false,
    });
  });

  it('reads a large chunked request body from ctx.req', { timeout: TEST_TIMEOUT_MS }, async () => {
    // 1 MiB in 64 KiB chunks: many reads, exercises request-side flow control.
    const chunks = [];
    for (let i = 0; i < 16; i++) chunks.push(Buffer.alloc(64 * 1024, String.fromCharCode(97 + i)));
    const all = Buffer.concat(chunks);
    const res = await request(srv.port, { method: 'POST', path: '/echo', body: chunks });
    assert.deepStrictEqual(assertJsonResponse(res, 200), {
      length: all.length,
      sha256: crypto.createHash('sha256').update(all).digest('hex'),
      head: 'a'.repeat(32),
      chunked: true,
    });
  });

  it('stream body is sent chunked', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port, { path: '/stream' });
    assert.strictEqual(res.status, 200);
    assert.strictEqual(res.body, 'a\nb\nc\n');
    assert.strictEqual(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.strictEqual(res.headers['transfer-encoding'], 'chunked');
    assert.strictEqual(res.headers['content-length'], undefined);
  });

  it('a thrown error becomes 500 Internal Server Error', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port, { path: '/boom' });
    assert.strictEqual(res.status, 500);
    assert.strictEqual(res.body, 'Internal Server Error');
    assert.strictEqual(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.strictEqual(res.headers['content-length'], '21');
  });

  it('ctx.throw(418) exposes its message', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port, { path: '/teapot' });
    assert.strictEqual(res.status, 418);
    assert.strictEqual(res.body, 'short and stout');
  });

  it('unknown routes get 404 Not Found', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await request(srv.port, { path: '/nope' });
    assert.strictEqual(res.status, 404);
    assert.strictEqual(res.body, 'Not Found');
    assert.strictEqual(res.headers['content-type'], 'text/plain; charset=utf-8');
  });
});
