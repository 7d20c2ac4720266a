'use strict';
// A pipelined response ended before its turn holds its bytes as node's does: its
// writableLength (node's outputSize: each piece's `.length`, a string's UTF-16 units) and
// the connection's pending output, then the bytes on the wire in order once its turn comes.
const { test } = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const { both } = require('./helpers/both');

const BODIES = {
  '/ascii': ['hello', undefined],
  '/utf8': ['h\u00e9llo \u20ac', undefined],
  '/hex': ['68656c6c6f', 'hex'],
  '/buffer': [Buffer.from('h\u00e9llo'), undefined],
  '/chunked': ['h\u00e9llo', undefined],
  '/empty': ['', undefined],
};

function scenario(impl, log, done) {
  const held = [];
  const server = impl.createServer((req, res) => {
    if (req.url === '/first') {
      // The first response waits until every later one has ended.
      held.push(res);
      return;
    }
    const [body, encoding] = BODIES[req.url];
    if (req.url === '/chunked') res.setHeader('Transfer-Encoding', 'chunked');
    res.end(body, encoding);
    log.push(`${req.url} writableLength=${res.writableLength} finished=${res.writableFinished}`);
    if (held.length && req.url === '/empty') held[0].end('first');
  });
  server.listen(0, () => {
    const c = net.connect(server.address().port);
    let got = '';
    c.setEncoding('latin1');
    c.on('data', (d) => {
      got += d;
    });
    c.on('end', () => {
      const bodies = got.replace(/Date: [^\r]*\r\n/g, '');
      log.push(bodies);
      server.close(done);
    });
    const urls = ['/first', ...Object.keys(BODIES)];
    c.write(urls.map((u, i) => `GET ${u} HTTP/1.1\r\nHost: x\r\n${
      i === urls.length - 1 ? 'Connection: close\r\n' : ''}\r\n`).join(''));
  });
}

test('a response that waits its turn counts its bytes as node does', { timeout: 20000 },
  async () => {
    const logs = await both(scenario);
    assert.deepStrictEqual(logs['fast-http'], logs['node:http']);
  });
