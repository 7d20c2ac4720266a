'use strict';
// A socket handed to an https server with `server.emit('connection', socket)` (sticky-session
// balancers and proxies do it): node's tls.Server wraps it in TLS and serves HTTP over that.
// fast-http's https server serves such a socket with node's own https machinery, as its http
// server does with node's http machinery, never as plain text.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const nodeHttps = require('node:https');
const fastHttp = require('../..');

const dir = path.join(__dirname, '..', 'fixtures', 'tls');
const read = (name) => fs.readFileSync(path.join(dir, name));
const key = read('server-rsa-key.pem');
const cert = read('server-rsa-cert.pem');
const ca = read('ca-cert.pem');

async function scenario(https) {
  const events = [];
  const server = https.createServer({ key, cert }, (req, res) => {
    events.push(`request ${req.url} encrypted=${req.socket.encrypted}`);
    res.end(`hello ${req.url}`);
  });
  server.on('secureConnection', (s) => events.push(`secureConnection encrypted=${s.encrypted}`));
  // The balancer: accepts the TCP connection and hands it over.
  const front = net.createServer((socket) => server.emit('connection', socket));
  await new Promise((resolve) => front.listen(0, '127.0.0.1', resolve));
  const body = await new Promise((resolve, reject) => {
    const req = nodeHttps.get({
      host: '127.0.0.1', port: front.address().port, path: '/in', servername: 'localhost', ca,
      agent: false,
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve(`${res.statusCode} ${text}`));
    });
    req.on('error', reject);
  });
  front.close();
  server.close();
  return { body, events };
}

test("a socket handed over with emit('connection') is served over TLS, as node's",
  { timeout: 20000 }, async () => {
    const node = await scenario(nodeHttps);
    const fast = await scenario(fastHttp.https);
    assert.deepEqual(node, {
      body: '200 hello /in',
      events: ['secureConnection encrypted=true', 'request /in encrypted=true'],
    });
    assert.deepEqual(fast, node);
  });
