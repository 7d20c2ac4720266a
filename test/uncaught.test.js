'use strict';
// A handler that throws: on node:http the error is the process's uncaught exception and the
// server goes on serving other connections. fast-http calls handlers from native code (one
// JS call per request inside a callback scope per read): the same must hold.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const SCRIPT = `
const http = require(process.argv[1]);
const net = require('node:net');
const seen = [];
process.on('uncaughtException', (err) => seen.push('uncaught ' + err.message));
const server = http.createServer((req, res) => {
  if (req.url === '/throw') throw new Error('boom');
  res.end('ok');
});
function get(port, path, noAnswerAfter) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let text = '';
    sock.setEncoding('latin1');
    sock.on('data', (d) => {
      text += d;
      if (text.endsWith('ok')) {
        sock.destroy();
        resolve(text.split('\\r\\n')[0]);
      }
    });
    sock.write('GET ' + path + ' HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n');
    if (noAnswerAfter) setTimeout(() => { sock.destroy(); resolve('no answer'); }, noAnswerAfter);
  });
}
server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address();
  seen.push(await get(port, '/throw', 500));
  seen.push(await get(port, '/ok', 0));
  console.log(JSON.stringify(seen));
  process.exit(0);
});
`;

function run(module) {
  return JSON.parse(execFileSync(process.execPath, ['-e', SCRIPT, module], {
    encoding: 'utf8', timeout: 20000,
  }));
}

test('a throwing handler is an uncaught exception and the server keeps serving', () => {
  const expected = run('node:http');
  assert.deepEqual(expected, ['uncaught boom', 'no answer', 'HTTP/1.1 200 OK']);
  assert.deepEqual(run(path.join(__dirname, '..')), expected);
});
