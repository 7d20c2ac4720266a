'use strict';
// Parts of node:http's contract that libraries rely on, each on its own small app: a body
// that ends while paused, an upgrade request's own stream, a writeHead replaced on the
// instance (on-headers), constructors called in the util.inherits pattern, a socket handed
// over with emit('connection'), and every listen() signature.
const assert = require('node:assert/strict');
const {
  threeWay, request, maskResponse, rawExchange, write, splitResponse, maskHeadLines, freePort, until,
} = require('./helpers/three-way');

/**
 * A POST whose handler pauses the request at once: the body arrives while it is paused
 * (after the app reports 'paused', or `together` with the head, in one write); the client
 * waits until the request holds what it will read before pausing its socket, then the app
 * resumes it.
 */
async function pausedPost(app, body, { together = false } = {}) {
  const head = `POST /paused HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`;
  const r = await rawExchange(app.port, async (socket) => {
    if (together) {
      await write(socket, Buffer.concat([Buffer.from(head), body]));
      await app.waitFor('paused');
    } else {
      await write(socket, head);
      await app.waitFor('paused');
      await write(socket, body);
    }
    const written = body.length;
    await until(async () => {
      const b = await app.call('buffered');
      return b.length >= b.hwm || b.length === written;
    });
    await app.call('release');
  });
  const response = splitResponse(r.bytes);
  return {
    ended: r.ended, head: maskHeadLines(response.head), body: response.body.toString(), app: await app.take(),
  };
}

threeWay("a paused request's body ending while paused: 'end' after resume(), req.complete", {
  fixture: 'paused-body.js',
  async exercise(app) {
    const { hwm } = app.info;
    return {
      // The body fills the request's buffer to its highWaterMark exactly.
      'highWaterMark bytes after the head': await pausedPost(app, Buffer.alloc(hwm, 'p')),
      // Read in two or three reads (fast-http reads 64 KiB at a time) while the request is
      // paused; which size makes the last read push past the highWaterMark depends on it
      // (16 KiB on Node 20, 64 KiB on 22+).
      '70 000 bytes with the head': await pausedPost(app, Buffer.alloc(70_000, 'o'), { together: true }),
      '100 000 bytes with the head': await pausedPost(app, Buffer.alloc(100_000, 'q'), { together: true }),
      '140 000 bytes with the head': await pausedPost(app, Buffer.alloc(140_000, 'r'), { together: true }),
    };
  },
  normalize(result) {
    // The highWaterMark differs between Node versions (16 KiB on 20, 64 KiB on 22+).
    const names = { 16384: 'hwm', 65536: 'hwm' };
    const mask = (v) => {
      if (typeof v === 'number') return names[v] ?? v;
      if (typeof v === 'string') return v.replace(/\b\d{5}\b/g, (d) => names[d] ?? d);
      if (Array.isArray(v)) return v.map(mask);
      if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mask(x)]));
      return v;
    };
    return mask(result);
  },
  check({ client }) {
    for (const [label, r] of Object.entries(client)) {
      assert.equal(r.ended, 'server-close', label);
      assert.deepEqual(r.app.at(-1)[0], 'end', label);
      assert.equal(r.app.at(-1)[1].complete, true, label);
    }
  },
});

threeWay("an upgrade request: req.resume() after 'upgrade', then 'end'", {
  fixture: 'paused-body.js',
  async exercise(app) {
    const r = await rawExchange(app.port, (socket) => write(socket, 'GET /up HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: eco\r\n\r\n'));
    return { ended: r.ended, response: r.bytes.toString() };
  },
  check({ client, app }) {
    assert.match(client.response, /^HTTP\/1.1 101 /);
    assert.deepEqual(app.at(-1), ['upgrade request end', { complete: true }]);
  },
});

threeWay('on-headers: a writeHead replaced on the instance runs for every way of ending', {
  fixture: 'on-headers.js',
  async exercise(app) {
    const out = [];
    for (const prefix of ['', '/manual']) {
      for (const path of ['/end-string', '/end-buffer', '/end-empty', '/status-404', '/write-head', '/write', '/flush-headers']) {
        out.push({ label: prefix + path, ...maskResponse(await request(app.port, { path: prefix + path })) });
      }
    }
    return out;
  },
  check({ client, app }) {
    for (const r of client.slice(0, 7)) assert.ok(r.rawHeaders.includes('X-Hooked'), r.label);
    assert.equal(app.filter((e) => e[0] === 'on-headers').length, 7);
    assert.equal(app.filter((e) => e[0] === 'writeHead').length, 7);
  },
});

threeWay('util.inherits-style IncomingMessage / ServerResponse, and the client response class', {
  fixture: 'inherits.js',
  async exercise(app) {
    return {
      direct: await app.call('direct'),
      served: maskResponse(await request(app.port, { headers: { 'x-test': 'yes' } })),
      clientResponse: await app.call('clientResponse'),
    };
  },
  check({ client, app }) {
    assert.deepEqual(client.direct, { incomingCall: true, responseCall: true });
    assert.equal(client.served.body, 'ok');
    assert.deepEqual(client.clientResponse, { isAppIncomingMessage: true, isModuleIncomingMessage: true });
    assert.deepEqual(app[0], ['request', {
      req: 'request', res: 'response', reqIsIncomingMessage: true, resIsServerResponse: true, headers: 'yes',
    }]);
  },
});

threeWay("server.emit('connection', socket): 'request', and 'upgrade' for an Upgrade request", {
  fixture: 'emit-connection.js',
  async exercise(app) {
    const plain = maskResponse(await request(app.port, { path: '/plain' }));
    const r = await rawExchange(app.port, (socket) => write(socket, 'GET /up HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: eco\r\n\r\n'));
    return { plain, upgrade: { ended: r.ended, response: maskHeadLines(r.bytes.toString().split('\r\n')) } };
  },
  check({ client, app }) {
    assert.equal(client.plain.body, 'plain');
    assert.equal(client.upgrade.response[0], 'HTTP/1.1 101 Switching Protocols');
    assert.deepEqual(app, [['request', 'GET', '/plain', null], ['upgrade', '/up', 0]]);
  },
});

threeWay('listen(): every net.Server#listen signature', {
  fixture: 'listen-signatures.js',
  options: async () => ({ port: await freePort() }),
  exercise: (app) => app.call('run'),
  check({ client }) {
    const byLabel = Object.fromEntries(client.map((r) => [r.label, r]));
    for (const label of ['(null, cb)', '({ port: null }, cb)', '(undefined, cb)', '({ port: undefined }, cb)']) {
      assert.equal(byLabel[label].outcome, 'listening', label);
      assert.equal(byLabel[label].address.port, 'ephemeral', label);
      assert.equal(byLabel[label].callback, true, label);
    }
  },
});
