'use strict';
// Idle TLS connections share one hidden class: a socket's TLSSocket prototype comes after its
// TLS fields, because on Node 20 and 22 (V8 11, 12) a property added after
// Object.setPrototypeOf gave every socket a map and descriptor array of its own (about 830 B
// of JS heap per idle TLS connection). Checked with V8's %HaveSameMap in a child process.
const { test } = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..', '..');
const fixtures = path.join(__dirname, '..', 'fixtures', 'tls');

const script = `
  const fs = require('node:fs');
  const https = require(${JSON.stringify(root)}).https;
  const client = require('node:https');
  const fix = (n) => fs.readFileSync(${JSON.stringify(fixtures)} + '/' + n);
  const sockets = [];
  const server = https.createServer(
    { key: fix('server-ecdsa-key.pem'), cert: fix('server-ecdsa-cert.pem') },
    (req, res) => { sockets.push(req.socket); res.end('ok'); });
  server.listen(0, '127.0.0.1', async () => {
    const agent = new client.Agent({ keepAlive: true, maxSockets: 12 });
    const get = () => new Promise((resolve, reject) => {
      client.get({ host: '127.0.0.1', port: server.address().port, agent, rejectUnauthorized: false },
        (res) => { res.resume(); res.on('end', resolve); }).on('error', reject);
    });
    await Promise.all(Array.from({ length: 12 }, get));
    // Every socket idle (its response finished), in the same state.
    await new Promise((resolve) => setImmediate(resolve));
    const last = sockets[sockets.length - 1];
    const shared = sockets.slice(4).filter((s) => %HaveSameMap(s, last)).length;
    console.log(JSON.stringify({ sockets: sockets.length, shared, distinct: new Set(sockets).size }));
    agent.destroy();
    server.close();
  });
`;

test('idle TLS connections share one hidden class', { timeout: 30000 }, () => {
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', script],
    { encoding: 'utf8', timeout: 25000 });
  assert.strictEqual(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.strictEqual(got.sockets, 12);
  assert.strictEqual(got.distinct, 12);
  assert.strictEqual(got.shared, 8, `only ${got.shared} of the last 8 idle sockets share the last one's map`);
});
