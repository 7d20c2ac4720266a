'use strict';
// What observability tools see on node:http vs fast-http: OpenTelemetry's http
// instrumentation, diagnostics_channel messages, AsyncLocalStorage context per request.
const assert = require('node:assert/strict');
const http = require('node:http');
const { threeWay, request, maskResponse } = require('./helpers/three-way');

const TRACE = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };

threeWay('OpenTelemetry http instrumentation: server spans', {
  fixture: 'otel.js',
  async exercise(app) {
    const out = [];
    const cases = [
      { label: 'GET /ok', path: '/ok?x=1' },
      { label: 'traceparent', path: '/ok', headers: { traceparent: `00-${TRACE.traceId}-${TRACE.spanId}-01` }, sent: TRACE },
      { label: 'POST /post', method: 'POST', path: '/post', body: 'x'.repeat(100) },
      { label: 'GET /stream', path: '/stream' },
      { label: 'GET /missing', path: '/missing' },
    ];
    for (const c of cases) {
      const res = maskResponse(await request(app.port, c));
      out.push({ label: c.label, status: res.status, spans: await app.call('spans', c.sent) });
    }
    return out;
  },
  check({ client }) {
    for (const c of client) {
      assert.equal(c.spans.length, 1, c.label);
      assert.equal(c.spans[0].kind, 'SERVER', c.label);
      assert.equal(c.spans[0].ended, true, c.label);
    }
    assert.equal(client[1].spans[0].traceIdFromRequest, true);
    assert.equal(client[2].spans[0].status.code, 2);
  },
});

threeWay('diagnostics_channel: http.server.* and net.server.socket messages', {
  fixture: 'diagnostics.js',
  async exercise(app) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const out = [];
    try {
      out.push(maskResponse(await request(app.port, { agent })));
      out.push(maskResponse(await request(app.port, { agent })));
    } finally {
      agent.destroy();
    }
    out.push(maskResponse(await request(app.port, {})));
    return out;
  },
  check({ app }) {
    const channels = new Set(app.map((e) => e[0]));
    assert.ok(channels.has('http.server.request.start'));
    assert.ok(channels.has('http.server.response.finish'));
    assert.ok(channels.has('net.server.socket'));
  },
});

threeWay('AsyncLocalStorage: run() and enterWith() per request and per connection', {
  fixture: 'async-context.js',
  async exercise(app) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const out = [];
    const step = async (label, opts) => out.push({ label, ...maskResponse(await request(app.port, opts)) });
    try {
      await step('A: enterWith', { path: '/enter/a1', agent, method: 'POST', body: 'abc' });
      await step('A: the next request on the connection', { path: '/check/a2', agent });
    } finally {
      agent.destroy();
    }
    await step('B: another connection', { path: '/check/b1' });
    await step('C: run() with a body', { path: '/run/c1', method: 'POST', body: ['x'.repeat(1000), 'y'.repeat(1000)] });
    await step('D: after run()', { path: '/check/d1', method: 'POST', body: 'z' });
    await step('E: enterWith with a body', { path: '/enter/e1', method: 'POST', body: ['1', '2'] });
    await step('F: after enterWith', { path: '/check/f1' });
    return out;
  },
  check({ app }) {
    const seen = (url, where) => app.find((e) => e[0] === url && e[1] === where)?.[2];
    assert.equal(seen('/check/b1', 'request'), null);
    assert.equal(seen('/check/f1', 'request'), null);
    assert.deepEqual(seen('/run/c1', 'request'), null);
  },
});
