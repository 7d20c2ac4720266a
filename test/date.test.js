'use strict';
// The Date header comes from a line the addon caches and re-reads the clock for once per
// event batch (and on every call from outside a batch): a response sent later from a timer
// must carry the time it was sent, not the time of the last batch that wrote a response.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const fastHttp = require('..');

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

test('Date is current for a response sent from a timer after a batch that wrote one', async () => {
  let sentAt;
  const server = fastHttp.createServer((req, res) => {
    if (req.url === '/now') res.end('now');
    else {
      setTimeout(() => {
        sentAt = Date.now();
        res.end('later');
      }, 1500);
    }
  });
  const port = await listen(server);
  const sock = net.connect(port, '127.0.0.1');
  sock.setEncoding('latin1');
  try {
    // Both requests arrive in one read: the first is answered in that batch (the clock is
    // read then), the second 1.5 s later from a timer, with no event batch in between.
    const dates = await new Promise((resolve, reject) => {
      let buf = '';
      sock.on('error', reject);
      sock.on('data', (d) => {
        buf += d;
        if (buf.endsWith('later')) {
          resolve([...buf.matchAll(/\r\nDate: ([^\r]+)\r\n/g)].map((m) => Date.parse(m[1])));
        }
      });
      sock.write('GET /now HTTP/1.1\r\nHost: x\r\n\r\nGET /later HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    assert.equal(dates.length, 2);
    // One-second resolution: the send's own second at least, where the line cached for the
    // first response would be 1.5 s older. Measured at the send, not at the client's read,
    // which a busy machine can delay.
    assert.ok(dates[1] >= Math.floor(sentAt / 1000) * 1000,
      `Date ${new Date(dates[1]).toUTCString()} sent at ${new Date(sentAt).toISOString()}`);
    assert.ok(dates[1] - dates[0] >= 1000);
  } finally {
    sock.destroy();
    server.close();
  }
});
