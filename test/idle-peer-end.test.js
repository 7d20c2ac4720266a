'use strict';
// An idle keep-alive connection the client ends (FIN): node's server socket has its
// socketOnEnd 'end' listener from the connection on, which ends the socket's writable side
// (httpAllowHalfOpen is false), so 'finish' comes and writableEnded / writableFinished are
// true at 'close'. Before, fast-http's socket went from 'end' to 'close' with both false.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const tls = require('node:tls');
const nodeHttps = require('node:https');
const { both } = require('./helpers/both');
const fixtures = require('./helpers/tls-fixtures');
const fastHttp = require('..');

for (const scheme of ['http', 'https']) {
  test(`${scheme}: the peer's FIN on an idle keep-alive connection ends the socket as node's does`,
    { timeout: 30000 }, async () => {
      const logs = await both((http, log, done) => {
        const impl = scheme === 'http' ? http : http === fastHttp ? fastHttp.https : nodeHttps;
        const options = scheme === 'http' ? {} : { key: fixtures.key, cert: fixtures.cert };
        let client;
        const server = impl.createServer(options, (req, res) => {
          const s = req.socket;
          res.end('ok', () => {
            for (const e of ['end', 'prefinish', 'finish', 'close']) {
              s.on(e, () => log.push(`${e}: writableEnded ${s.writableEnded} writableFinished ${
                s.writableFinished} readableEnded ${s.readableEnded} destroyed ${s.destroyed}`));
            }
            s.on('close', () => server.close(done));
            client.end();
          });
        });
        server.listen(0, '127.0.0.1', () => {
          const port = server.address().port;
          const send = () => client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
          client = scheme === 'http' ? net.connect(port, '127.0.0.1', send) :
            tls.connect({ port, host: '127.0.0.1', ca: fixtures.ca, servername: 'localhost' }, send);
          client.resume();
        });
      });
      assert.deepEqual(logs['fast-http'], logs['node:http']);
      assert.ok(logs['node:http'].includes(
        'close: writableEnded true writableFinished true readableEnded true destroyed true'));
    });
}
