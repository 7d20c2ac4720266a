'use strict';
// An https server listening on a Unix-domain socket serves TLS there too (node's tls.Server
// wraps every accepted socket, whatever its family), on node's https and fast-http's.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const tls = require('node:tls');
const { test } = require('node:test');
const { certs, isFastHttpServer, onBoth, serverOptions } = require('./helpers');
const { normalize } = require('../wire/helpers');

const T = { timeout: 30000 };

/** One GET over TLS on `sockPath`; resolves with what the client saw (never rejects). */
function getOverUnix(sockPath, servername = 'localhost') {
  return new Promise((resolve) => {
    const chunks = [];
    const socket = tls.connect({
      path: sockPath, ca: certs.ca, servername, checkServerIdentity: () => undefined,
    });
    let secure = null;
    socket.on('secureConnect', () => {
      secure = { authorized: socket.authorized, protocol: socket.getProtocol() };
      socket.end('GET /u HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', (err) => resolve({ secure, error: err.code, wire: '' }));
    socket.on('close', () => resolve({ secure, error: null,
      wire: normalize(Buffer.concat(chunks)) }));
  });
}

for (const servername of ['localhost', 'sni.0']) {
  test(`an https server on a Unix socket speaks TLS there (a client naming ${servername})`, T,
    () => unixCase(servername));
}

async function unixCase(servername) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-https-unix-'));
  try {
    const runs = await onBoth(async (impl, name) => {
      const secured = [];
      const server = impl.createServer(serverOptions(), (req, res) => {
        secured.push(req.socket.encrypted === true, req.socket.servername);
        res.end(`${req.method} ${req.url}`);
      });
      if (name === 'fast-http') assert.ok(isFastHttpServer(server), 'not a fast-http server');
      const sockPath = path.join(dir, `${name.replace(':', '-')}.sock`);
      await new Promise((resolve) => server.listen(sockPath, resolve));
      try {
        return { client: await getOverUnix(sockPath, servername), secured };
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
    const a = runs['node:https'];
    assert.equal(a.client.error, null);
    assert.match(a.client.wire, /GET \/u$/);
    assert.deepStrictEqual(runs['fast-http'], a);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
