'use strict';
// A request the app answers without reading is dumped after its response (node's resOnFinish
// calls req._dump()): the rest of its body is dropped, nothing more reaches 'data', and the
// next request on the connection gets its own body. fast-http drops those pieces natively;
// what the app sees must stay node:http's.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { both } = require('./helpers/both');
const { trackConnections, sendPieces } = require('./helpers/server-read');

function scenario(writes) {
  return (impl, log, done) => {
    const server = impl.createServer((req, res) => {
      log.push(`request ${req.url}`);
      if (req.url === '/ignored') {
        res.end('ok');
        res.on('finish', () => {
          log.push(`dumped=${req._dumped}`);
          req.on('data', (d) => log.push(`late data ${d.length}`));
        });
        req.on('end', () => log.push(`end ${req.url} complete=${req.complete}`));
        req.on('close', () => log.push(`close ${req.url}`));
        return;
      }
      let body = '';
      req.setEncoding('latin1');
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        log.push(`read ${req.url} ${JSON.stringify(body)}`);
        res.end('read');
      });
    });
    // Each write is sent once the server has read the one before, so each is its own read.
    const connections = trackConnections(server);
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1');
      sendPieces(connections, client, writes, { end: true });
      let got = '';
      client.setEncoding('latin1');
      client.on('data', (d) => {
        got += d;
      });
      client.on('close', () => {
        log.push(`responses ${(got.match(/HTTP\/1\.1 200/g) || []).length}`);
        server.close(done);
      });
    });
  };
}

const ignored = (n) => `POST /ignored HTTP/1.1\r\nHost: x\r\nContent-Length: ${n}\r\n\r\n`;
const read = 'POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello';

test('a body sent after the response is dropped, the next request reads its own', { timeout: 30000 }, async () => {
  const logs = await both(scenario([ignored(30000), 'a'.repeat(10000), 'b'.repeat(10000),
    'c'.repeat(10000) + read]));
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.ok(logs['node:http'].includes('read /read "hello"'), logs['node:http'].join('; '));
});

test('a chunked body after the response, then another request', { timeout: 30000 }, async () => {
  const logs = await both(scenario([
    'POST /ignored HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n',
    '6\r\nsecond\r\n', `0\r\n\r\n${read}`]));
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});
