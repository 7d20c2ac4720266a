'use strict';
// What ends a request, in any order, never throws and ends as on node:http: a handler that
// answers after stream.pipeline() or `for await` destroyed the request (node's destroyer sets
// `req.socket = null`), server.close() / closeIdleConnections() beside a just-ended response,
// and random orders of res.end(), socket.destroy(), res.destroy(), client aborts,
// server.close() and the response's own 'finish' / 'close' (test/helpers/finish-order-fuzz.js),
// each run on node:http and fast-http and compared.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { pipeline, Writable } = require('node:stream');
const { both } = require('./helpers/both');
const { sequenceOf, runSequence, racy } = require('./helpers/finish-order-fuzz');
const { ResponseParser } = require('./wire/helpers');
const nodeHttp = require('node:http');
const fastHttp = require('..');

/** An upload of 200 bytes in two writes; logs the status and body the client gets. */
function upload(impl, log, done, handler) {
  const server = impl.createServer(handler);
  server.listen(0, '127.0.0.1', () => {
    const req = nodeHttp.request({
      port: server.address().port, host: '127.0.0.1', method: 'POST', agent: false,
      headers: { 'content-length': 200 },
    }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => {
        log.push(`client ${res.statusCode} ${body}`);
        server.close(done);
        server.closeAllConnections();
      });
    });
    req.on('error', (e) => {
      log.push(`client error ${e.code}`);
      server.close(done);
      server.closeAllConnections();
    });
    req.write('x'.repeat(100));
    setImmediate(() => req.end('y'.repeat(100)));
  });
}

test('a handler answers after stream.pipeline() into a failing sink destroyed the request',
  { timeout: 20_000 }, async () => {
    const logs = await both((impl, log, done) => upload(impl, log, done, (req, res) => {
      const sink = new Writable({
        write(chunk, enc, cb) {
          cb(new Error('sink failed'));
        },
      });
      pipeline(req, sink, (err) => {
        log.push(`pipeline ${err.message}, req.socket ${req.socket}`);
        res.statusCode = 500;
        res.end('failed');
      });
    }));
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.deepEqual(logs['node:http'], ['pipeline sink failed, req.socket null', 'client 500 failed']);
  });

// node's parser stops reading when a body piece cannot be pushed (the request is destroyed)
// and reads on at the message's end (readStart): the connection's next request is served.
test('after stream.pipeline() destroyed a request mid-body, the next request on the ' +
  'connection is served', { timeout: 20_000 }, async () => {
  const head = 'POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n';
  const logs = await both((impl, log, done) => {
    let client = null;
    const server = impl.createServer((req, res) => {
      if (req.url === '/2') return res.end('second');
      pipeline(req, new Writable({
        write(chunk, enc, cb) {
          cb(new Error('sink failed'));
        },
      }), (err) => {
        log.push(`pipeline ${err.message}`);
        res.statusCode = 500;
        res.end('failed');
        // The rest of the body, and the next request, come in a later read.
        client.write(`${'y'.repeat(100)}GET /2 HTTP/1.1\r\nHost: x\r\n\r\n`);
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const parser = new ResponseParser([], { keepBodies: true });
      client = net.connect(server.address().port, '127.0.0.1', () => {
        client.write(`${head}${'x'.repeat(100)}`);
      });
      client.on('data', (d) => {
        parser.push(d);
        if (parser.final === 2) {
          log.push(`client ${parser.statuses.join(' ')}: ${parser.bodies.join(', ')}`);
          client.end();
        }
      });
      client.on('close', () => server.close(done));
    });
    // A connection left paused answers nothing until a timer of the server's ends the wait.
  }, 3000);
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.deepEqual(logs['node:http'], ['pipeline sink failed', 'client 500 200: failed, second']);
});

test('a handler answers 413 after `for await` over the request stopped early',
  { timeout: 20_000 }, async () => {
    const logs = await both((impl, log, done) => upload(impl, log, done, async (req, res) => {
      let n = 0;
      for await (const chunk of req) {
        n += chunk.length;
        if (n > 10) break;
      }
      log.push(`loop out, req.socket ${req.socket}`);
      res.statusCode = 413;
      res.end('too big');
    }));
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.deepEqual(logs['node:http'], ['loop out, req.socket null', 'client 413 too big']);
  });

// node destroys a keep-alive connection whose response has ended (it is idle) when the
// server closes, and close's callback follows; the client sees the server hang up at once.
// While the handler itself runs, node's parser is still inside the request's head: the
// connection is not idle yet, and stays open.
for (const when of ['sync', 'nextTick', 'promise', 'finish']) {
  for (const how of ['close', 'closeIdleConnections']) {
    test(`server.${how}() ${when === 'finish' ? "from the response's 'finish'" :
      `in the handler's ${when === 'sync' ? 'own tick' : when}`} after res.end() of a ` +
      'keep-alive response', { timeout: 20_000 }, async () => {
      const logs = await both((impl, log, done) => {
        let pending = 2;
        const end = () => --pending === 0 && done();
        const server = impl.createServer((req, res) => {
          const sock = req.socket;
          const act = () => {
            if (how === 'close') server.close(() => log.push('close callback'));
            else server.closeIdleConnections();
            setImmediate(() => {
              log.push(`socket destroyed: ${sock.destroyed}`);
              server.closeAllConnections();
              if (how !== 'close') server.close();
            });
          };
          res.end('ok');
          if (when === 'sync') act();
          else if (when === 'nextTick') process.nextTick(act);
          else if (when === 'promise') Promise.resolve().then(act);
          else res.on('finish', act);
        });
        server.on('close', end);
        server.listen(0, '127.0.0.1', () => {
          const c = net.connect(server.address().port, '127.0.0.1');
          c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
          let got = '';
          c.setEncoding('latin1');
          c.on('data', (d) => {
            got += d;
          });
          c.on('close', () => {
            log.push(`client closed, got ${got.slice(0, 15)}${got.endsWith('\r\n\r\nok') ? ' ... ok' : ''}`);
            end();
          });
        });
      }, 4000);
      assert.deepEqual(logs['fast-http'], logs['node:http']);
    });
  }
}

// node writes a pipelined response when the one before it finishes: a destroy between sends
// what it has written, not what still waits (the addon holds all three at once).
test('three pipelined responses ended while waiting, the socket destroyed once the second ' +
  'has it: the third is not sent', { timeout: 20_000 }, async () => {
  const logs = await both((impl, log, done) => {
    const server = impl.createServer((req, res) => {
      res.end(req.url);
      if (req.url === '/1') res.on('finish', () => res.req.socket?.destroy());
    });
    server.listen(0, '127.0.0.1', () => {
      const parser = new ResponseParser([], { keepBodies: true });
      const c = net.connect(server.address().port, '127.0.0.1', () => {
        c.write(['/1', '/2', '/3'].map((u) => `GET ${u} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
      });
      c.on('data', (d) => parser.push(d));
      c.on('close', () => {
        log.push(`client got ${parser.bodies.join(', ')}`);
        server.close(done);
      });
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});

// The addon closes a `Connection: close` connection once the response is written, and JS
// hears of it later: until then the socket is open to node's eyes, and closeAllConnections()
// destroys it (the server's 'close' a tick later).
test("a closing server, and a Connection: close response's 'finish' closes its connections: " +
  "'close' before the listener's promise jobs", { timeout: 20_000 }, async () => {
  const logs = await both((impl, log, done) => {
    const server = impl.createServer((req, res) => {
      server.close(() => {
        log.push('close callback');
        setImmediate(done);
      });
      res.on('finish', () => {
        server.closeAllConnections();
        process.nextTick(() => log.push('tick'));
        Promise.resolve().then(() => log.push('promise job'));
      });
      setImmediate(() => res.end('ok'));
    });
    server.listen(0, '127.0.0.1', () => {
      const c = net.connect(server.address().port, '127.0.0.1', () => {
        c.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      });
      c.resume();
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});

// Sequences per run: four Node versions in `npm test` run 4 × 10,000 distinct seeds.
const COUNT = Number(process.env.FAST_HTTP_ORDER_SEQUENCES) || 10000;
const FIRST = Number(process.env.FAST_HTTP_ORDER_SEED) ||
  1 + COUNT * ([20, 22, 24, 26].indexOf(Number(process.versions.node.split('.')[0])) + 1);
const CONCURRENCY = 16;

/** Whether the two logs agree. */
function agree(seq, n, f) {
  // A client that hangs up at once races the server: only a hang node has not is wrong.
  if (racy(seq)) return n.includes('hung') || !f.includes('hung');
  return JSON.stringify(n) === JSON.stringify(f);
}

test(`${COUNT} random orders of what ends a request, from seed ${FIRST}: nothing throws, ` +
  'and every request ends as on node:http, event for event', { timeout: 900_000 }, async () => {
  const thrown = [];
  const onThrow = (err) => thrown.push(err);
  process.on('uncaughtException', onThrow);
  const differ = [];
  let next = FIRST;
  async function worker() {
    while (next < FIRST + COUNT) {
      const seq = sequenceOf(next++);
      const [n, f] = await Promise.all([runSequence(nodeHttp, seq), runSequence(fastHttp, seq)]);
      if (!agree(seq, n, f)) differ.push(seq);
    }
  }
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    // Sixteen at a time on a busy machine, a sequence may pass its time limit on one server
    // only: what differed runs again alone, with more time, and must agree then.
    for (let i = 0; i < differ.length; i++) {
      const seq = differ[i];
      const n = await runSequence(nodeHttp, seq, 20_000);
      const f = await runSequence(fastHttp, seq, 20_000);
      differ[i] = agree(seq, n, f) ? null :
        `${JSON.stringify(seq)}\n  node:http ${n.join(', ')}\n  fast-http ${f.join(', ')}`;
    }
  } finally {
    process.removeListener('uncaughtException', onThrow);
  }
  assert.deepEqual(thrown.map((e) => e.stack), []);
  const left = differ.filter((d) => d !== null);
  assert.equal(left.length, 0, `${left.length} sequences differ:\n${left.slice(0, 10).join('\n')}`);
});
