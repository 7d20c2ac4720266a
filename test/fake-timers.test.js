'use strict';
// Fake timers installed by a test (@sinonjs/fake-timers, which jest and vitest build on) do
// not catch the server's own timers, ticks or clock: node's modules took theirs when they
// loaded, and so does fast-http (lib/internal/scheduling.js). Before, fast-http's server
// set its connections-checking interval with the global setInterval, so `clock.runAll()`
// ran it until fake-timers gave up ("Aborting after running 1000 timers"), and a streamed
// response's Date header came from the fake clock.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const FakeTimers = require('@sinonjs/fake-timers');
const { both } = require('./helpers/both');
const nodeHttp = require('node:http');

// vitest's default list, plus what else a test may fake without breaking node's own streams
// (which look up process.nextTick at each call, so a fake one stops node:http too).
const FAKED = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate',
  'clearImmediate', 'Date', 'queueMicrotask', 'performance'];

function get(port, path) {
  return new Promise((resolve, reject) => {
    nodeHttp.get({ port, host: '127.0.0.1', path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ res, body }));
    }).on('error', reject);
  });
}

function scenario(impl, log, done) {
  const clock = FakeTimers.install({ toFake: FAKED, now: 0 });
  const finish = (err) => {
    clock.uninstall();
    if (err) log.push(`error ${err.message}`);
    done();
  };
  const server = impl.createServer((req, res) => {
    if (req.url === '/stream') {
      res.write('a');
      res.end('b');
    } else {
      res.end('ok');
    }
  });
  server.listen(0, '127.0.0.1', async () => {
    try {
      log.push(`timers after listen: ${clock.countTimers()}`);
      const { port } = server.address();
      for (const path of ['/', '/stream']) {
        const { res, body } = await get(port, path);
        // The fake clock starts at 0 (1970); node's Date header is the real time.
        log.push(`${path} ${res.statusCode} ${body} date is real: ${
          Date.parse(res.headers.date) > 1e12}`);
      }
      let ran;
      try {
        ran = `ran ${clock.runAll()}`;
      } catch (e) {
        ran = `runAll threw: ${e.message.split('\n')[0]}`;
      }
      log.push(ran);
      log.push(`after runAll: ${(await get(port, '/')).body}`);
      server.close(() => finish());
    } catch (e) {
      finish(e);
    }
  });
}

test('fake timers installed before listen() see none of the server\'s own timers',
  { timeout: 30000 }, async () => {
    const logs = await both(scenario);
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.equal(logs['node:http'][0], 'timers after listen: 0');
  });
