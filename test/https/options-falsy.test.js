'use strict';
// TLS options node's tls.createSecureContext reads with `if (option)`: a falsy one (false,
// '') is none, and such a server is fast-http's native one, serving as node's does. Options
// node refuses throw node's error, and no server (native or node's) is counted as made.
const assert = require('node:assert/strict');
const { test } = require('node:test');
const nodeHttps = require('node:https');
const { raw } = require('../wire/helpers');
const {
  compareHttps, createError, fastHttps, isFastHttpServer, serverOptions,
} = require('./helpers');
const stats = require('../../lib/internal/stats');

const T = { timeout: 30000 };
const GET = raw('GET /f HTTP/1.1', 'Host: localhost', '', '');

for (const ca of [false, '']) {
  test(`ca: ${JSON.stringify(ca)} is no ca: a native server, served as node's`, T, async (t) => {
    const server = fastHttps().createServer(serverOptions({ ca }));
    assert.ok(isFastHttpServer(server), `ca: ${JSON.stringify(ca)} made node's own https server`);
    await compareHttps(t, {
      serverOptions: { ca },
      handler: (req, res, seen) => {
        seen.push([req.socket.encrypted, req.socket.authorized]);
        res.end('fine');
      },
      request: GET,
      until: 1,
    });
  });
}

test('options node refuses throw its error and count no server', T, () => {
  const expected = createError(nodeHttps, serverOptions({ ca: true }));
  assert.equal(expected?.code, 'ERR_INVALID_ARG_TYPE');
  const before = { ...stats.counters };
  assert.deepStrictEqual(createError(fastHttps(), serverOptions({ ca: true })), expected);
  assert.equal(stats.counters.httpsServersCreated, before.httpsServersCreated);
  assert.equal(stats.counters.httpsFallbackServers, before.httpsFallbackServers);
});
