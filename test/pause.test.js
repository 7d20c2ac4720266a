'use strict';
// Pausing sockets, compared with node:http: a paused request socket stays paused until it
// is resumed (its first pause too); a paused upgraded socket keeps reading until its buffer
// is full, so it sees the peer's FIN ('end', then 'close') and server.close() completes.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { PassThrough } = require('node:stream');
const { both } = require('./helpers/both');

const UPGRADE = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n';

test('a request socket paused once stays paused until resumed', async () => {
  const logs = await both((impl, log, done) => {
    const server = impl.createServer((req, res) => {
      log.push(`request ${req.url}`);
      req.on('data', (d) => log.push(`body ${d.length}`));
      req.on('end', () => res.end('x'));
      if (req.url !== '/1') return;
      // Once the request is flowing, the first pause of its socket: the rest of its body
      // and the next request wait for resume().
      req.once('data', () => {
        req.socket.pause();
        setTimeout(() => {
          log.push('resume');
          req.socket.resume();
        }, 200);
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1', () => {
        client.write('POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345');
        setTimeout(() => client.write('67890GET /2 HTTP/1.1\r\nHost: x\r\n\r\n'), 80);
      });
      let responses = 0;
      client.on('data', (d) => {
        responses += d.toString().split('HTTP/1.1 200').length - 1;
        if (responses === 2) {
          client.destroy();
          server.close(done);
        }
      });
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.deepEqual(logs['node:http'], ['request /1', 'body 5', 'resume', 'body 5', 'request /2']);
});

for (const [how, flow, pause] of [
  ['directly', (socket, log) => socket.on('data', (d) => log.push(`data ${d}`)),
    (socket) => socket.pause()],
  ['through unpipe()', (socket, log) => {
    const sink = new PassThrough();
    sink.on('data', (d) => log.push(`data ${d}`));
    socket.pipe(sink);
    return sink;
  }, (socket, sink) => socket.unpipe(sink)],
]) {
  test(`an upgraded socket paused ${how} sees the peer's FIN and the server closes`,
    async () => {
      const logs = await both((impl, log, done) => {
        const server = impl.createServer();
        server.on('upgrade', (req, socket) => {
          socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
          // Paused once data has flowed (the FIN follows later).
          const sink = flow(socket, log);
          socket.once('data', () => setImmediate(() => {
            pause(socket, sink);
            log.push(`flowing ${socket.readableFlowing}`);
          }));
          socket.on('end', () => {
            log.push('end');
            socket.end();
          });
          socket.on('close', () => {
            log.push('close');
            server.close(() => {
              log.push('server closed');
              done();
            });
          });
        });
        server.listen(0, '127.0.0.1', () => {
          const client = net.connect(server.address().port, '127.0.0.1', () => {
            client.write(UPGRADE);
            setTimeout(() => client.write('abc'), 30);
            setTimeout(() => client.end(), 150);
          });
          client.resume();
        });
      });
      assert.deepEqual(logs['fast-http'], logs['node:http']);
      assert.deepEqual(logs['node:http'],
        ['data abc', 'flowing false', 'end', 'close', 'server closed']);
    });
}

test('a paused upgraded socket emits no data until resumed', async () => {
  const logs = await both((impl, log, done) => {
    const server = impl.createServer();
    server.on('upgrade', (req, socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
      socket.pause();
      socket.on('data', (d) => log.push(`data ${d}`));
      setTimeout(() => {
        log.push('resume');
        socket.resume();
        socket.end();
      }, 150);
      socket.on('close', () => server.close(done));
    });
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1', () => {
        client.write(UPGRADE);
        setTimeout(() => client.write('abc'), 30);
      });
      client.resume();
      client.on('end', () => client.end());
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.deepEqual(logs['node:http'], ['resume', 'data abc']);
});
