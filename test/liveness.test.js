'use strict';
// An ended response reaches the client even when the process dies right after, as on
// node:http (it writes a response at once): a throw after end(), an unhandled rejection,
// process.exit(), a throw in a later tick, a second pipelined request whose handler throws.
// Each case runs a server in a child process that dies; the client compares the bytes it got
// from node:http and from fast-http (Date masked).
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

const FAST = path.join(__dirname, '..');

const SERVER = `
const http = require(process.argv[1]);
const handler = new Function('req', 'res', process.argv[2]);
const server = http.createServer(handler);
server.listen(0, '127.0.0.1', () => console.log('PORT ' + server.address().port));
`;

const CASES = {
  'a throw after end()': "res.end('bye'); throw new Error('after end');",
  'an unhandled rejection after end()': "res.end('bye'); Promise.reject(new Error('after end'));",
  'process.exit() after end()': "res.end('bye'); process.exit(3);",
  'a throw in the next tick': "res.end('bye'); process.nextTick(() => { throw new Error('tick'); });",
  'a throw in a promise job': "res.end('bye'); queueMicrotask(() => { throw new Error('job'); });",
  'a large body, then process.exit()': 'res.end(Buffer.alloc(256 * 1024, 120)); process.exit(0);',
  'a pipelined second request whose handler throws':
    "if (req.url === '/2') throw new Error('second'); res.end('first');",
  'a response from a timer, then a throw':
    "setTimeout(() => { res.end('late'); throw new Error('timer'); }, 10);",
};

const REQUEST = 'GET /1 HTTP/1.1\r\nHost: x\r\n\r\n';
const PIPELINED = REQUEST + 'GET /2 HTTP/1.1\r\nHost: x\r\n\r\n';

/** Starts a server that runs `body` as its handler; returns the bytes one client got. */
function exchange(module, body, request) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SERVER, module, body], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${module}: no close from the server`));
    }, 20000);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (!m) return;
      out = '';
      const socket = net.connect(Number(m[1]), '127.0.0.1', () => socket.write(request));
      const chunks = [];
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearTimeout(timer);
        child.kill();
        resolve(Buffer.concat(chunks).toString('latin1')
          .replace(/^Date: .*$/gm, 'Date: <masked>'));
      });
    });
    child.stderr.resume();
  });
}

for (const [name, body] of Object.entries(CASES)) {
  test(`an ended response is delivered after ${name}`, async () => {
    const request = name.includes('pipelined') ? PIPELINED : REQUEST;
    const expected = await exchange('node:http', body, request);
    assert.match(expected, /^HTTP\/1\.1 200 OK/, 'node delivers it');
    assert.equal(await exchange(FAST, body, request), expected);
  });
}
