'use strict';
// Pausing sockets, compared with node:http: a paused request socket stays paused until it
// is resumed (its first pause too); a paused upgraded socket keeps reading until its buffer
// is full, so it sees the peer's FIN ('end', then 'close') and server.close() completes.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { PassThrough } = require('node:stream');
const { both } = require('./helpers/both');
const { trackConnections, sendPieces, waitForRead } = require('./helpers/server-read');

const UPGRADE = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n';

test('a request socket paused once stays paused until resumed', { timeout: 30000 }, async () => {
  const logs = await both((impl, log, done) => {
    // The client sends the rest once the server has read (and paused at) the first piece;
    // the server resumes once that rest is on its way.
    let restSent;
    const rest = new Promise((resolve) => {
      restSent = resolve;
    });
    const server = impl.createServer((req, res) => {
      log.push(`request ${req.url}`);
      req.on('data', (d) => log.push(`body ${d.length}`));
      req.on('end', () => res.end('x'));
      if (req.url !== '/1') return;
      // Once the request is flowing, the first pause of its socket: the rest of its body
      // and the next request wait for resume().
      req.once('data', () => {
        req.socket.pause();
        rest.then(() => {
          log.push('resume');
          req.socket.resume();
        });
      });
    });
    const connections = trackConnections(server);
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1', async () => {
        const first = 'POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345';
        client.write(first);
        await waitForRead(await connections.of(client), first.length);
        client.write('67890GET /2 HTTP/1.1\r\nHost: x\r\n\r\n', () => setImmediate(restSent));
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
    { timeout: 30000 }, async () => {
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
        // The protocol bytes and then the FIN each once the server has read what came
        // before: 'abc' is data (not the upgrade's head) and the FIN comes after the pause.
        const connections = trackConnections(server);
        server.listen(0, '127.0.0.1', () => {
          const client = net.connect(server.address().port, '127.0.0.1');
          sendPieces(connections, client, [UPGRADE, 'abc'], { end: true });
          client.resume();
        });
      });
      assert.deepEqual(logs['fast-http'], logs['node:http']);
      assert.deepEqual(logs['node:http'],
        ['data abc', 'flowing false', 'end', 'close', 'server closed']);
    });
}

test('a paused upgraded socket emits no data until resumed', { timeout: 30000 }, async () => {
  const logs = await both((impl, log, done) => {
    // A paused upgraded socket still reads into its buffer: it resumes once it has read
    // 'abc', which the client sends once the server has read the upgrade request.
    let abcRead;
    const read = new Promise((resolve) => {
      abcRead = resolve;
    });
    const server = impl.createServer();
    server.on('upgrade', (req, socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
      socket.pause();
      socket.on('data', (d) => log.push(`data ${d}`));
      read.then(() => {
        log.push('resume');
        socket.resume();
        socket.end();
      });
      socket.on('close', () => server.close(done));
    });
    const connections = trackConnections(server);
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1');
      sendPieces(connections, client, [UPGRADE, 'abc']).then(abcRead);
      client.resume();
      client.on('end', () => client.end());
    });
  });
  assert.deepEqual(logs['fast-http'], logs['node:http']);
  assert.deepEqual(logs['node:http'], ['resume', 'data abc']);
});
