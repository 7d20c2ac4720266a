// The ESM entry point (lib/index.mjs, via the "import" condition of the
// package's exports map). 'fast-http-native' resolves by package self-reference,
// as `import ... from 'fast-http'` does in an app that installed it under that alias.
// A missing named export fails this file at link time with a SyntaxError
// naming the export.

import { test } from 'node:test';
import assert from 'node:assert';
import http from 'node:http';
import { createRequire } from 'node:module';
import * as esm from 'fast-http-native';
import {
  createServer,
  Server,
  IncomingMessage,
  ServerResponse,
  STATUS_CODES,
  METHODS,
  maxHeaderSize,
  validateHeaderName,
  validateHeaderValue,
} from 'fast-http-native';

const REQUEST_TIMEOUT_MS = 20_000;
const TEST_TIMEOUT_MS = 60_000;

const API = [
  'createServer',
  'Server',
  'IncomingMessage',
  'ServerResponse',
  'STATUS_CODES',
  'METHODS',
  'maxHeaderSize',
  'validateHeaderName',
  'validateHeaderValue',
];

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server.address().port);
    });
  });
}

function close(server) {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

// POST over a fresh connection (node's own client); resolves status/headers/body.
function post(port, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path,
      agent: false,
      headers: { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) },
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error('no response in time')));
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({
        status: res.statusCode,
        headers: res.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }));
    });
    req.end(body);
  });
}

test('ESM exports are the very same objects as the CommonJS ones', () => {
  // If lib/index.mjs loaded a second copy of the library, `instanceof Server`
  // would disagree between ESM and CJS code in one app (dual-package hazard).
  const cjs = createRequire(import.meta.url)('fast-http-native');
  for (const name of API) {
    assert.ok(name in esm, `missing ESM export ${name}`);
    assert.strictEqual(esm[name], cjs[name], `ESM and CJS ${name} differ`);
  }
  assert.strictEqual(typeof createServer, 'function');
  assert.strictEqual(typeof Server, 'function');
  assert.strictEqual(STATUS_CODES[404], 'Not Found');
  assert.ok(METHODS.includes('GET'));
  assert.strictEqual(typeof maxHeaderSize, 'number');
  assert.doesNotThrow(() => validateHeaderName('x-ok'));
  assert.throws(() => validateHeaderName('bad name'), { code: 'ERR_INVALID_HTTP_TOKEN' });
  assert.doesNotThrow(() => validateHeaderValue('x-ok', 'fine'));
  assert.throws(() => validateHeaderValue('x-ok', 'a\nb'), { code: 'ERR_INVALID_CHAR' });
});

test('createServer() round trip', { timeout: TEST_TIMEOUT_MS }, async () => {
  const server = createServer(async (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    for await (const chunk of req) body += chunk;
    const reply = JSON.stringify({
      method: req.method,
      url: req.url,
      body,
      reqIsIncomingMessage: req instanceof IncomingMessage,
      resIsServerResponse: res instanceof ServerResponse,
    });
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(reply),
    });
    res.end(reply);
  });
  assert.ok(server instanceof Server);
  const port = await listen(server);
  try {
    const res = await post(port, '/esm?x=1', 'hello from esm');
    assert.strictEqual(res.status, 200);
    assert.strictEqual(res.headers['content-type'], 'application/json');
    assert.deepStrictEqual(JSON.parse(res.body), {
      method: 'POST',
      url: '/esm?x=1',
      body: 'hello from esm',
      reqIsIncomingMessage: true,
      resIsServerResponse: true,
    });
  } finally {
    await close(server);
  }
});

test('new Server(options, listener) round trip', { timeout: TEST_TIMEOUT_MS }, async () => {
  const server = new Server({ keepAliveTimeout: 1000 }, (req, res) => {
    req.resume();
    res.setHeader('content-type', 'text/plain');
    res.end('ok');
  });
  const port = await listen(server);
  try {
    const res = await post(port, '/', 'x');
    assert.strictEqual(res.status, 200);
    assert.strictEqual(res.body, 'ok');
  } finally {
    await close(server);
  }
});
