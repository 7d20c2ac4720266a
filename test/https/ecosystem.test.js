'use strict';
// Libraries over https, node's https server vs fast-http's: Express (req.secure,
// req.protocol), ws over wss, an mTLS app; and an unmodified app under -r register.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { test } = require('node:test');
const { raw } = require('../wire/helpers');
const { certs, onBoth, serverOptions, startServer, summarize, tlsExchange } = require('./helpers');

const T = { timeout: 60000 };
const GET = (p) => raw(`GET ${p} HTTP/1.1`, 'Host: localhost', '', '');

async function exchangeWith(impl, options, app, steps, client = {}) {
  const srv = await startServer(impl, serverOptions(options), app);
  try {
    const r = await tlsExchange(srv.port, steps, { until: 1, ...client });
    return { client: summarize(r), events: srv.events.map((e) => e.event) };
  } finally {
    await srv.close();
  }
}

test('Express over https: req.secure and req.protocol', T, async () => {
  const express = require('express');
  const app = express();
  app.get('/info', (req, res) => res.json({ secure: req.secure, protocol: req.protocol, ip: req.ip }));
  const runs = await onBoth((impl) => exchangeWith(impl, {}, app, GET('/info')));
  const a = runs['node:https'];
  assert.match(a.client.wire, /\{"secure":true,"protocol":"https","ip":"::ffff:127\.0\.0\.1"\}$|\{"secure":true,"protocol":"https","ip":"127\.0\.0\.1"\}$/);
  assert.deepStrictEqual(runs['fast-http'], a);
});

test('an mTLS Express app: refused without a client certificate, served with one', T, async () => {
  const express = require('express');
  const app = express();
  app.get('/me', (req, res) => res.send(`hello ${req.socket.getPeerCertificate().subject.CN}`));
  const options = { requestCert: true, rejectUnauthorized: true, ca: certs.ca };
  const runs = await onBoth(async (impl) => ({
    withCert: await exchangeWith(impl, options, app, GET('/me'),
      { tls: { key: certs.client.key, cert: certs.client.cert } }),
    without: await exchangeWith(impl, options, app, GET('/me')),
  }));
  const a = runs['node:https'];
  assert.match(a.withCert.client.wire, /hello fast-http test client$/);
  assert.equal(a.without.client.responses, 0);
  assert.ok(a.without.events.includes('tlsClientError'));
  assert.deepStrictEqual(runs['fast-http'], a);
});

test('ws over wss: handshake, echo both ways, close', T, async () => {
  const { WebSocket, WebSocketServer } = require('ws');
  const runs = await onBoth(async (impl) => {
    const log = [];
    const srv = await startServer(impl, serverOptions(), (req, res) => res.end('not a websocket'));
    const wss = new WebSocketServer({ server: srv.server });
    wss.on('connection', (ws, req) => {
      log.push(['server connection', req.socket.encrypted === true, req.headers.upgrade]);
      ws.on('message', (data, isBinary) => {
        log.push(['server got', data.toString(), isBinary]);
        ws.send(`echo ${data}`);
      });
      ws.on('close', (code) => log.push(['server close', code]));
    });
    try {
      await new Promise((resolve, reject) => {
        const ws = new WebSocket(`wss://localhost:${srv.port}/chat`, { ca: certs.ca });
        const timer = setTimeout(() => reject(new Error(`wss hung: ${JSON.stringify(log)}`)), 20000);
        ws.on('open', () => ws.send('hi'));
        ws.on('message', (data) => {
          log.push(['client got', data.toString()]);
          ws.close(1000);
        });
        ws.on('error', (err) => log.push(['client error', err.code]));
        ws.on('close', (code) => {
          clearTimeout(timer);
          log.push(['client close', code]);
          resolve();
        });
      });
      // The server side's 'close' can come after the client's.
      if (!log.some((l) => l[0] === 'server close')) {
        await new Promise((resolve) => {
          const [client] = wss.clients;
          if (!client) resolve();
          else client.once('close', resolve);
        });
      }
    } finally {
      wss.close();
      await srv.close();
    }
    return log.sort();
  });
  assert.deepEqual(runs['node:https'].filter((l) => l[0] === 'client got'), [['client got', 'echo hi']]);
  assert.deepStrictEqual(runs['fast-http'], runs['node:https']);
});

test('-r register: https.createServer and new https.Server are fast-http servers', T, async () => {
  const self = process.env.FAST_HTTPS_JUDGE_SELF === '1';
  const statsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'https-judge-')), 'stats.jsonl');
  const env = { ...process.env, FAST_HTTP_STATS: statsFile };
  delete env.NODE_TEST_CONTEXT;
  const register = path.join(__dirname, '..', '..', 'lib', 'register.js');
  const child = spawn(process.execPath, ['-r', register, path.join(__dirname, 'fixtures', 'register-app.js')],
    { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.once('close', resolve));
  try {
    const info = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no status line: ${stderr}`)), 30000);
      child.once('close', () => reject(new Error(`child exited: ${stderr}`)));
      readline.createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      });
    });
    assert.deepEqual(info.instanceofHttpsServer, [true, true]);
    for (const port of info.ports) {
      const r = await tlsExchange(port, GET('/'), { until: 1 });
      assert.match(summarize(r).wire, /secure=true$/, stderr);
    }
    if (!self) {
      assert.deepEqual(info.isFastHttp, [true, true], 'register left node:https servers in place');
    }
  } finally {
    child.stdin.end();
    await exited;
  }
  if (!self) {
    const lines = fs.readFileSync(statsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const s = lines[lines.length - 1];
    assert.equal(s.httpsServersCreated, 2, `stats line: ${JSON.stringify(s)}`);
    assert.equal(s.httpsFallbackServers, 0, `stats line: ${JSON.stringify(s)}`);
    assert.ok(s.tlsHandshakes >= 2, `stats line: ${JSON.stringify(s)}`);
  }
  fs.rmSync(path.dirname(statsFile), { recursive: true, force: true });
});
