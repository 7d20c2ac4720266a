'use strict';
// Hostile and broken clients against the TLS port: plain HTTP, garbage, truncated
// ClientHellos, handshake slowloris. The server reports them as node's https does
// ('tlsClientError', then 'clientError'), frees the connection, does not crash, and goes on
// serving.
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { raw } = require('../wire/helpers');
const {
  captureClientHello, onBoth, rawExchange, serverOptions, startServer, summarize, tlsExchange,
  waitForEvent,
} = require('./helpers');

const T = { timeout: 90000 };
const GET = raw('GET / HTTP/1.1', 'Host: localhost', '', '');

/** Polls the server's connection count down to 0 (bounded); returns the last count seen. */
async function connectionsDrained(server, timeout = 10000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const n = await new Promise((resolve) => server.getConnections((err, c) => resolve(err ? err.code : c)));
    if (n === 0 || Date.now() > deadline) return n;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Runs `attack(port)` against a server of each kind, waits for `clients` tlsClientError
 * events, then checks the connections are freed and a normal request is still served.
 */
async function compareAttack(t, { serverOptions: extra = {}, attack, clients = 1, countEvents, check }) {
  const runs = await onBoth(async (impl) => {
    const srv = await startServer(impl, serverOptions(extra), (req, res) => res.end('still here'));
    try {
      const seen = await attack(srv.port);
      await waitForEvent(srv.events, () =>
        srv.events.filter((e) => e.event === 'tlsClientError').length >= clients);
      let events = srv.events.splice(0);
      // Many connections at once interleave their events in an order no server controls.
      if (countEvents) events = tally(events);
      const left = await connectionsDrained(srv.server);
      const after = await tlsExchange(srv.port, GET, { until: 1 });
      return { seen, events, left, after: summarize(after) };
    } finally {
      await srv.close();
    }
  });
  const a = runs['node:https'];
  if (process.env.HTTPS_JUDGE_DEBUG) t.diagnostic(JSON.stringify(a));
  assert.equal(a.left, 0, 'node:https kept the connection');
  assert.match(a.after.wire, /still here$/, 'node:https stopped serving');
  if (check) check(a);
  assert.deepStrictEqual(runs['fast-http'], a, 'differs from node:https');
}

function tally(events) {
  const out = {};
  for (const e of events) {
    const k = e.code ? `${e.event} ${e.code}` : e.event;
    out[k] = (out[k] || 0) + 1;
  }
  return out;
}

/** What a raw client saw: whether the server sent a TLS alert record, and how it ended. */
function rawSeen(r) {
  return { alert: r.data.length > 0 && r.data[0] === 0x15, how: r.how };
}

const codes = (a) => (Array.isArray(a.events) ? a.events : []).filter((e) => e.event === 'tlsClientError').map((e) => e.code);

test('a plain HTTP request on the TLS port', T, async (t) => {
  await compareAttack(t, {
    attack: async (port) => rawSeen(await rawExchange(port, GET)),
    check: (a) => {
      assert.deepEqual(a.events.map((e) => e.event), ['connection', 'tlsClientError', 'clientError']);
      assert.equal(typeof codes(a)[0], 'string');
    },
  });
});

test('garbage that is not a TLS record', T, async (t) => {
  await compareAttack(t, {
    attack: async (port) => rawSeen(await rawExchange(port, Buffer.from('\x00\x01\x02 not TLS at all \xff\xfe'.repeat(4), 'latin1'))),
    check: (a) => assert.equal(typeof codes(a)[0], 'string'),
  });
});

test('a handshake record with a garbage body', T, async (t) => {
  const record = Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0x20]), Buffer.alloc(32, 0xee)]);
  await compareAttack(t, {
    attack: async (port) => rawSeen(await rawExchange(port, record)),
    check: (a) => assert.equal(typeof codes(a)[0], 'string'),
  });
});

test('a truncated ClientHello, then FIN', T, async (t) => {
  const hello = await captureClientHello();
  assert.ok(hello.length > 60, 'captured no ClientHello');
  await compareAttack(t, {
    attack: async (port) => rawSeen(await rawExchange(port, hello.subarray(0, 40))),
    check: (a) => assert.deepEqual(codes(a), ['ECONNRESET']),
  });
});

test('FIN before any byte', T, async (t) => {
  await compareAttack(t, {
    attack: async (port) => rawSeen(await rawExchange(port, null)),
    check: (a) => assert.deepEqual(codes(a), ['ECONNRESET']),
  });
});

test('handshake slowloris: half a ClientHello, then silence, against handshakeTimeout', T, async (t) => {
  const hello = await captureClientHello();
  await compareAttack(t, {
    serverOptions: { handshakeTimeout: 500 },
    // No FIN: only the server's handshake timer can end this connection.
    attack: async (port) => rawSeen(await rawExchange(port, hello.subarray(0, 40), { end: false })),
    check: (a) => assert.deepEqual(codes(a), ['ERR_TLS_HANDSHAKE_TIMEOUT']),
  });
});

test('handshake slowloris: connect and send nothing, against handshakeTimeout', T, async (t) => {
  await compareAttack(t, {
    serverOptions: { handshakeTimeout: 500 },
    attack: async (port) => rawSeen(await rawExchange(port, null, { end: false })),
    check: (a) => assert.deepEqual(codes(a), ['ERR_TLS_HANDSHAKE_TIMEOUT']),
  });
});

test('a flood of 40 garbage connections at once: all reported, all freed', T, async (t) => {
  const n = 40;
  await compareAttack(t, {
    clients: n,
    countEvents: true,
    attack: async (port) => {
      const results = await Promise.all(Array.from({ length: n }, () =>
        rawExchange(port, Buffer.from('GET / HTTP/1.1\r\n\r\n'))));
      return { served: results.filter((r) => r.data.includes('HTTP/1.1')).length };
    },
    check: (a) => {
      assert.equal(a.events.connection, n);
      assert.equal(a.events['tlsClientError ERR_SSL_HTTP_REQUEST'], n);
    },
  });
});
