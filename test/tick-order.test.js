'use strict';
// The order of request handlers, the ticks and promise jobs they queue, and body events, for
// requests that arrive together, compared with node:http. fast-http runs most handlers from
// the tick queue (lib/http/tick-queue.js): node's order must hold all the same.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const path = require('node:path');

const FIXTURE = path.join(__dirname, 'fixtures', 'tick-order.js');

/** The fixture's log for `impl` (in a child: one case throws into 'uncaughtException'). */
function run(impl, bytes, answers, then) {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [FIXTURE, impl, JSON.stringify({ bytes, answers, then })],
      { env, timeout: 20_000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${impl}: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop()));
      });
  });
}

const GET = (url) => `GET ${url} HTTP/1.1\r\nHost: x\r\n\r\n`;
const POST = (url, body) =>
  `POST ${url} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

const CASES = {
  'three pipelined GETs': [GET('/1') + GET('/2') + GET('/3'), 3],
  'a POST with its body, then a GET': [POST('/1', 'abc') + GET('/2'), 2],
  'a GET, a POST with its body, a GET': [GET('/1') + POST('/2', 'abcd') + GET('/3'), 3],
  'a POST whose end listener throws, then a GET': [POST('/throw-in-end', 'ab') + GET('/2'), 2],
  'a POST with its body, then a chunked POST': [POST('/1', 'abc') + 'POST /2 HTTP/1.1\r\n' +
    'Host: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n', 2],
  'a POST with its body, then garbage': [POST('/1', 'abc') + 'BAD\r\n\r\n', 1],
  // Ticks that throw into 'uncaughtException' hold up nothing queued after them.
  'ticks that throw, then the next request': [GET('/throw-in-ticks'), 2, GET('/2')],
};

for (const [name, [bytes, answers, then]] of Object.entries(CASES)) {
  test(`${name}: handlers, ticks, jobs and body events in node's order`, { timeout: 60_000 },
    async () => {
      const logs = {};
      for (const impl of ['node:http', 'fast-http']) {
        logs[impl] = await run(impl, bytes, answers, then);
      }
      assert.deepEqual(logs['fast-http'], logs['node:http']);
    });
}

// node's parser goes on through the read after a handler destroyed the socket: the next
// pipelined request's handler still runs (on a destroyed socket).
test('a handler that destroys the socket: the next pipelined request is still emitted',
  { timeout: 60_000 }, async () => {
    const calls = {};
    for (const [name, http] of [['node:http', require('node:http')], ['fast-http', require('..')]]) {
      calls[name] = await new Promise((resolve) => {
        let n = 0;
        const server = http.createServer((req, res) => {
          n++;
          req.socket.destroy();
          res.end();
        });
        server.listen(0, '127.0.0.1', () => {
          const c = require('node:net').connect(server.address().port, '127.0.0.1');
          c.on('error', () => {});
          c.end(`${GET('/1')}${GET('/2')}`);
          c.on('close', () => setImmediate(() => server.close(() => resolve(n))));
        });
      });
    }
    assert.equal(calls['node:http'], 2, 'node:http itself');
    assert.deepEqual(calls['fast-http'], calls['node:http']);
  });
