'use strict';
// DESIGN rule "Crossings": a GET whose handler calls res.end(body) without reading headers
// costs one native→JS call and one JS→native call, and a batch of them shares those calls
// (responses queued in JS, handed over once per batch). The addon counts both.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const fastHttp = require('..');
const { binding } = require('../lib/internal/native');

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

/** Sends `n` requests one after another on one keep-alive connection. */
function sequential(port, n, request) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.setTimeout(10000, () => reject(new Error('no response within 10 s')));
    let buf = '';
    let done = 0;
    const counts = [];
    sock.on('error', reject);
    sock.on('data', (d) => {
      buf += d;
      // Each response is complete when its body ('ok') has arrived.
      while (buf.includes('\r\n\r\nok')) {
        buf = buf.slice(buf.indexOf('\r\n\r\nok') + 6);
        counts.push(binding.counters());
        if (++done === n) {
          sock.end();
          resolve(counts);
        } else {
          sock.write(request);
        }
      }
    });
    sock.write(request);
  });
}

for (const [name, handler] of [
  ['res.end(string)', (req, res) => res.end('ok')],
  ['res.end(Buffer)', (req, res) => res.end(Buffer.from('ok'))],
  ['setHeader + res.end(string)', (req, res) => {
    res.setHeader('Content-Type', 'text/plain');
    res.end('ok');
  }],
  ['writeHead + res.end(string)', (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 2 });
    res.end('ok');
  }],
]) {
  test(`one crossing each way per response: ${name}`, async () => {
    const server = fastHttp.createServer(handler);
    const port = await listen(server);
    const counts = await sequential(port, 6, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    server.close();
    // The first request on a connection also sets the connection up; count the rest.
    for (let i = 2; i < counts.length; i++) {
      const toJs = counts[i][0] - counts[i - 1][0];
      const toNative = counts[i][1] - counts[i - 1][1];
      assert.deepEqual({ toJs, toNative }, { toJs: 1, toNative: 1 }, `request ${i}`);
    }
  });
}

test('the responses of one batch share one JS→native call', async () => {
  // On a connection that served two requests, eight pipelined requests in one write: one
  // read, one group of events, eight responses handed over together (issue #34 item 1).
  const server = fastHttp.createServer((req, res) => res.end('ok'));
  const port = await listen(server);
  const request = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';
  const [before, after] = await new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(request));
    sock.setTimeout(10000, () => reject(new Error('no response within 10 s')));
    let got = '';
    let counts = null;
    sock.on('error', reject);
    sock.on('data', (d) => {
      got += d;
      const n = got.split('\r\n\r\nok').length - 1;
      if (n === 1) {
        sock.write(request);
      } else if (n === 2 && counts === null) {
        counts = binding.counters();
        sock.write(request.repeat(8));
      } else if (n === 10) {
        sock.end();
        resolve([counts, binding.counters()]);
      }
    });
  });
  server.close();
  assert.deepEqual({ toJs: after[0] - before[0], toNative: after[1] - before[1] },
    { toJs: 1, toNative: 1 });
});

test('responses ended from a promise job are handed over by the batch', async () => {
  const server = fastHttp.createServer(async (req, res) => {
    await null;
    res.end('ok');
  });
  const port = await listen(server);
  const counts = await sequential(port, 4, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  server.close();
  const last = counts.length - 1;
  // The batch asks for what JS queued after its tick queue ran: one more call into JS.
  assert.equal(counts[last][0] - counts[last - 1][0], 2);
  assert.equal(counts[last][1] - counts[last - 1][1], 1);
});

test('one read(2) per request: a short read is not followed by a read that returns EAGAIN', async () => {
  const server = fastHttp.createServer((req, res) => res.end('ok'));
  const port = await listen(server);
  const counts = await sequential(port, 6, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  server.close();
  for (let i = 2; i < counts.length; i++) {
    assert.equal(counts[i][3] - counts[i - 1][3], 1, `request ${i}`);
  }
});

test('reading headers costs no extra crossing', async () => {
  const server = fastHttp.createServer((req, res) => res.end(req.headers.host ? 'ok' : 'no'));
  const port = await listen(server);
  const counts = await sequential(port, 4, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  server.close();
  const last = counts.length - 1;
  assert.equal(counts[last][0] - counts[last - 1][0], 1);
  assert.equal(counts[last][1] - counts[last - 1][1], 1);
});
