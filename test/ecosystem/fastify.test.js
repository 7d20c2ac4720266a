'use strict';
// Fastify on node:http vs fast-http: listen() and inject(), with its hooks.
const assert = require('node:assert/strict');
const { threeWay, request, maskResponse } = require('./helpers/three-way');

const ROUTES = [
  { method: 'GET', url: '/json' },
  { method: 'POST', url: '/echo', payload: { a: [1, 2] } },
  { method: 'GET', url: '/stream' },
  { method: 'GET', url: '/headers' },
  { method: 'GET', url: '/error' },
  { method: 'GET', url: '/hijack' },
  { method: 'GET', url: '/missing' },
];

threeWay('fastify: inject() and listen(), with hooks', {
  fixture: 'fastify.js',
  async exercise(app) {
    const injected = [];
    for (const r of ROUTES) injected.push({ label: `${r.method} ${r.url}`, ...(await app.call('inject', r)) });
    const injectHooks = await app.take();
    const served = [];
    for (const r of ROUTES) {
      const body = r.payload === undefined ? undefined : JSON.stringify(r.payload);
      const headers = body === undefined ? {} : { 'content-type': 'application/json' };
      const res = await request(app.port, { method: r.method, path: r.url, body, headers });
      served.push({ label: `${r.method} ${r.url}`, ...maskResponse(res) });
    }
    return { injected, injectHooks, served };
  },
  check({ client, app, close }) {
    assert.equal(client.injected[0].statusCode, 200);
    assert.equal(client.injected[0].payload, '{"hello":"world"}');
    assert.equal(client.served[4].status, 418);
    assert.equal(client.served[5].body, 'raw');
    assert.deepEqual(client.injectHooks.slice(0, 4), [
      ['onRequest', 'GET', '/json', 200], ['preHandler', 'GET', '/json', 200],
      ['onSend', 'GET', '/json', 200], ['onResponse', 'GET', '/json', 200],
    ]);
    assert.deepEqual(app.slice(0, 4), client.injectHooks.slice(0, 4));
    assert.deepEqual(close, { closed: true, listening: false });
  },
});
