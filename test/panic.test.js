'use strict';
// A panic inside the addon (a fast-http bug) closes only the connection it concerns and is
// a JS error (the server's 'error'); the reactor keeps serving every other connection. The
// panic is injected with a debug build that has the `test-hooks` feature: the next request
// for a chosen URL panics inside the batch that dispatches it.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const targetDir = path.join(root, 'target', 'test-hooks');
const addon = path.join(targetDir, 'fast-http-test-hooks.node');

function buildTestHooksAddon() {
  const r = spawnSync('cargo', ['build', '--lib', '--quiet', '--features', 'test-hooks',
    '--target-dir', targetDir], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.error) return r.error.message;
  if (r.status !== 0) return `cargo exited ${r.status}`;
  const lib = process.platform === 'darwin' ? 'libfast_http.dylib' : 'libfast_http.so';
  fs.copyFileSync(path.join(targetDir, 'debug', lib), addon);
  return null;
}

const SCRIPT = `
const http = require(process.argv[1]);
const { binding } = require(process.argv[1] + '/lib/internal/native');
const net = require('node:net');
const seen = [];
const server = http.createServer((req, res) => res.end('ok ' + req.url));
server.on('error', (err) => seen.push('server error ' + err.code));
function client(port) {
  const sock = net.connect(port, '127.0.0.1');
  let text = '';
  let waiter = null;
  sock.setEncoding('latin1');
  sock.on('data', (d) => { text += d; if (waiter && /ok \\/\\w+$/.test(text)) waiter(); });
  sock.on('close', () => { if (waiter) waiter(); });
  return {
    get(p) {
      text = '';
      return new Promise((resolve) => {
        waiter = () => { waiter = null; resolve(sock.destroyed && !text ? 'closed' : text.split('\\r\\n').pop()); };
        sock.write('GET ' + p + ' HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n');
      });
    },
    end() { sock.destroy(); },
  };
}
server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address();
  const a = client(port);
  seen.push(await a.get('/before'));
  binding.testPanicOn('/panic');
  const b = client(port);
  seen.push(await b.get('/panic'));
  seen.push(await a.get('/after'));
  const c = client(port);
  seen.push(await c.get('/new'));
  a.end(); c.end();
  console.log(JSON.stringify(seen));
  process.exit(0);
});
`;

test('a panic closes only its connection and is the server\'s error', (t) => {
  const failure = buildTestHooksAddon();
  if (failure !== null) {
    t.skip(`no test-hooks build: ${failure}`);
    return;
  }
  const out = execFileSync(process.execPath, ['-e', SCRIPT, root], {
    encoding: 'utf8',
    timeout: 30000,
    env: { ...process.env, FAST_HTTP_ADDON_PATH: addon },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const seen = JSON.parse(out);
  // The error and the client seeing its connection close race; both happen, once.
  assert.deepEqual([seen[0], ...seen.slice(1, 3).sort(), ...seen.slice(3)], [
    'ok /before',
    'closed',
    'server error ERR_FAST_HTTP_INTERNAL',
    'ok /after',
    'ok /new',
  ]);
});
