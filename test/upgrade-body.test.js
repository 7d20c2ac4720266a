'use strict';
// Upgrade requests with a body, against node:http on the running Node. Up to Node 24 the
// body is part of the upgrade's `head`; Node 26 reads it through `req` and emits 'upgrade'
// with the socket when the body came whole with the head, else with an UpgradeStream whose
// bytes start after the body.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { both } = require('./helpers/both');
const { trackConnections, sendPieces } = require('./helpers/server-read');

const HEAD = 'POST /u HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: foo\r\n';

/**
 * A server whose 'upgrade' handler logs what it gets and echoes the protocol's bytes with a
 * prefix; the client sends `writes`, each once the server has read the one before (so each is
 * one read on both servers), then ends. `readReq`: the handler reads the
 * body (else only the upgrade stream is read, which must start the body flowing).
 */
function scenario(writes, { readReq = true, serverOptions = {}, callback } = {}) {
  return (impl, log, done) => {
    const server = impl.createServer(serverOptions, (req, res) => {
      log.push(`request ${req.method}`);
      req.resume();
      res.end('plain');
    });
    if (callback) server.shouldUpgradeCallback = callback;
    const connections = trackConnections(server);
    server.on('upgrade', (req, stream, head) => {
      log.push(`upgrade complete=${req.complete} head=${JSON.stringify(String(head))} ` +
        `socket=${stream === req.socket} duplex=${typeof stream.write === 'function'}`);
      if (readReq) {
        req.on('data', (d) => log.push(`req data ${d}`));
        req.on('end', () => log.push('req end'));
      }
      stream.on('data', (d) => {
        log.push(`stream data ${d}`);
        stream.write(`echo:${d};`);
      });
      stream.on('end', () => {
        log.push('stream end');
        stream.end('bye');
      });
      stream.on('error', (e) => log.push(`stream error ${e.code}`));
    });
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1');
      sendPieces(connections, client, writes, { end: true });
      let got = '';
      client.setEncoding('latin1');
      client.on('data', (d) => {
        got += d;
      });
      client.on('error', () => {});
      client.on('close', () => {
        log.push(`client got ${JSON.stringify(got.replace(/Date: .*\r\n/, ''))}`);
        server.close(done);
      });
    });
  };
}

const cases = {
  'Content-Length body in pieces, protocol bytes after it':
    scenario([`${HEAD}Content-Length: 5\r\n\r\nhel`, 'loEXTRA', 'MORE']),
  'Content-Length body whole with the head':
    scenario([`${HEAD}Content-Length: 5\r\n\r\nhelloEXTRA`, 'MORE']),
  'chunked body over three writes':
    scenario([`${HEAD}Transfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n`, '2\r\nlo\r\n', '0\r\n\r\nEXTRA']),
  'the app reads only the upgrade stream':
    scenario([`${HEAD}Content-Length: 5\r\n\r\nhe`, 'lloEXTRA'], { readReq: false }),
  'the peer ends inside the body':
    scenario([`${HEAD}Content-Length: 50\r\n\r\nhel`]),
  'no body: the rest of the read is the head':
    scenario([`${HEAD}\r\nEXTRA`, 'MORE']),
};
if (typeof require('node:http').Server.prototype.shouldUpgradeCallback === 'function' ||
    'shouldUpgradeCallback' in new (require('node:http').Server)()) {
  cases['shouldUpgradeCallback says yes, body in pieces'] =
    scenario([`${HEAD}Content-Length: 5\r\n\r\nhel`, 'loEXTRA'], { callback: () => true });
  cases['shouldUpgradeCallback says yes, body whole'] =
    scenario([`${HEAD}Content-Length: 5\r\n\r\nhelloEXTRA`, 'MORE'], { callback: () => true });
}

for (const [name, run] of Object.entries(cases)) {
  test(name, { timeout: 30000 }, async () => {
    const logs = await both(run);
    assert.deepEqual(logs['fast-http'], logs['node:http']);
  });
}
