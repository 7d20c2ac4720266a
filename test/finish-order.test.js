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

// Sequences per run: four Node versions in `npm test` run 4 × 2,500 distinct seeds.
const COUNT = Number(process.env.FAST_HTTP_ORDER_SEQUENCES) || 2500;
const FIRST = Number(process.env.FAST_HTTP_ORDER_SEED) ||
  1 + COUNT * ([20, 22, 24, 26].indexOf(Number(process.versions.node.split('.')[0])) + 1);
const CONCURRENCY = 16;

/** The client's view of a sequence: what it received, and whether it hung. */
function clientView(log) {
  return log.filter((l) => l.startsWith('client') || l === 'hung').join(', ');
}

let fuzzed = null;

test(`${COUNT} random orders of what ends a request, from seed ${FIRST}: nothing throws, ` +
  'every request is answered or fails as on node:http', { timeout: 900_000 }, async () => {
  const thrown = [];
  const onThrow = (err) => thrown.push(err);
  process.on('uncaughtException', onThrow);
  const differ = [];
  const order = [];
  let next = FIRST;
  async function worker() {
    while (next < FIRST + COUNT) {
      const seq = sequenceOf(next++);
      const [n, f] = await Promise.all([runSequence(nodeHttp, seq), runSequence(fastHttp, seq)]);
      const shown = `${JSON.stringify(seq)}\n  node:http ${n.join(', ')}\n  fast-http ${f.join(', ')}`;
      // A client that hangs up at once races the server: only a hang node has not is wrong.
      const same = racy(seq) ? n.includes('hung') || !f.includes('hung') :
        clientView(n) === clientView(f);
      if (!same) differ.push(shown);
      else if (!racy(seq) && JSON.stringify(n) !== JSON.stringify(f)) order.push(shown);
    }
  }
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    process.removeListener('uncaughtException', onThrow);
  }
  fuzzed = order;
  assert.deepEqual(thrown.map((e) => e.stack), []);
  assert.equal(differ.length, 0, `${differ.length} sequences differ:\n${differ.slice(0, 10).join('\n')}`);
});

// The events of every object in node's order too: where a sequence still differs (the
// server's 'close' against a promise job; a request pipelined behind one whose handler
// destroyed the socket and closed the server, which node 24 still emits), it is listed here.
test('the same sequences: every event in node:http\'s order', async (t) => {
  assert.ok(fuzzed !== null, 'the sequences ran');
  if (fuzzed.length > 0) {
    t.todo(`${fuzzed.length} sequences differ in event order:\n${fuzzed.slice(0, 10).join('\n')}`);
  }
});
