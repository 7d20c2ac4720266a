'use strict';
// What an app (or a logger, an APM agent) reads off req and res in the handler, at 'finish',
// at 'close' and after it: node's values, property by property, for the common kinds of
// request. Some are node's internals (`_consuming`, `_last`, ...) that middleware reads too.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { both } = require('./helpers/both');

const REQ = [
  'complete', 'aborted', 'readable', 'readableEnded', 'readableFlowing', 'destroyed', 'closed',
  'httpVersion', 'method', 'url', 'upgrade', 'readableLength', 'errored', '_dumped',
  '_consuming', 'statusCode', 'statusMessage', 'readableHighWaterMark', 'readableObjectMode',
  'readableAborted', 'readableDidRead', 'readableEncoding', 'joinDuplicateHeaders',
];
const RES = [
  'statusCode', 'statusMessage', 'headersSent', 'finished', 'writableEnded', 'writableFinished',
  'writable', 'destroyed', 'closed', 'writableLength', 'writableHighWaterMark', 'writableCorked',
  'writableNeedDrain', 'sendDate', 'chunkedEncoding', 'shouldKeepAlive',
  'useChunkedEncodingByDefault', 'strictContentLength', '_last', '_hasBody', '_contentLength',
  '_removedConnection', '_removedContLen', '_removedTE', '_headerSent', '_trailer',
  '_expect_continue', 'errored', '_closed', 'outputSize',
];

const snap = (label, o, names) => `${label} ${names.map((p) => `${p}=${String(o[p])}`).join(' ')}`;

const CASES = [
  ['GET', 'GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n', (req, res) => res.end('hi')],
  ['POST read', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc', (req, res) => {
    req.on('data', () => {});
    req.on('end', () => res.end('hi'));
  }],
  ['POST unread', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc', (req, res) => res.end('hi')],
  ['HEAD', 'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n', (req, res) => {
    res.writeHead(200, { 'content-length': 5 });
    res.end();
  }],
  ['chunked', 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', (req, res) => {
    res.write('a');
    res.end('b');
  }],
  ['HTTP/1.0', 'GET / HTTP/1.0\r\n\r\n', (req, res) => res.end('hi')],
];

for (const [name, text, handler] of CASES) {
  test(`req and res as node's through a response's life: ${name}`, { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const server = http.createServer((req, res) => {
        const record = (at) => log.push(snap(`req@${at}`, req, REQ), snap(`res@${at}`, res, RES));
        record('handler');
        res.on('finish', () => record('finish'));
        res.on('close', () => {
          record('close');
          setImmediate(() => {
            record('later');
            client.destroy();
            server.close(done);
          });
        });
        handler(req, res);
      });
      let client;
      server.listen(0, '127.0.0.1', () => {
        client = net.connect(server.address().port, '127.0.0.1', () => client.write(text));
        client.resume();
        client.on('error', () => {});
      });
    });
    assert.equal(logs['fast-http'].length, 8);
    for (let i = 0; i < 8; i++) assert.equal(logs['fast-http'][i], logs['node:http'][i]);
  });
}
