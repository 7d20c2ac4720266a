'use strict';
// Upgrade-socket server for bench/upgrade/run.js: `node server.js fast|node raw|ws`.
// raw: after the upgrade, each line "N" makes the server write N × 128-byte Buffers to the
// socket in one task. ws: each client message "go M" broadcasts M messages of 128 bytes to
// every connected ws client (the `ws` package's own send path).
const http = process.argv[2] === 'fast' ? require('../..') : require('node:http');
const mode = process.argv[3];

const FRAME = Buffer.alloc(128, 'x');
const fs = require('node:fs');

/** Write-class syscalls of this process: the addon's send() count for fast-http (syscw does
 * not see send()), /proc's syscw for node:http (libuv uses write/writev). */
function writeCalls() {
  if (process.argv[2] === 'fast') return require('../../lib/internal/native').binding.counters()[2];
  return Number(/^syscw:\s+(\d+)/m.exec(fs.readFileSync('/proc/self/io', 'utf8'))[1]);
}

/** Bursts per round: the round's time is their median, so a cold first run (caches, CPU
 * clock after the idle wait for the client) does not dominate. */
const REPS = 10;

/** Runs REPS bursts, each in its own task, and reports their median server-side time (from
 * the first write until the task's microtasks, where fast-http sends what it coalesced,
 * have run) and the write syscalls per burst. */
function burst(fn) {
  const times = [];
  const calls = writeCalls();
  const one = () => {
    const t0 = process.hrtime.bigint();
    fn();
    queueMicrotask(() => {
      times.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (times.length < REPS) {
        setImmediate(one);
        return;
      }
      times.sort((a, b) => a - b);
      setImmediate(() => process.send({
        us: times[REPS >> 1],
        calls: (writeCalls() - calls) / REPS,
      }));
    });
  };
  setImmediate(one);
}
const server = http.createServer((req, res) => res.end());

if (mode === 'raw') {
  server.on('upgrade', (req, socket) => {
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: bench\r\n\r\n');
    let pending = '';
    socket.on('data', (d) => {
      pending += d;
      let nl;
      while ((nl = pending.indexOf('\n')) !== -1) {
        const n = Number(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
        // Answer from a timer, not from the read callback: one plain JS task, as an app
        // pushing to a socket from elsewhere would.
        burst(() => {
          for (let i = 0; i < n; i++) socket.write(FRAME);
        });
      }
    });
  });
} else {
  const { WebSocketServer } = require('ws');
  const wss = new WebSocketServer({ server });
  // Binary frames: ws hands text payloads to socket.write() as strings, and string writes
  // are not coalesced (they flush what is held), as in Bun.
  const payload = FRAME;
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const m = Number(String(data).split(' ')[1]);
      burst(() => {
        for (let i = 0; i < m; i++) {
          for (const c of wss.clients) c.send(payload);
        }
      });
    });
  });
}

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${server.address().port}\n`);
});
