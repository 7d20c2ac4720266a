'use strict';
// The server side of bench/abuse/run.js: `node server.js <node|fast> <workload>`. Prints
// `READY <port>`; answers GET / with "ok"; for the backlog workloads, GET /backlog writes
// BACKLOG_MIB MiB in 64 KiB pieces without waiting for backpressure, then ends.
const path = require('node:path');

const [impl, workload] = process.argv.slice(2);
const http = impl === 'fast' ? require(path.join(__dirname, '..', '..')) : require('node:http');
const MIB = 1024 * 1024;
const TOTAL = Number(process.env.BACKLOG_MIB || 500) * MIB;
const PIECE = 64 * 1024;
const same = Buffer.alloc(PIECE, 97);
const text = 'a'.repeat(PIECE);

const server = http.createServer({ headersTimeout: 600000, requestTimeout: 0 }, (req, res) => {
  if (req.url !== '/backlog') {
    res.end('ok');
    return;
  }
  res.setHeader('Content-Length', TOTAL);
  for (let sent = 0; sent < TOTAL; sent += PIECE) {
    if (workload === 'backlog-same') res.write(same);
    else if (workload === 'backlog-new') res.write(Buffer.alloc(PIECE, 97));
    else res.write(text);
  }
  res.end();
});
server.keepAliveTimeout = 600000;
server.listen(0, '127.0.0.1', () => console.log(`READY ${server.address().port}`));
