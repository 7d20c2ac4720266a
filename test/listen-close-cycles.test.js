'use strict';
// A server's listen/close cycle (a test suite or a CLI starting a server per case): nothing is
// left behind, and one server object can be listened on, closed and listened on again in
// every way node:http allows, with the same events.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const { both } = require('./helpers/both');
const fastHttp = require('..');

function openFds() {
  return fs.readdirSync('/proc/self/fd').length;
}

function listen(server, ...args) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, ...args, () => {
      server.removeListener('error', reject);
      resolve(server.address().port);
    });
  });
}

function close(server) {
  return new Promise((resolve) => server.close(resolve));
}

function get(port, path) {
  return new Promise((resolve, reject) => {
    const c = net.connect(port, '127.0.0.1');
    let buf = '';
    c.setEncoding('latin1');
    c.on('error', reject);
    c.on('data', (d) => {
      buf += d;
    });
    c.on('end', () => resolve(buf.slice(buf.indexOf('\r\n\r\n') + 4)));
    c.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  });
}

test('200 listen/close cycles leave no descriptor behind', { timeout: 60000 },
  { skip: process.platform !== 'linux' }, async () => {
    for (const host of [undefined, '127.0.0.1']) {
      // Warm-up: the addon's poll set and timers are made on first use.
      const warm = fastHttp.createServer();
      await listen(warm, host);
      await close(warm);
      const before = openFds();
      for (let i = 0; i < 200; i++) {
        const s = fastHttp.createServer();
        await listen(s, host);
        await close(s);
      }
      assert.equal(openFds(), before, `host ${host}`);
    }
  });

test('one server listened on, closed and listened on again serves each time, as node:http',
  { timeout: 30000 }, async () => {
    const logs = await both(async (http, log, done) => {
      const server = http.createServer((req, res) => res.end(req.url));
      server.on('close', () => log.push('close'));
      for (let i = 0; i < 3; i++) {
        const port = await listen(server, '127.0.0.1');
        log.push(`listening ${server.listening}`);
        log.push(await get(port, `/${i}`));
        await close(server);
        log.push(`closed ${server.listening} ${server.address()}`);
      }
      done();
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
  });

test('a listen that fails, then one that works, on the same server, as node:http',
  { timeout: 30000 }, async () => {
    const holder = net.createServer();
    await new Promise((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = holder.address().port;
    const logs = await both((http, log, done) => {
      const server = http.createServer((req, res) => res.end('ok'));
      server.once('error', (err) => {
        log.push(`error ${err.code} ${server.listening}`);
        server.listen(0, '127.0.0.1', async () => {
          log.push(await get(server.address().port, '/'));
          server.close(() => {
            log.push('closed');
            done();
          });
        });
      });
      server.listen(taken, '127.0.0.1');
    });
    holder.close();
    assert.deepEqual(logs['fast-http'], logs['node:http']);
  });

test('close() with a request in flight: \'close\' once it is answered, then a new listen serves',
  { timeout: 30000 }, async () => {
    const logs = await both(async (http, log, done) => {
      const server = http.createServer((req, res) => {
        if (req.url !== '/slow') {
          res.end(req.url);
          return;
        }
        server.close(async () => {
          log.push('closed');
          const again = await listen(server, '127.0.0.1');
          log.push(await get(again, '/c'));
          server.close(done);
        });
        log.push(`listening ${server.listening}`);
        setImmediate(() => res.end('slow'));
      });
      const port = await listen(server, '127.0.0.1');
      log.push(await get(port, '/slow'));
    });
    assert.deepEqual(logs['fast-http'].sort(), logs['node:http'].sort());
  });

test('a server never listened on closes with ERR_SERVER_NOT_RUNNING and reports no connections',
  { timeout: 10000 }, async () => {
    const logs = await both((http, log, done) => {
      const server = http.createServer();
      server.closeIdleConnections();
      server.closeAllConnections();
      server.getConnections((err, n) => {
        log.push(`connections ${err} ${n}`);
        server.close((e) => {
          log.push(e?.code);
          done();
        });
      });
    });
    assert.deepEqual(logs['fast-http'], logs['node:http']);
  });
