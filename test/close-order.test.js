'use strict';
// When a destroyed connection's 'close' events come, against the app's ticks, immediates and
// timers: net.Socket emits 'close' from its handle's close callback, in the loop's close
// phase, after the setImmediate callbacks of the iteration that destroyed it (and node's
// response and request 'close' follow the socket's).
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { both } = require('./helpers/both');

// [how the connection ends, whether the socket is destroyed at once]. After a `Connection:
// close` response the socket closes once the client's FIN is back, a loop turn or more
// later: a 1 ms timer may come before or after that on either server, so it is not logged.
const WAYS = {
  'req.socket.destroy()': [(req) => req.socket.destroy(), true],
  'res.destroy()': [(req, res) => res.destroy(), true],
  'req.destroy()': [(req) => req.destroy(), true],
  'a Connection: close response': [(req, res) => res.end('x'), false],
};

for (const [way, [act, atOnce]] of Object.entries(WAYS)) {
  test(`'close' after ${way}: node's place among ticks, immediates and timers`,
    { timeout: 30000 }, async () => {
      const logs = await both((http, log, done) => {
        // Done once the client, the server's socket, its request and (when logged) the timer
        // are through.
        let waiting = atOnce ? 4 : 3;
        const step = () => {
          if (--waiting === 0) server.close(done);
        };
        const server = http.createServer((req, res) => {
          req.socket.on('close', () => {
            log.push('socket close');
            step();
          });
          res.on('close', () => log.push('res close'));
          req.on('close', () => {
            log.push('req close');
            step();
          });
          act(req, res);
          process.nextTick(() => log.push('tick'));
          setImmediate(() => log.push('immediate'));
          if (atOnce) {
            setTimeout(() => {
              log.push('timeout');
              step();
            }, 0);
          }
        });
        server.listen(0, '127.0.0.1', () => {
          const c = net.connect(server.address().port, '127.0.0.1');
          c.on('error', () => {});
          c.resume();
          c.on('close', step);
          c.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        });
      });
      assert.deepEqual(logs['fast-http'], logs['node:http']);
      assert.ok(logs['node:http'].includes('socket close'));
    });
}

test('sockets destroyed together close in order, and a throwing \'close\' listener does not ' +
  'keep the others from closing', { timeout: 30000 }, async () => {
  const fixture = path.join(__dirname, 'fixtures', 'close-order-child.js');
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const run = (impl) => new Promise((resolve, reject) => {
    execFile(process.execPath, [fixture, impl], { env, timeout: 20000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${impl}: ${err.message}\n${stderr}`));
      else resolve(stdout.trim().split('\n'));
    });
  });
  const [nodeLog, fastLog] = [await run('node:http'), await run('fast-http')];
  assert.deepEqual(fastLog, nodeLog);
  assert.ok(nodeLog.includes('uncaught boom'));
  assert.equal(nodeLog.filter((l) => /^close \d$/.test(l)).length, 3);
});
