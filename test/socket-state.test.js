'use strict';
// What an app reads off req.socket during a request, while the connection idles between
// requests and after it closed: node's socket is the spec (its `timeout` follows node's
// socket.setTimeout() calls for keep-alive, its own address and `bufferSize` go with the
// handle, `pending` turns true).
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { both } = require('./helpers/both');

const PROPS = [
  'timeout', 'pending', 'bufferSize', 'readyState', 'localAddress', 'localPort', 'localFamily',
  'remoteAddress', 'remoteFamily', 'connecting', 'destroyed',
];

function snapshot(label, socket) {
  const values = PROPS.map((p) => `${p}=${typeof socket[p] === 'number' && p.endsWith('Port') ? 'n' : socket[p]}`);
  const a = socket.address();
  return `${label}: ${values.join(' ')} address=${a.port === undefined ? '{}' : a.family}`;
}

test('req.socket during a request, idle between requests, and after close',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      let socket = null;
      const server = http.createServer((req, res) => {
        socket = req.socket;
        log.push(snapshot(`request ${req.url}`, socket));
        res.end('ok');
      });
      server.listen(0, '127.0.0.1', () => {
        const c = net.connect(server.address().port, '127.0.0.1');
        let got = '';
        let step = 0;
        c.setEncoding('latin1');
        c.on('data', (d) => {
          got += d;
          if (!got.endsWith('ok')) return;
          got = '';
          // The response's bytes came: node's server is past its resOnFinish by the next
          // macrotask (the client's read of them comes after the server's write).
          setImmediate(() => {
            log.push(snapshot(`idle after ${++step}`, socket));
            if (step === 1) {
              c.write('GET /second HTTP/1.1\r\nHost: x\r\n\r\n');
            } else {
              socket.on('close', () => {
                log.push(snapshot('closed', socket));
                server.close(done);
              });
              c.end();
            }
          });
        });
        c.write('GET /first HTTP/1.1\r\nHost: x\r\n\r\n');
      });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    // node's own answers, as the comparison above relies on them.
    assert.match(logs['node:http'][0], /timeout=undefined/);
    assert.match(logs['node:http'][1], /timeout=6000/);
    assert.match(logs['node:http'][2], /timeout=0/);
    assert.match(logs['node:http'].at(-1), /pending=true bufferSize=undefined .*localAddress=undefined/);
  });

test('server.timeout is what req.socket.timeout says on the next request, as on node',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      const server = http.createServer((req, res) => {
        log.push(`${req.url} timeout=${req.socket.timeout}`);
        res.end('ok');
      });
      server.timeout = 7000;
      server.keepAliveTimeout = 2000;
      server.listen(0, '127.0.0.1', () => {
        const c = net.connect(server.address().port, '127.0.0.1');
        let n = 0;
        c.setEncoding('latin1');
        c.on('data', (d) => {
          if (!d.endsWith('ok')) return;
          if (++n === 1) setImmediate(() => c.write('GET /2 HTTP/1.1\r\nHost: x\r\n\r\n'));
          else {
            c.destroy();
            server.close(done);
          }
        });
        c.write('GET /1 HTTP/1.1\r\nHost: x\r\n\r\n');
      });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.deepEqual(logs['node:http'], ['/1 timeout=7000', '/2 timeout=7000']);
  });

test('a response ended after the app ended its socket: node\'s outcome, no bytes',
  { timeout: 30000 }, async () => {
    const logs = await both((http, log, done) => {
      // Done once the client closed, the response closed and the request errored, as on node.
      let waiting = 3;
      const step = () => {
        if (--waiting === 0) server.close(done);
      };
      const server = http.createServer((req, res) => {
        res.on('finish', () => log.push('res finish'));
        res.on('close', () => {
          log.push('res close');
          step();
        });
        req.on('error', (e) => {
          log.push(`req error ${e.code}`);
          step();
        });
        req.socket.end();
        res.end('late', (e) => log.push(`end callback ${e && e.code}`));
      });
      server.listen(0, '127.0.0.1', () => {
        const c = net.connect(server.address().port, '127.0.0.1');
        let got = '';
        c.setEncoding('latin1');
        c.on('data', (d) => { got += d; });
        c.on('error', () => {});
        c.on('close', () => {
          log.push(`client got ${JSON.stringify(got)}`);
          step();
        });
        c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      });
    });
    assert.deepEqual(logs['fast-http'].toSorted(), logs['node:http'].toSorted());
    assert.ok(logs['node:http'].includes('client got ""'));
  });
