'use strict';
// A body-less request nobody reads records its stream lifecycle instead of running it
// (lib/lazy-request-stream.js). Whatever an app does to observe it, it must see what it sees
// on node:http: the same events, in the same order, with the same state around them.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const nodeHttp = require('node:http');
const { finished } = require('node:stream');
const { inspect } = require('node:util');
const fastHttp = require('..');
const { trackConnections, sendPieces } = require('./helpers/server-read');

function state(req) {
  return [
    req.readableEnded, req.destroyed, req.closed, req.readable, req.readableFlowing,
    req.complete, req._dumped,
  ].join(' ');
}

function innerState(req) {
  const s = req._readableState;
  return [
    s.ended, s.endEmitted, s.destroyed, s.closed, s.closeEmitted, s.flowing,
    s.resumeScheduled, s.needReadable, s.emittedReadable, s.length,
  ].join(' ');
}

/**
 * Serves `requests` GET requests written in one packet with `handler(req, res, log)` on
 * `http`; resolves with the log once every response arrived and `settle` ms passed.
 */
function run(http, handler, { requests = 1, settle = 60 } = {}) {
  return new Promise((resolve, reject) => {
    const log = [];
    let n = 0;
    const server = http.createServer((req, res) => {
      const i = n++;
      handler(req, res, (...args) => log.push(`${i} ${args.join(' ')}`));
    });
    server.listen(0, '127.0.0.1', () => {
      const sock = net.connect(server.address().port, '127.0.0.1');
      let text = '';
      sock.setEncoding('latin1');
      sock.on('error', reject);
      sock.on('data', (d) => {
        text += d;
        if ((text.match(/HTTP\/1\.1 200/g) || []).length === requests &&
            text.endsWith('ok')) {
          setTimeout(() => {
            sock.destroy();
            server.close();
            resolve(log);
          }, settle);
        }
      });
      sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(requests));
    });
  });
}

async function same(handler, options) {
  const expected = await run(nodeHttp, handler, options);
  const actual = await run(fastHttp, handler, options);
  assert.deepEqual(actual, expected);
  return actual;
}

test('a request read after its response sees the finished lifecycle node leaves', async () => {
  const log = await same((req, res, log) => {
    res.end('ok');
    setImmediate(() => log('immediate', state(req), req.socket.parser?.incoming === req));
    setTimeout(() => {
      log('later', state(req), innerState(req));
      // Every field and flag of the state, as util.inspect shows it.
      log('inspect', inspect(req._readableState, { depth: 0 }));
      // node emitted 'end' and 'close' long ago: listeners added now never run.
      req.on('end', () => log('end'));
      req.on('close', () => log('close'));
      req.resume();
    }, 10);
  });
  assert.equal(log.length, 3);
});

test('response listeners see the request state of each tick', async () => {
  await same((req, res, log) => {
    res.on('finish', () => {
      log('finish', state(req));
      process.nextTick(() => log('finish+1', state(req)));
    });
    res.on('close', () => {
      log('res close', state(req), req.socket?.parser?.incoming === req);
      process.nextTick(() => log('res close+1', state(req)));
    });
    res.end('ok');
    log('ended', state(req));
    process.nextTick(() => log('tick', state(req)));
  }, { requests: 3 });
});

test('a request listened to from a finish listener gets its end and close', async () => {
  await same((req, res, log) => {
    res.on('finish', () => {
      req.on('end', () => log('end', state(req)));
      req.on('close', () => log('close', state(req), innerState(req)));
    });
    res.end('ok');
  });
});

test('listeners added in a tick after the handler see readable, end and close', async () => {
  await same((req, res, log) => {
    process.nextTick(() => {
      req.on('readable', () => log('readable', state(req), req.read()));
      req.on('end', () => log('end', state(req)));
      req.on('close', () => {
        log('close', state(req));
        res.end('ok');
      });
    });
  });
});

test('a body read after an await ends as on node', async () => {
  await same(async (req, res, log) => {
    await new Promise((resolve) => setImmediate(resolve));
    log('before', state(req));
    let chunks = 0;
    for await (const chunk of req) chunks += chunk.length;
    log('read', chunks, state(req));
    res.end('ok');
  });
});

test('stream.finished on a request answered earlier', async () => {
  await same((req, res, log) => {
    res.end('ok');
    setImmediate(() => finished(req, (err) => log('finished', err?.code, state(req))));
  });
});

test('prepended and once listeners are not skipped', async () => {
  await same((req, res, log) => {
    req.prependListener('close', () => log('prepended close', state(req)));
    req.once('end', () => log('once end', state(req)));
    res.end('ok');
  });
});

test('until something reads it, the state is a stand-in; reading it makes it real', async () => {
  let seen;
  await run(fastHttp, (req, res) => {
    res.end('ok');
    setImmediate(() => {
      const lazy = Reflect.ownKeys(req._readableState).filter((k) => typeof k === 'string');
      const ended = req._readableState.endEmitted;
      const real = Reflect.ownKeys(req._readableState).filter((k) => typeof k === 'string');
      seen = { lazy: lazy.length, ended, real: real.length };
    });
  });
  assert.equal(seen.lazy, 0);
  assert.equal(seen.ended, true);
  assert.ok(seen.real > 0);
});

test('a body-less request has the fields, order and class of one node constructs', async () => {
  const seen = {};
  const server = fastHttp.createServer((req, res) => {
    const syms = Object.getOwnPropertySymbols(req).map(String).sort();
    seen[req.method] = {
      keys: Object.keys(req).join(),
      syms: syms.join(),
      cls: req.constructor === fastHttp.IncomingMessage && req instanceof nodeHttp.IncomingMessage,
      raw: JSON.stringify([req.rawHeaders.length, req.rawTrailers]),
    };
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  const connections = trackConnections(server);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  for (const method of ['GET', 'POST']) {
    const body = method === 'POST' ? 'x' : '';
    const sock = net.connect(port, '127.0.0.1');
    const answered = new Promise((resolve, reject) => {
      sock.on('error', reject);
      sock.on('data', (d) => { if (String(d).endsWith('ok')) { sock.destroy(); resolve(); } });
    });
    // The POST body comes in a read of its own, after the head's: that request is made by
    // the constructor.
    await sendPieces(connections, sock,
      [`${method} / HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`,
        ...(body ? [body] : [])]);
    await answered;
  }
  server.close();
  assert.equal(seen.GET.cls, true);
  assert.deepEqual(seen.GET, seen.POST);
});

test('a request whose connection closes before the response is aborted as on node', async () => {
  function aborted(http) {
    return new Promise((resolve) => {
      const log = [];
      const server = http.createServer((req) => {
        // Looked at once the connection is gone (a socket listener leaves the request alone).
        req.socket.on('close', () => setImmediate(() => {
          log.push(`after close ${state(req)} ${req.aborted}`);
          req.on('close', () => log.push('close after the fact'));
          setTimeout(() => {
            server.close();
            resolve(log);
          }, 30);
        }));
        sock.destroy();
      });
      let sock;
      server.listen(0, '127.0.0.1', () => {
        sock = net.connect(server.address().port, '127.0.0.1');
        sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      });
    });
  }
  const expected = await aborted(nodeHttp);
  assert.deepEqual(await aborted(fastHttp), expected);
  // node marks it aborted and destroyed; no 'close' reaches a listener added afterwards.
  assert.equal(expected.length, 1);
  assert.match(expected[0], / true$/);
});
