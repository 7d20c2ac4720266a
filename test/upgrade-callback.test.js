'use strict';
// server.shouldUpgradeCallback (Node 22+), compared with node:http on the wire: node's
// parserOnIncoming asks it about every Upgrade request (not CONNECT). Yes: 'upgrade', or the
// socket destroyed when nobody listens. No: a plain 'request' whose body is read as one, and
// (llhttp stops after an upgrade request) the rest of that read dropped. A throw is uncaught.
// On Node 20, which has no such option, both ignore it.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { compare, echoHandler, raw } = require('./wire/helpers');
const { hasShouldUpgradeCallback } = require('../lib/internal/node-internals');

const skip = !hasShouldUpgradeCallback && `Node ${process.version} has no shouldUpgradeCallback`;

function upgradeHead(url, ...extra) {
  return raw(`GET ${url} HTTP/1.1`, 'Host: x', 'Connection: Upgrade', 'Upgrade: test', ...extra,
    '', '');
}

/** An upgrade listener that answers 101, then echoes the head and what follows. */
function onUpgrade(req, socket, head) {
  socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
  socket.write(`head=${head.toString('latin1')};`);
  socket.on('data', (d) => socket.write(`data=${d.toString('latin1')};`));
  socket.on('end', () => socket.end());
}

/**
 * A scenario whose server has `answer` as its shouldUpgradeCallback (given at creation, or
 * assigned afterwards with `assign`); every call is observed.
 */
function asking(answer, { listen = true, assign = false, ...rest } = {}) {
  let server;
  let observer;
  function shouldUpgradeCallback(req) {
    observer.events.push({
      event: 'ask', url: req.url, upgrade: req.headers.upgrade, thisIsServer: this === server,
    });
    return answer(req);
  }
  return {
    handler: echoHandler,
    serverOptions: assign ? {} : { shouldUpgradeCallback },
    setup(s, o) {
      server = s;
      observer = o;
      if (assign) server.shouldUpgradeCallback = shouldUpgradeCallback;
      if (listen) {
        server.on('upgrade', (req, socket, head) => {
          o.events.push({ event: 'upgrade', url: req.url, head: head.toString('latin1') });
          onUpgrade(req, socket, head);
        });
      }
    },
    ...rest,
  };
}

test('yes: the upgrade, with what followed the head', { skip }, (t) => compare(t, asking(() => true, {
  request: [upgradeHead('/ws') + 'first', { waitFor: 'head=first' }, 'more',
    { waitFor: 'data=more' }, { end: true }],
  check(node, observer) {
    assert.match(node.wire, /^HTTP\/1.1 101 .*head=first;data=more;$/s);
    assert.deepEqual(observer.events.map((e) => e.event), ['ask', 'upgrade']);
    assert.equal(observer.events[0].thisIsServer, true);
  },
})));

test('yes with nobody listening: the socket is destroyed', { skip }, (t) => compare(t, asking(() => true, {
  listen: false,
  request: [upgradeHead('/ws') + 'first'],
  check(node, observer) {
    assert.equal(node.wire, '');
    assert.equal(observer.events.length, 1);
  },
})));

test('no: a plain request; the rest of that read is dropped, the next read is served', { skip },
  (t) => compare(t, asking(() => false, {
    request: [upgradeHead('/no') + raw('GET /dropped HTTP/1.1', 'Host: x', '', ''),
      { waitResponses: 1 }, raw('GET /next HTTP/1.1', 'Host: x', '', '')],
    until: 2,
    check(node, observer) {
      assert.deepEqual(observer.requests.map((r) => r.url), ['/no', '/next']);
      assert.deepEqual(observer.events.map((e) => e.event), ['ask']);
    },
  })));

test('no: a later upgrade request on the same connection is asked again', { skip },
  (t) => compare(t, asking((req) => req.url === '/yes', {
    request: [upgradeHead('/no'), { waitResponses: 1 }, upgradeHead('/yes') + 'x',
      { waitFor: 'head=x' }, { end: true }],
    check(node, observer) {
      assert.deepEqual(observer.events.map((e) => `${e.event} ${e.url}`),
        ['ask /no', 'ask /yes', 'upgrade /yes']);
    },
  })));

test('no: a Content-Length body is read as the body, then the rest of that read dropped', { skip },
  (t) => compare(t, asking(() => false, {
    request: [raw('POST /no HTTP/1.1', 'Host: x', 'Connection: Upgrade', 'Upgrade: test',
      'Content-Length: 5', '', 'hello') + raw('GET /dropped HTTP/1.1', 'Host: x', '', ''),
    { waitResponses: 1 }, raw('GET /next HTTP/1.1', 'Host: x', '', '')],
    until: 2,
    check(node, observer) {
      assert.deepEqual(observer.requests.map((r) => [r.url, r.body]),
        [['/no', 'hello'], ['/next', '']]);
    },
  })));

test('no: a body in pieces; the read that ends it loses its rest', { skip },
  (t) => compare(t, asking(() => false, {
    request: [raw('POST /no HTTP/1.1', 'Host: x', 'Connection: Upgrade', 'Upgrade: test',
      'Content-Length: 5', '', 'he'), { serverRead: true }, 'l', { serverRead: true },
    'lo' + raw('GET /dropped HTTP/1.1', 'Host: x', '', ''),
    { waitResponses: 1 }, raw('GET /next HTTP/1.1', 'Host: x', '', '')],
    until: 2,
    check(node, observer) {
      assert.deepEqual(observer.requests.map((r) => [r.url, r.body]),
        [['/no', 'hello'], ['/next', '']]);
    },
  })));

test('no: a chunked body with trailers', { skip }, (t) => compare(t, asking(() => false, {
  request: [raw('POST /no HTTP/1.1', 'Host: x', 'Connection: Upgrade', 'Upgrade: test',
    'Transfer-Encoding: chunked', '', '3', 'abc', '0', 'X-T: 1', '', '') +
    raw('GET /dropped HTTP/1.1', 'Host: x', '', ''),
  { waitResponses: 1 }, raw('GET /next HTTP/1.1', 'Host: x', '', '')],
  until: 2,
  check(node, observer) {
    assert.deepEqual(observer.requests.map((r) => [r.url, r.body, r.trailers]),
      [['/no', 'abc', { 'x-t': '1' }], ['/next', '', {}]]);
  },
})));

test('no, with Connection: close: the answer closes, later bytes are an error', { skip },
  (t) => compare(t, asking(() => false, {
    request: [upgradeHead('/no').replace('Connection: Upgrade', 'Connection: Upgrade, close'),
      { serverRead: true }, raw('GET /late HTTP/1.1', 'Host: x', '', '')],
    check(node, observer) {
      assert.match(node.wire, /^HTTP\/1.1 200 OK\r\n(.*\r\n)*Connection: close\r\n/);
      assert.deepEqual(observer.requests.map((r) => r.url), ['/no']);
    },
  })));

test('no, on HTTP/1.0', { skip }, (t) => compare(t, asking(() => false, {
  request: [raw('GET /old HTTP/1.0', 'Connection: Upgrade', 'Upgrade: test', '', '')],
  check(node, observer) {
    assert.deepEqual(observer.requests.map((r) => r.url), ['/old']);
  },
})));

test('plain requests and CONNECT are never asked', { skip }, (t) => {
  const base = asking(() => false, {
    request: [raw('GET /plain HTTP/1.1', 'Host: x', 'Upgrade: test', '', ''),
      { waitResponses: 1 }, raw('CONNECT x:1 HTTP/1.1', 'Host: x:1', '', '') + 'tunnel'],
    check(node, observer) {
      assert.deepEqual(observer.events, [{ event: 'connect', head: 'tunnel' }]);
    },
  });
  return compare(t, {
    ...base,
    setup(server, observer) {
      base.setup(server, observer);
      server.on('connect', (req, socket, head) => {
        observer.events.push({ event: 'connect', head: head.toString('latin1') });
        socket.end('HTTP/1.1 200 Connection Established\r\n\r\n');
      });
    },
  });
});

test('assigned after the server was made', { skip }, (t) => compare(t, asking(() => false, {
  assign: true,
  request: [upgradeHead('/assigned'), { waitResponses: 1 }],
  until: 1,
  check(node, observer) {
    assert.deepEqual(observer.events.map((e) => e.event), ['ask']);
    assert.deepEqual(observer.requests.map((r) => r.url), ['/assigned']);
  },
})));

test('the callback may destroy the socket', { skip }, (t) => compare(t, asking((req) => {
  req.socket.destroy();
  return false;
}, {
  request: [upgradeHead('/gone') + 'rest'],
  check(node, observer) {
    assert.equal(node.wire, '');
  },
})));

test('without the option the default asks who listens for \'upgrade\'', { skip }, async () => {
  const fastHttp = require('..');
  const server = fastHttp.createServer();
  assert.equal(typeof server.shouldUpgradeCallback, 'function');
  assert.equal(server.shouldUpgradeCallback(), false);
  server.on('upgrade', () => {});
  assert.equal(server.shouldUpgradeCallback(), true);
  assert.throws(() => fastHttp.createServer({ shouldUpgradeCallback: 1 }),
    { code: 'ERR_INVALID_ARG_TYPE' });
});

test('Node without the option ignores it, as node:http does', { skip: !skip && 'Node has it' },
  (t) => compare(t, asking(() => false, {
    request: [upgradeHead('/ws') + 'first', { waitFor: 'head=first' }, { end: true }],
    check(node, observer) {
      assert.deepEqual(observer.events.map((e) => e.event), ['upgrade']);
    },
  })));

// A throwing callback is the process's uncaught exception; the connection is left on an
// upgrade request: its next bytes go to 'upgrade' (or it is destroyed when nobody listens),
// and the peer's FIN ends it.
const THROWS = `
const http = require(process.argv[1]);
const net = require('node:net');
const listen = process.argv[2] === 'listen';
const then = process.argv[3];
const seen = [];
// The client's next step waits for the throw: the server has read the request by then.
let next;
process.on('uncaughtException', (err) => {
  seen.push('uncaught ' + err.message);
  if (next) setImmediate(next);
  next = undefined;
});
const server = http.createServer({
  shouldUpgradeCallback() { throw new Error('boom'); },
}, () => seen.push('request'));
if (listen) {
  server.on('upgrade', (req, socket) => {
    seen.push('upgrade ' + req.url);
    socket.end('bye');
  });
}
server.listen(0, '127.0.0.1', () => {
  const sock = net.connect(server.address().port, '127.0.0.1');
  let text = '';
  sock.on('data', (d) => { text += d; });
  sock.on('error', (e) => seen.push('client ' + e.code));
  sock.on('close', () => {
    seen.push('closed ' + JSON.stringify(text));
    console.log(JSON.stringify(seen));
    process.exit(0);
  });
  sock.write('GET /ws HTTP/1.1\\r\\nHost: x\\r\\nConnection: Upgrade\\r\\nUpgrade: t\\r\\n\\r\\n');
  next = () => {
    if (then === 'end') sock.end();
    else sock.write('more');
  };
});
`;

function throwing(module, ...args) {
  return JSON.parse(execFileSync(process.execPath, ['-e', THROWS, module, ...args], {
    encoding: 'utf8', timeout: 20000,
  }));
}

for (const args of [['listen', 'data'], ['none', 'data'], ['none', 'end']]) {
  test(`a throwing callback (${args.join(', ')})`, { skip }, () => {
    const expected = throwing('node:http', ...args);
    assert.equal(expected[0], 'uncaught boom');
    assert.deepEqual(throwing(path.join(__dirname, '..'), ...args), expected);
  });
}
