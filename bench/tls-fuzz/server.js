'use strict';
// The fuzzed server: node:https's API (fast-http's, or node's with argv[2] 'node'), answering
// /ping with pong and /echo with the byte count of its body; tells its parent its port, then
// on 'stats' its open connections, descriptors, RSS and event counts.
const fs = require('node:fs');
const path = require('node:path');

const impl = process.argv[2] === 'node' ? require('node:https') : require('../..').https;
const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'tls');
const read = (name) => fs.readFileSync(path.join(fixtures, name));
const counts = { tlsClientErrors: 0, clientErrors: 0, requests: 0, codes: {} };
const server = impl.createServer({
  key: read('server-ecdsa-key.pem'),
  cert: read('server-ecdsa-cert.pem'),
  ALPNProtocols: ['http/1.1'],
}, (req, res) => {
  counts.requests++;
  if (req.url === '/ping') return res.end('pong');
  let n = 0;
  req.on('data', (d) => { n += d.length; });
  req.on('end', () => res.end(String(n)));
});
server.on('tlsClientError', (err) => {
  counts.tlsClientErrors++;
  counts.codes[err.code] = (counts.codes[err.code] || 0) + 1;
});
server.on('clientError', (err, socket) => {
  counts.clientErrors++;
  socket.destroy();
});
server.listen(0, '127.0.0.1', () => process.send(server.address().port));
process.on('message', () => {
  server.getConnections((err, connections) => {
    process.send({
      ...counts,
      connections: err ? -1 : connections,
      fds: fs.readdirSync('/proc/self/fd').length,
      rss: process.memoryUsage.rss(),
    });
  });
});
process.on('disconnect', () => process.exit());
