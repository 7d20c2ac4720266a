'use strict';

// Memory-workload client (forked by bench/run.js with IPC, pinned to the
// load-generator CPU): opens N keep-alive connections to 127.0.0.1:<port>,
// does one GET on each so the server has fully set the connection up, then
// holds them idle while the runner reads the server's RSS.
// Messages in: 'count' -> {type:'count', open}; 'close' -> reset all, exit.
// Messages out: {type:'held', open, failed, firstError}.

const net = require('node:net');
const { parseResponse } = require('./http-check');

const port = Number(process.argv[2]);
const total = Number(process.argv[3] || 5000);
// argv[4] 'tls': connect with TLS (the https-idle row), trusting the bench CA.
const useTls = process.argv[4] === 'tls';
const tlsOptions = useTls && {
  ca: require('node:fs').readFileSync(require('node:path').join(__dirname, '..', '..', 'test', 'fixtures',
    'tls', 'ca-cert.pem')),
  servername: 'localhost',
};
// Bounded concurrency keeps connect bursts under the listen backlog (511 for
// node:http) so no SYNs are dropped and retried after a 1 s RTO.
const PARALLEL = 200;
const request = `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;

const sockets = new Set();
let started = 0;
let finished = 0;
let failed = 0;
let firstError = null;

function openOne() {
  started++;
  const socket = useTls ? require('node:tls').connect({ host: '127.0.0.1', port, ...tlsOptions }) :
    net.connect({ host: '127.0.0.1', port });
  let buf = Buffer.alloc(0);
  let settled = false;
  const settle = (err) => {
    if (settled) return;
    settled = true;
    if (err) {
      failed++;
      firstError = firstError || String(err.message || err);
      socket.destroy();
    }
    finished++;
    if (started < total) openOne();
    else if (finished === total) {
      process.send({ type: 'held', open: sockets.size, failed, firstError });
    }
  };
  socket.setTimeout(20000, () => settle(new Error('timeout waiting for response')));
  socket.on(useTls ? 'secureConnect' : 'connect', () => socket.write(request));
  socket.on('data', (chunk) => {
    if (settled) return;
    buf = Buffer.concat([buf, chunk]);
    try {
      const res = parseResponse(buf);
      if (!res) return;
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      socket.setTimeout(0);
      sockets.add(socket);
      settle();
    } catch (err) {
      settle(err);
    }
  });
  socket.on('error', (err) => settle(err));
  socket.on('close', () => {
    sockets.delete(socket);
    settle(new Error('closed before response'));
  });
}

process.on('message', (msg) => {
  if (msg === 'count') process.send({ type: 'count', open: sockets.size });
  if (msg === 'close') {
    // RST instead of FIN: no TIME_WAIT pile-up across repeated samples.
    for (const s of sockets) s.resetAndDestroy();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));

for (let i = 0; i < Math.min(PARALLEL, total); i++) openOne();
