'use strict';
// APM agents and test spies patch net.Socket.prototype (setTimeout, write, end, destroy, ...):
// whatever is patched there must run for fast-http's sockets as it does for node:http's, and
// node's own method, called by the patch on the socket, must do what the socket's own does.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { both } = require('./helpers/both');

const NAMES = [
  'setTimeout', 'setNoDelay', 'setKeepAlive', 'address', 'ref', 'unref', 'pause', 'resume',
  'write', 'end', 'destroy', 'destroySoon',
];

function show(v) {
  if (typeof v === 'function') return 'fn';
  if (Buffer.isBuffer(v)) return `buf:${v.length}`;
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

/**
 * Wraps `names` on net.Socket.prototype (what is there now, own or inherited) with spies
 * that log calls on server-side sockets while `rec.on`; returns the undo.
 */
function spy(names, log, rec) {
  const proto = net.Socket.prototype;
  const saved = names.map((n) => [n, Object.getOwnPropertyDescriptor(proto, n)]);
  for (const n of names) {
    const orig = proto[n];
    proto[n] = function spied(...args) {
      const on = rec.on && this instanceof net.Socket && this.server != null;
      if (on) log.push(`${n}(${args.map(show).join(',')})`);
      const r = orig.apply(this, args);
      if (on && r === this) log.push(`${n} -> this`);
      return r;
    };
  }
  return () => {
    for (const [n, d] of saved) {
      if (d === undefined) delete proto[n];
      else Object.defineProperty(proto, n, d);
    }
  };
}

function request(port, text, onData) {
  const c = net.connect(port, '127.0.0.1');
  c.setEncoding('latin1');
  c.on('data', onData);
  c.on('error', () => {});
  c.write(text);
  return c;
}

test('methods an app calls on req.socket run patches made before the server exists',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const rec = { on: false };
      const undo = spy(NAMES, log, rec);
      const server = http.createServer((req, res) => {
        const s = req.socket;
        rec.on = true;
        s.setNoDelay(true);
        s.setKeepAlive(true, 1000);
        const a = s.address();
        log.push(`address ${a.family} ${a.address} ${a.port === server.address().port}`);
        s.unref();
        s.ref();
        s.pause();
        s.resume();
        // Armed by the patched setTimeout: it must fire (and only then is the answer sent).
        s.setTimeout(100, () => {
          log.push('timeout');
          res.end('late');
        });
        rec.on = false;
      });
      // Else the server's own 'timeout' handling destroys the socket before the answer.
      server.on('timeout', () => log.push('server timeout'));
      server.listen(0, '127.0.0.1', () => {
        const c = request(server.address().port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', (d) => {
          if (!d.endsWith('late')) return;
          log.push('answered');
          c.end();
          server.close(() => {
            undo();
            done();
          });
        });
      });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
  });

test('patches made after the first request run for the next one on that connection',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const rec = { on: false };
      let undo = () => {};
      const server = http.createServer((req, res) => {
        if (req.url === '/second') {
          rec.on = true;
          req.socket.setTimeout(0);
          req.socket.setNoDelay(false);
          log.push(`keys ${Object.keys(req.socket.address()).sort()}`);
          rec.on = false;
        }
        res.end(req.url);
      });
      server.listen(0, '127.0.0.1', () => {
        const c = request(server.address().port, 'GET /first HTTP/1.1\r\nHost: x\r\n\r\n', (d) => {
          if (d.endsWith('/first')) {
            undo = spy(NAMES, log, rec);
            c.write('GET /second HTTP/1.1\r\nHost: x\r\n\r\n');
          } else if (d.endsWith('/second')) {
            c.end();
            server.close(() => {
              undo();
              done();
            });
          }
        });
      });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.ok(logs['node:http'].includes('setTimeout(0)'));
  });

test('write, end and destroy patched on net.Socket.prototype run on an upgraded socket',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const rec = { on: false };
      const undo = spy(NAMES, log, rec);
      const server = http.createServer();
      server.on('upgrade', (req, socket) => {
        rec.on = true;
        socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n');
        socket.write(Buffer.from('hello '));
        socket.end('bye');
        rec.on = false;
        socket.on('close', () => {
          rec.on = true;
          socket.destroy();
          rec.on = false;
        });
      });
      server.listen(0, '127.0.0.1', () => {
        let got = '';
        const c = request(server.address().port,
          'GET / HTTP/1.1\r\nHost: x\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n', (d) => {
            got += d;
          });
        c.on('end', () => {
          log.push(`client got ${JSON.stringify(got.slice(got.indexOf('\r\n\r\n') + 4))}`);
          c.end();
          server.close(() => {
            undo();
            done();
          });
        });
      });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
  });

test('a patch that does not call node\'s method stops it, as on node:http', { timeout: 30000 },
  async () => {
    const logs = await both((http, log, done) => {
      const proto = net.Socket.prototype;
      const saved = Object.getOwnPropertyDescriptor(proto, 'setTimeout');
      const server = http.createServer((req, res) => {
        proto.setTimeout = function swallowed(ms) {
          log.push(`swallowed ${ms}`);
          return this;
        };
        // Would time the request out at once if it reached the socket.
        req.socket.setTimeout(1, () => log.push('timeout'));
        Object.defineProperty(proto, 'setTimeout', saved);
        setTimeout(() => res.end('ok'), 50);
      });
      server.listen(0, '127.0.0.1', () => {
        const c = request(server.address().port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', (d) => {
          if (!d.endsWith('ok')) return;
          c.end();
          server.close(done);
        });
      });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
  });

test('node:http\'s setTimeout(server.timeout) on a new connection runs a patched setTimeout',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const rec = { on: true };
      const undo = spy(['setTimeout'], log, rec);
      const server = http.createServer((req, res) => {
        log.push(`handler, socket.timeout ${req.socket.timeout}`);
        rec.on = false;
        res.end('ok');
      });
      server.timeout = 5000;
      server.listen(0, '127.0.0.1', () => {
        const c = request(server.address().port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', (d) => {
          if (!d.endsWith('ok')) return;
          c.end();
          server.close(() => {
            undo();
            done();
          });
        });
      });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
  });

test('listener methods patched on net.Socket.prototype or EventEmitter.prototype run',
  { timeout: 30000 }, async () => {
    const EventEmitter = require('node:events');
    const logs = await both((http, log, done) => {
      const rec = { on: false };
      const undoNet = spy(['on', 'addListener', 'prependListener', 'removeListener', 'off'],
        log, rec);
      const ee = EventEmitter.prototype;
      const eeOn = Object.getOwnPropertyDescriptor(ee, 'on');
      const origOn = ee.on;
      ee.on = function (ev, fn) {
        if (rec.on && this instanceof net.Socket) log.push(`EventEmitter on(${ev})`);
        return origOn.call(this, ev, fn);
      };
      const server = http.createServer((req, res) => {
        const s = req.socket;
        const f = () => {};
        rec.on = true;
        s.on('custom', f);
        s.once('custom2', f);
        s.addListener('custom3', f);
        s.prependListener('custom4', f);
        s.removeListener('custom', f);
        s.off('custom3', f);
        log.push(`count ${s.listenerCount('custom4')}`);
        rec.on = false;
        res.end('ok');
      });
      server.listen(0, '127.0.0.1', () => {
        const c = request(server.address().port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', (d) => {
          if (!d.endsWith('ok')) return;
          c.end();
          server.close(() => {
            undoNet();
            Object.defineProperty(ee, 'on', eeOn);
            done();
          });
        });
      });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
  });

test('the socket stays a net.Socket', { timeout: 10000 }, async () => {
  const logs = await both((http, log, done) => {
    const server = http.createServer((req, res) => {
      log.push(req.socket instanceof net.Socket, req.socket._handle === null ? 'null' : 'handle');
      res.end('ok');
    });
    server.listen(0, '127.0.0.1', () => {
      const c = request(server.address().port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', (d) => {
        if (!d.endsWith('ok')) return;
        c.end();
        server.close(done);
      });
    });
  });
  assert.equal(logs['fast-http'][0], logs['node:http'][0]);
});
