'use strict';
// The differences from node:http docs/compatibility.md lists as remaining (the README's table
// sums them up), each run on both servers and compared: `todo` while fast-http differs
// (node:test reports them without failing), so each stays visible and turns into a pass the
// day it is fixed.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const tls = require('node:tls');
const ah = require('node:async_hooks');
const nodeHttps = require('node:https');
const { both } = require('./helpers/both');
const fixtures = require('./helpers/tls-fixtures');
const fastHttp = require('..');
const { toGroups } = require('../lib/internal/tls-ciphers');

/** One GET on a fresh connection; `inspect(req, res)` runs in the handler. */
function oneRequest(impl, inspect, done, options = {}) {
  let c;
  const server = impl.createServer(options, (req, res) => {
    inspect(req, res);
    res.end('ok', () => {
      // The client goes first: a client socket left closing is listed in the next test.
      c.on('close', () => server.close(done));
      c.destroy();
      server.closeAllConnections();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const port = server.address().port;
    const send = () => c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    c = options.key ?
      tls.connect({ port, host: '127.0.0.1', ca: fixtures.ca, servername: 'localhost' }, send) :
      net.connect(port, '127.0.0.1', send);
    c.on('error', () => {});
    c.resume();
  });
}

test('the connection\'s HTTPINCOMINGMESSAGE: one init, triggered by the socket\'s TCPWRAP', {
  timeout: 30000,
  todo: 'docs/compatibility.md: its trigger id is 0 (the addon makes its context where no JS resource is current)',
}, async () => {
  const logs = await both((impl, log, done) => {
    const inits = new Map();
    const hook = ah.createHook({
      init(id, type, trigger) {
        inits.set(id, { type, trigger });
      },
    }).enable();
    oneRequest(impl, () => {
      const trigger = inits.get(ah.triggerAsyncId());
      const parsers = [...inits.values()].filter((r) => r.type === 'HTTPINCOMINGMESSAGE');
      log.push(`HTTPINCOMINGMESSAGE inits ${parsers.length}, triggered by ${trigger?.type}`);
      hook.disable();
    }, done);
  });
  assert.deepEqual(logs['node:http'], ['HTTPINCOMINGMESSAGE inits 1, triggered by TCPWRAP']);
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});

test('a request\'s own keys include rawHeaders and rawTrailers before they are read', {
  timeout: 30000,
  todo: 'docs/compatibility.md: lazy header lines are accessors on the prototype until read',
}, async () => {
  const logs = await both((impl, log, done) => {
    oneRequest(impl, (req) => {
      log.push(Object.keys(req).filter((k) => k.startsWith('raw')).join());
    }, done);
  });
  assert.deepEqual(logs['node:http'], ['rawHeaders,rawTrailers']);
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});

test('getActiveResourcesInfo() lists the handles in creation order', {
  timeout: 30000,
  todo: 'docs/compatibility.md: fast-http adds its handles after node\'s own',
}, async () => {
  const logs = await both((impl, log, done) => {
    oneRequest(impl, () => {
      log.push(process.getActiveResourcesInfo().filter((n) => n.startsWith('TCP')).join());
    }, done);
  });
  assert.deepEqual(logs['node:http'], ['TCPServerWrap,TCPSocketWrap,TCPSocketWrap']);
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});

test('an https connection\'s socket has node\'s listeners', {
  timeout: 30000,
  todo: 'docs/compatibility.md: node\'s tls adds listeners fast-http\'s TLS has no use for',
}, async () => {
  const logs = await both((http, log, done) => {
    const impl = http === fastHttp ? fastHttp.https : nodeHttps;
    oneRequest(impl, (req) => {
      log.push(['close', 'error', 'end', 'secure', '_tlsError']
        .map((e) => `${e}:${req.socket.listenerCount(e)}`).join(' '));
    }, done, { key: fixtures.key, cert: fixtures.cert });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});

test('an idle socket has node\'s listeners', {
  timeout: 30000,
  todo: 'docs/compatibility.md: net\'s and node:http\'s \'end\' listeners are one function (a second is ~80 B a connection)',
}, async () => {
  const logs = await both((impl, log, done) => {
    oneRequest(impl, (req, res) => {
      res.on('finish', () => log.push(['data', 'end', 'finish', 'close', 'error', 'timeout', 'drain']
        .map((e) => `${e}:${req.socket.listenerCount(e)}`).join(' ')));
    }, done);
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});

test('a body\'s \'data\' listener runs under node\'s stack frames', {
  timeout: 30000,
  todo: 'docs/compatibility.md: one more frame, IncomingMessage.read in lib/http/incoming.js',
}, async () => {
  const logs = await both((impl, log, done) => {
    const server = impl.createServer((req, res) => {
      req.on('data', () => {
        const frames = new Error('where').stack.split('\n').slice(2)
          .map((l) => l.trim().replace(/ \(.*\)$/, '').replace(/^at /, ''))
          .filter((f) => !f.includes('/'));
        log.push(frames.join(' < '));
      });
      req.on('end', () => res.end('ok', () => {
        server.close(done);
        server.closeAllConnections();
      }));
    });
    server.listen(0, '127.0.0.1', () => {
      const c = net.connect(server.address().port, '127.0.0.1', () => {
        c.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc');
      });
      c.on('error', () => {});
      c.resume();
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});

test('a spy on net.Socket.prototype counts the per-request calls node\'s server makes', {
  timeout: 30000,
  todo: 'docs/compatibility.md: the native path makes no setTimeout / resume / cork / uncork call per request',
}, async () => {
  const proto = net.Socket.prototype;
  const names = ['setTimeout', 'resume', 'cork', 'uncork'];
  const logs = await both((impl, log, done) => {
    const counts = Object.fromEntries(names.map((n) => [n, 0]));
    const originals = names.map((n) => proto[n]);
    names.forEach((n, i) => {
      proto[n] = function spy(...args) {
        counts[n]++;
        return originals[i].apply(this, args);
      };
    });
    const restore = () => names.forEach((n, i) => {
      proto[n] = originals[i];
    });
    const server = impl.createServer((req, res) => res.end('ok'));
    server.listen(0, '127.0.0.1', () => {
      const c = net.connect(server.address().port, '127.0.0.1');
      let answers = 0;
      c.setEncoding('latin1');
      c.on('data', (d) => {
        answers += d.split('HTTP/1.1 200').length - 1;
        if (answers === 3) {
          // The client's own calls are counted on both servers alike.
          log.push(names.map((n) => `${n}:${counts[n]}`).join(' '));
          restore();
          c.destroy();
          server.close(done);
          server.closeAllConnections();
        }
      });
      c.write('GET /1 HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(3));
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});

// What rustls will not do (README, "Differs"): node's default ciphers (OpenSSL's HIGH) and
// groups serve clients that offer only CBC suites, RSA key exchange, P-521 or X448; the native
// server has none of them and refuses such a client in its handshake.
const LEGACY_CLIENTS = [
  ['CBC suites only', { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA256' }],
  ['RSA key exchange only', { maxVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256' }],
  ['P-521 only', { ecdhCurve: 'P-521' }],
  ['X448 only', { ecdhCurve: 'X448' }],
];

/** What a client with `options` sees of a handshake with `impl`'s https server. */
function legacyHandshake(impl, options, log, done, serverOptions = {}) {
  const server = impl.createServer({ key: fixtures.key, cert: fixtures.cert, ...serverOptions },
    (req, res) => res.end());
  server.on('tlsClientError', () => {});
  server.listen(0, '127.0.0.1', () => {
    const c = tls.connect({ port: server.address().port, host: '127.0.0.1', ca: fixtures.ca,
      servername: 'localhost', ...options }, () => {
      log.push(`${c.getProtocol()} ${c.getCipher().name} ${c.getEphemeralKeyInfo().name}`);
      c.destroy();
    });
    c.on('error', (err) => log.push(err.code));
    c.on('close', () => server.close(done));
  });
}

/** What the client sees of a handshake with node's https server, then fast-http's. */
async function handshakeOnBoth(clientOptions, serverOptions) {
  const logs = {};
  for (const [label, impl] of [['node:https', nodeHttps], ['fast-http', fastHttp.https]]) {
    const log = [];
    await new Promise((resolve) => legacyHandshake(impl, clientOptions, log, resolve,
      serverOptions));
    logs[label] = log;
  }
  return logs;
}

for (const [name, options] of LEGACY_CLIENTS) {
  test(`a client offering ${name} is served`, {
    timeout: 30000,
    todo: 'README, Differs: rustls has no CBC suites, RSA key exchange, P-521 or X448',
  }, async () => {
    const logs = await handshakeOnBoth(options);
    assert.match(logs['node:https'][0], /^TLSv1\.[23] /);
    assert.deepEqual(logs['fast-http'], logs['node:https']);
  });
}

// The key exchange group: rustls takes the first of the client's groups it has (asking for
// another key share when the client sent none for it); OpenSSL takes the server's preference
// (honorCipherOrder, node's default) over TLSv1.2, and OpenSSL 3.5's default list prefers its
// first tuple (X25519MLKEM768) even when that takes a HelloRetryRequest. Browsers, curl and
// node's own clients send a share for their first group, which both servers then take.
const GROUP_CASES = [
  ['a TLSv1.2 client preferring P-256 and a server preferring P-384',
    { ecdhCurve: 'P-384:P-256' }, { ecdhCurve: 'P-256:P-384', maxVersion: 'TLSv1.2' }],
  ...(toGroups('X25519MLKEM768') ? [
    ['a client listing P-256 before X25519MLKEM768', {},
      { ecdhCurve: 'P-256:X25519MLKEM768' }],
    ['a server listing X25519 before X25519MLKEM768', { ecdhCurve: 'X25519:X25519MLKEM768' },
      {}],
  ] : []),
];

for (const [name, serverOptions, clientOptions] of GROUP_CASES) {
  test(`the group node's OpenSSL picks for ${name}`, {
    timeout: 30000,
    todo: 'docs/compatibility.md: rustls picks the key exchange group in the client\'s order',
  }, async () => {
    const logs = await handshakeOnBoth(clientOptions, serverOptions);
    assert.deepEqual(logs['fast-http'], logs['node:https']);
  });
}
