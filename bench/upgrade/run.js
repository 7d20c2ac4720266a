'use strict';
// Side-by-side benchmark of small writes on upgraded sockets (fast-http's write coalescing)
// and of a ws broadcast to 8 clients. Server pinned to CPU 0, this client to CPU 1; rounds
// alternate between servers; medians of the server's time per round (first write until the
// task's microtasks have run, i.e. including fast-http's coalesced send) and of its write
// syscalls per round. Every round also waits until the client has all the bytes.
//   node bench/upgrade/run.js [--rounds 30] [--quick]
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? def : Number(args[i + 1]);
};
const ROUNDS = opt('rounds', 30);
/** Bursts the server runs per round (server.js REPS). */
const REPS = 10;
const haveTaskset = !spawnSync('taskset', ['-V']).error;
if (haveTaskset) spawnSync('taskset', ['-pc', '1', String(process.pid)]);

function startServer(impl, mode) {
  const cmd = haveTaskset ? 'taskset' : process.execPath;
  const argv = [path.join(__dirname, 'server.js'), impl, mode];
  const full = haveTaskset ? ['-c', '0', process.execPath, ...argv] : argv;
  const child = spawn(cmd, full, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  child.reports = [];
  child.waiter = null;
  child.on('message', (m) => {
    child.reports.push(m);
    if (child.waiter) child.waiter();
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /READY (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`${impl} server exited ${code}`)));
  });
}

function report(child) {
  return new Promise((resolve) => {
    const check = () => {
      if (child.reports.length) {
        child.waiter = null;
        resolve(child.reports.shift());
      }
    };
    child.waiter = check;
    check();
  });
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function rawClient(port) {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  sock.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: bench\r\n\r\n');
  let buf = Buffer.alloc(0);
  let waiting = null;
  sock.on('data', (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    if (waiting) waiting();
  });
  const until = (pred) => new Promise((resolve) => {
    const check = () => {
      if (pred()) {
        waiting = null;
        resolve();
      }
    };
    waiting = check;
    check();
  });
  await until(() => buf.indexOf('\r\n\r\n') !== -1);
  buf = buf.subarray(buf.indexOf('\r\n\r\n') + 4);
  return {
    async round(n) {
      const want = n * 128 * REPS;
      sock.write(`${n}\n`);
      await until(() => buf.length >= want);
      buf = buf.subarray(want);
    },
    close: () => sock.destroy(),
  };
}

async function wsClients(port, count) {
  const WebSocket = require('ws');
  const clients = [];
  for (let i = 0; i < count; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
    await new Promise((r) => ws.once('open', r));
    clients.push(ws);
  }
  return {
    async round(m) {
      await Promise.all([
        ...clients.map((ws) => new Promise((resolve) => {
          let got = 0;
          const on = () => {
            if (++got === m * REPS) {
              ws.off('message', on);
              resolve();
            }
          };
          ws.on('message', on);
        })),
        Promise.resolve(clients[0].send(`go ${m}`)),
      ]);
    },
    close: () => clients.forEach((ws) => ws.terminate()),
  };
}

async function measure(mode, sizes) {
  const impls = ['fast', 'node'];
  const servers = {};
  const clients = {};
  for (const impl of impls) {
    servers[impl] = await startServer(impl, mode);
    clients[impl] = mode === 'raw' ? await rawClient(servers[impl].port)
      : await wsClients(servers[impl].port, 8);
  }
  const rows = [];
  for (const n of sizes) {
    const times = { fast: [], node: [] };
    const calls = { fast: [], node: [] };
    for (let r = 0; r < ROUNDS + 3; r++) {
      for (const impl of impls) {
        const { child } = servers[impl];
        await clients[impl].round(n);
        const { us, calls: c } = await report(child);
        if (r >= 3) {
          times[impl].push(us);
          calls[impl].push(c);
        }
      }
    }
    rows.push({
      n,
      fastUs: median(times.fast),
      nodeUs: median(times.node),
      fastCalls: median(calls.fast),
      nodeCalls: median(calls.node),
    });
    process.stderr.write('.');
  }
  for (const impl of impls) {
    clients[impl].close();
    servers[impl].child.kill();
  }
  process.stderr.write('\n');
  return rows;
}

function table(title, unit, rows) {
  console.log(`\n${title}`);
  console.log(`${unit.padStart(6)}  fast-http µs  node:http µs  speedup  write syscalls (fast / node)`);
  for (const r of rows) {
    console.log(`${String(r.n).padStart(6)}  ${r.fastUs.toFixed(1).padStart(12)}  ` +
      `${r.nodeUs.toFixed(1).padStart(12)}  ${(r.nodeUs / r.fastUs).toFixed(2).padStart(6)}×  ` +
      `${r.fastCalls} / ${r.nodeCalls}`);
  }
}

(async () => {
  console.log(`upgraded-socket writes, ${ROUNDS} rounds per size, medians; node ${process.version}` +
    `${haveTaskset ? ', server on CPU 0, client on CPU 1' : ', unpinned (no taskset)'}`);
  const raw = await measure('raw', [1, 16, 64, 256]);
  table('N × socket.write(128 B) in one task: server time per round', 'N', raw);
  const ws = await measure('ws', [1, 16, 64]);
  table('ws broadcast: M × 128 B messages to each of 8 clients', 'M', ws);
  const out = path.join(__dirname, '..', 'results', 'upgrade-latest.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), node: process.version,
    rounds: ROUNDS, raw, ws }, null, 2));
  console.log(`\nJSON: ${path.relative(process.cwd(), out)}`);
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
