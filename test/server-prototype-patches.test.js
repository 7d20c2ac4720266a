'use strict';
// APM agents (shimmer-style wrappers) and test spies patch node:http's prototypes:
// http.Server.prototype.emit to see 'connection' and 'request', ServerResponse.prototype's
// writeHead / end and OutgoingMessage.prototype's setHeader to time and tag responses. An app
// that calls require('fast-http').createServer() with such an agent loaded must see the same
// calls as with node:http: every wrapper runs once per call node's server makes.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const nodeHttp = require('node:http');
const { both } = require('./helpers/both');

/** Wraps `obj[name]` (own or inherited) with a spy logging `label(event?)`; returns the undo. */
function wrap(obj, name, log, label, filter = () => true) {
  const saved = Object.getOwnPropertyDescriptor(obj, name);
  const orig = obj[name];
  Object.defineProperty(obj, name, {
    configurable: true,
    writable: true,
    value: function wrapped(...args) {
      if (filter(this, args)) log.push(`${label}${typeof args[0] === 'string' ? ` ${args[0]}` : ''}`);
      return orig.apply(this, args);
    },
  });
  return () => {
    if (saved === undefined) delete obj[name];
    else Object.defineProperty(obj, name, saved);
  };
}

const SERVER_EVENTS = new Set(['connection', 'request', 'clientError', 'timeout', 'drop']);

function request(port, text) {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    let got = '';
    c.setEncoding('latin1');
    c.on('data', (d) => { got += d; });
    c.on('error', () => {});
    c.on('close', () => resolve(got.replace(/Date: [^\r]*\r\n/, '')));
    c.write(text);
  });
}

const GET = (path) => `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;

/**
 * Listens, calls `onListening(server)`, sends `texts` one connection after the other (the
 * answers go to `log`), then undoes the wrappers and closes the server.
 */
function serve(server, texts, log, done, { onListening = () => {}, undo = [] } = {}) {
  server.listen(0, '127.0.0.1', async () => {
    onListening(server);
    const { port } = server.address();
    for (const text of texts) log.push(await request(port, text));
    for (const u of undo) u();
    server.close(done);
  });
}

const wrapEmit = (obj, log) => wrap(obj, 'emit', log, 'emit', (self, args) => SERVER_EVENTS.has(args[0]));

test('a patched http.Server.prototype.emit sees every connection, request and client error',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const undo = [wrapEmit(nodeHttp.Server.prototype, log)];
      const server = http.createServer((req, res) => res.end('ok'));
      serve(server, [GET('/'), GET('/'), 'BAD\r\n\r\n'], log, done, { undo });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.equal(logs['node:http'].filter((l) => l === 'emit connection').length, 3);
  });

test('an emit wrapped on the server in its listen callback sees the first connection',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const server = http.createServer((req, res) => res.end('ok'));
      serve(server, [GET('/')], log, done, { onListening: () => wrapEmit(server, log) });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.deepEqual(logs['node:http'].slice(0, 2), ['emit connection', 'emit request']);
  });

test('an emit wrapped on the server while it serves sees the connections after it',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const server = http.createServer((req, res) => {
        if (req.url === '/wrap') wrapEmit(server, log);
        res.end('ok');
      });
      serve(server, [GET('/wrap'), GET('/')], log, done);
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.ok(logs['node:http'].includes('emit connection'));
  });

test('wrappers of node\'s ServerResponse writeHead / end and OutgoingMessage setHeader run',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const undo = [
        wrap(nodeHttp.ServerResponse.prototype, 'writeHead', log, 'writeHead'),
        wrap(nodeHttp.ServerResponse.prototype, 'end', log, 'end'),
        wrap(nodeHttp.OutgoingMessage.prototype, 'setHeader', log, 'setHeader'),
      ];
      const server = http.createServer((req, res) => {
        if (req.url === '/explicit') {
          res.setHeader('x-a', '1');
          res.writeHead(201, { 'x-b': '2' });
          res.end('explicit');
        } else if (req.url === '/implicit') {
          res.setHeader('content-type', 'text/plain');
          res.end('implicit');
        } else {
          res.end();
        }
      });
      serve(server, [GET('/explicit'), GET('/implicit'), GET('/bare')], log, done, { undo });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.ok(logs['node:http'].includes('writeHead'));
  });

test('a wrapper of OutgoingMessage.prototype.end runs for every response',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const undo = [wrap(nodeHttp.OutgoingMessage.prototype, 'end', log, 'end')];
      const server = http.createServer((req, res) => res.end('x'));
      serve(server, [GET('/')], log, done, { undo });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.equal(logs['node:http'][0], 'end x');
  });

test('a wrapper of writeHead alone sees the implicit head end() writes',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const undo = [wrap(nodeHttp.ServerResponse.prototype, 'writeHead', log, 'writeHead')];
      const server = http.createServer((req, res) => res.end('x'));
      serve(server, [GET('/')], log, done, { undo });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.equal(logs['node:http'][0], 'writeHead');
  });
