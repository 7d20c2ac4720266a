'use strict';
// The native TLS transport under fast-http's server, through the addon's TLS contract
// (tlsContextCreate / serverSetTls, the onSecure / onTlsClientError events), against node's
// https server on the same scenarios. The https API on top (lib/https) is not used here.
const { test } = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const https = require('node:https');
const fastHttp = require('..');
const { binding } = require('../lib/internal/native');
const { kSid, kTlsSession } = require('../lib/internal/symbols');

const { key, cert, ca } = require('./helpers/tls-fixtures');

/** A listening server of either kind with `handler`; resolves to [server, port]. */
function listen(kind, handler) {
  return new Promise((resolve) => {
    if (kind === 'node') {
      const server = https.createServer({ key, cert }, handler);
      server.listen(0, '127.0.0.1', () => resolve(server));
      return;
    }
    const server = fastHttp.createServer(handler);
    server.listen(0, '127.0.0.1', () => {
      const ctx = binding.tlsContextCreate({
        pairs: [[cert, key]], ca: [], requestCert: false, rejectUnauthorized: false,
        minVersion: 0x0303, maxVersion: 0x0304, alpn: [], tickets: true,
      });
      binding.serverSetTls(server[kSid], ctx);
      resolve(server);
    });
  });
}

function request(port, agent, method, body) {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port, servername: 'localhost', ca, agent, method, path: '/x',
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({
        status: res.statusCode, text, reused: req.reusedSocket,
        chunked: res.headers['transfer-encoding'],
      }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function handler(req, res) {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    res.write(`${req.method} ${req.url} ${body}`);
    res.end(' done');
  });
}

for (const kind of ['node', 'fast']) {
  test(`requests over TLS (${kind}): hello, POST, keep-alive, chunked`, { timeout: 20000 },
    async () => {
      const order = [];
      const server = await listen(kind, (req, res) => {
        order.push('request');
        handler(req, res);
      });
      const sessions = [];
      server.on('secureConnection', (socket) => {
        order.push('secureConnection');
        sessions.push(kind === 'node'
          ? { protocol: socket.getProtocol(), cipher: socket.getCipher().name,
            servername: socket.servername, alpn: socket.alpnProtocol }
          : { protocol: socket[kTlsSession].protocol, cipher: socket[kTlsSession].cipherName,
            servername: socket[kTlsSession].servername,
            alpn: socket[kTlsSession].alpnProtocol });
      });
      const { port } = server.address();
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      const a = await request(port, agent, 'GET');
      const b = await request(port, agent, 'POST', 'hello');
      agent.destroy();
      assert.deepStrictEqual([a, b], [
        { status: 200, text: 'GET /x  done', reused: false, chunked: 'chunked' },
        { status: 200, text: 'POST /x hello done', reused: true, chunked: 'chunked' },
      ]);
      assert.deepStrictEqual(order, ['secureConnection', 'request', 'request']);
      assert.deepStrictEqual(sessions, [{
        protocol: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384', servername: 'localhost',
        alpn: false,
      }]);
      await new Promise((resolve) => server.close(resolve));
    });

  test(`a plain HTTP client is a tlsClientError (${kind})`, { timeout: 20000 }, async () => {
    const server = await listen(kind, handler);
    const errors = [];
    const gotError = new Promise((resolve) => {
      server.on('tlsClientError', (err) => {
        errors.push(err.code);
        resolve();
      });
    });
    const { port } = server.address();
    const sock = net.connect(port, '127.0.0.1');
    sock.on('error', () => {});
    sock.end('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await gotError;
    sock.destroy();
    assert.deepStrictEqual(errors, ['ERR_SSL_HTTP_REQUEST']);
    // The server still serves.
    const ok = await request(port, new https.Agent(), 'GET');
    assert.strictEqual(ok.status, 200);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test(`a client gone mid-handshake is a tlsClientError (${kind})`, { timeout: 20000 },
    async () => {
      const server = await listen(kind, handler);
      const gotError = new Promise((resolve) => {
        server.on('tlsClientError', (err) => resolve([err.code, err.message]));
      });
      const { port } = server.address();
      const sock = net.connect(port, '127.0.0.1');
      sock.on('error', () => {});
      // The start of a ClientHello record, then the end.
      sock.end(Buffer.from([0x16, 0x03, 0x01]));
      assert.deepStrictEqual(await gotError, ['ECONNRESET', 'socket hang up']);
      await new Promise((resolve) => server.close(resolve));
    });
}
