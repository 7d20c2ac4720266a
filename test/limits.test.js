'use strict';
// Limits against slow and greedy clients, compared with node:http on the running Node:
// headersTimeout and requestTimeout against clients that send a byte at a time,
// maxHeadersCount, and server.maxConnections ('drop'). Each scenario logs what the client
// and the server saw; the logs must be equal. No timing is asserted: timeouts are short
// so a scenario ends quickly, and only what happened and in which order is compared.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { both } = require('./helpers/both');

/**
 * A client that sends `head`, then `drip` one byte every `every` ms until the server ends;
 * `onText(text)` sees what it has received so far.
 */
function dripClient(port, head, drip, every, log, done, onText = () => {}) {
  const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
  let text = '';
  let i = 0;
  const timer = setInterval(() => {
    if (i < drip.length && !socket.destroyed) socket.write(drip[i++]);
  }, every);
  socket.on('data', (d) => {
    text += d;
    onText(text);
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    clearInterval(timer);
    log.push(`client got ${JSON.stringify(text.replace(/Date: .*\r\n/, ''))}`);
    done();
  });
}

const TIMEOUTS = { headersTimeout: 400, requestTimeout: 800, connectionsCheckingInterval: 50 };

for (const [name, head, drip] of [
  ['headersTimeout ends a request whose head comes a byte at a time',
    'GET / HTTP/1.1\r\n', 'Host: x\r\nX-Slow: ' + 'a'.repeat(200)],
  ['requestTimeout ends a request whose body comes a byte at a time',
    'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n', 'b'.repeat(500)],
]) {
  test(name, async () => {
    const logs = await both((impl, log, done) => {
      const server = impl.createServer(TIMEOUTS, (req, res) => {
        log.push(`request ${req.method}`);
        req.on('data', () => {});
        req.on('end', () => res.end('done'));
      });
      server.on('clientError', (err, socket) => {
        // What follows the timeout (bytes still dripping in, the peer's FIN) races the
        // client's reaction to the 408: only the timeout itself is compared.
        if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') log.push(`clientError ${err.code}`);
        socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
        socket.destroySoon();
      });
      server.listen(0, '127.0.0.1', () => {
        dripClient(server.address().port, head, drip, 100, log, () => server.close(done));
      });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
    assert.ok(logs['node:http'].includes('clientError ERR_HTTP_REQUEST_TIMEOUT'));
  });
}

test('maxHeadersCount: the first headers (Node 20), HPE_HEADER_OVERFLOW past it (Node 22+)', async () => {
  const logs = await both((impl, log, done) => {
    const server = impl.createServer((req, res) => {
      log.push(JSON.stringify(req.rawHeaders), JSON.stringify(req.headers));
      res.end('ok');
    });
    server.maxHeadersCount = 3;
    server.on('clientError', (err, socket) => {
      log.push(`clientError ${err.code}`);
      socket.destroy();
    });
    server.listen(0, '127.0.0.1', () => {
      const head = 'GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n';
      // Node 20 answers and keeps the connection: it is closed once the answer is in.
      dripClient(server.address().port, head, '', 1000, log, () => server.close(done),
        (text) => text.endsWith('ok') && server.closeAllConnections());
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});

test('server.maxConnections closes the connection over the limit and emits drop', async () => {
  const logs = await both((impl, log, done) => {
    const server = impl.createServer((req, res) => res.end('ok'));
    server.maxConnections = 1;
    server.on('drop', (data) => {
      log.push(`drop ${Object.keys(data).join(',')} ${data.localAddress} ${data.remoteFamily}`);
    });
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      const first = net.connect(port, '127.0.0.1');
      first.on('connect', () => {
        const second = net.connect(port, '127.0.0.1');
        second.on('error', () => {});
        second.on('close', () => {
          log.push('second closed');
          first.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        });
      });
      let text = '';
      first.on('data', (d) => {
        text += d;
      });
      first.on('close', () => {
        log.push(`first got ${text.split('\r\n')[0]}`);
        server.close(done);
      });
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.equal(logs['node:http'][0], 'drop localAddress,localPort,localFamily,remoteAddress,remotePort,remoteFamily 127.0.0.1 IPv4');
});

test('server.maxConnections of 0, negative, null, a string: dropped or served as net decides', async () => {
  const logs = await both(async (impl, log, done) => {
    for (const limit of [0, -1, null, undefined, '1', 0.5, NaN]) {
      await new Promise((resolve) => {
        const server = impl.createServer((req, res) => res.end('ok'));
        server.maxConnections = limit;
        server.on('drop', () => log.push(`${limit}: drop`));
        server.listen(0, '127.0.0.1', () => {
          const client = net.connect(server.address().port, '127.0.0.1');
          client.on('error', () => {});
          let text = '';
          client.on('data', (d) => {
            text += d;
          });
          client.on('close', () => {
            log.push(`${limit}: got ${JSON.stringify(text.split('\r\n')[0])}`);
            server.close(resolve);
          });
          client.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        });
      });
    }
    done();
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
});
