'use strict';
// TLS fuzzing, end to end: an https server (fast-http's, or node's with --server node) in its
// own process takes, from several clients at once and for --seconds, connections that send
//   hello:    a real ClientHello (TLS 1.3 / 1.2, SNI, ALPN, a resumption ticket) damaged:
//             bits flipped, bytes dropped, repeated or inserted, lengths made huge or zero,
//             truncated; sent in random pieces, then closed, reset, half-closed or left open;
//   records:  a real handshake, then damaged or random records on the raw socket (a record
//             the session cannot decrypt, an alert, a renegotiating ClientHello, garbage);
//   split:    a real handshake, then an HTTP request written in random pieces, whose
//             response must come whole (nothing lost);
//   noise:    random bytes.
// Every second a plain request on a fresh connection must be answered. At the end every
// connection must be gone (getConnections() 0), the server's open descriptors back to where
// they started and the process alive; its RSS growth is reported. A failure prints the seed
// and the kind of case that found it; `--seed N` draws the same cases (in the same order with
// `--clients 1`; with more, their interleaving follows the machine's timing).
//   npm run bench -- tls-fuzz, or node bench/tls-fuzz/run.js [--seconds 180] [--seed N] [--clients 8] [--server fast|node]
//                              [--cases hello,records,split,noise] (repeat a kind to weigh it)
const { fork } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const tls = require('node:tls');

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? def : args[i + 1];
};
const SECONDS = Number(opt('seconds', 180));
const SEED = Number(opt('seed', Math.floor(Math.random() * 2 ** 31)));
const CLIENTS = Number(opt('clients', 8));
const SERVER = opt('server', 'fast');
const KINDS = opt('cases', 'hello,hello,hello,records,records,split,noise').split(',');
const FIXTURES = path.join(__dirname, '..', '..', 'test', 'fixtures', 'tls');
const CA = fs.readFileSync(path.join(FIXTURES, 'ca-cert.pem'));

// xorshift32: the same seed gives the same cases.
let state = SEED || 1;
function rand() {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 2 ** 32;
}
const int = (n) => Math.floor(rand() * n);
const pick = (list) => list[int(list.length)];

function startServer() {
  const child = fork(path.join(__dirname, 'server.js'), [SERVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const replies = [];
  child.on('message', (m) => replies.shift()?.(m));
  const ask = (what) => new Promise((resolve) => {
    replies.push(resolve);
    child.send(what);
  });
  return new Promise((resolve, reject) => {
    child.once('message', (port) => resolve({ child, port, ask }));
    child.once('exit', (code, signal) => reject(new Error(`server exited (${code ?? signal})`)));
  });
}

/** The bytes a client sends before the server answers: its first flight (the ClientHello). */
function recordHello(options) {
  return new Promise((resolve, reject) => {
    const server = net.createServer((sock) => {
      sock.once('data', (data) => {
        sock.destroy();
        server.close();
        resolve(data);
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const c = tls.connect({ host: '127.0.0.1', port: server.address().port, ...options });
      c.on('error', () => {});
    });
    server.on('error', reject);
  });
}

/** A real session's ticket, to make a ClientHello that offers resumption. */
function ticket(port) {
  return new Promise((resolve) => {
    const c = tls.connect({ host: '127.0.0.1', port, ca: CA, servername: 'localhost' });
    c.once('session', (s) => {
      c.destroy();
      resolve(s);
    });
    c.on('error', () => resolve(undefined));
  });
}

function damage(buf) {
  const b = Buffer.from(buf);
  const out = [b];
  const n = 1 + int(4);
  for (let k = 0; k < n; k++) {
    const cur = out[0];
    if (cur.length === 0) break;
    const at = int(cur.length);
    switch (int(7)) {
      case 0: cur[at] ^= 1 << int(8); break;
      case 1: cur[at] = pick([0, 0xff, 0x7f, 0x80, int(256)]); break;
      case 2: out[0] = Buffer.concat([cur.subarray(0, at), cur.subarray(at + 1 + int(16))]); break;
      case 3: out[0] = Buffer.concat([cur.subarray(0, at), Buffer.alloc(1 + int(64), int(256)), cur.subarray(at)]); break;
      case 4: out[0] = Buffer.concat([cur.subarray(0, at), cur.subarray(at, at + 1 + int(32)), cur.subarray(at)]); break;
      // A length field (record or handshake) made huge or zero.
      case 5: if (at + 1 < cur.length) cur.writeUInt16BE(pick([0, 0xffff, 0x4001, 0x4000]), Math.min(at, cur.length - 2)); break;
      default: out[0] = cur.subarray(0, at); break;
    }
  }
  return out[0];
}

/** Writes `data` in random pieces. */
async function writeSplit(sock, data) {
  let at = 0;
  while (at < data.length && !sock.destroyed) {
    const n = 1 + int(Math.min(data.length - at, pick([1, 7, 100, 1500, 20000])));
    sock.write(data.subarray(at, at + n));
    at += n;
    if (rand() < 0.3) await new Promise((r) => setImmediate(r));
  }
}

function record(type, body) {
  const h = Buffer.from([type, 3, 3, 0, 0]);
  h.writeUInt16BE(body.length, 3);
  return Buffer.concat([h, body]);
}

/** How a case's client leaves: close, reset, half-close, or wait for the server to end it. */
function leave(sock) {
  return new Promise((resolve) => {
    if (sock.destroyed) return resolve();
    sock.once('close', resolve);
    switch (int(4)) {
      case 0: sock.destroy(); break;
      case 1: sock.resetAndDestroy(); break;
      case 2: sock.end(); setTimeout(() => sock.destroy(), 300).unref(); break;
      default: setTimeout(() => sock.destroy(), 200 + int(300)).unref(); break;
    }
  });
}

function rawConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => resolve(sock));
    sock.on('error', () => {});
    sock.on('data', () => {});
  });
}

const cases = {
  async hello(ctx) {
    const sock = await rawConnect(ctx.port);
    await writeSplit(sock, damage(pick(ctx.hellos)));
    await leave(sock);
  },
  async noise(ctx) {
    const sock = await rawConnect(ctx.port);
    const data = Buffer.alloc(1 + int(3000));
    for (let i = 0; i < data.length; i++) data[i] = int(256);
    if (rand() < 0.5) data[0] = 0x16;
    await writeSplit(sock, data);
    await leave(sock);
  },
  async records(ctx) {
    const raw = await rawConnect(ctx.port);
    const c = tls.connect({ socket: raw, ca: CA, servername: 'localhost',
      maxVersion: pick(['TLSv1.2', 'TLSv1.3']) });
    c.on('error', () => {});
    const ok = await new Promise((resolve) => {
      c.once('secureConnect', () => resolve(true));
      c.once('close', () => resolve(false));
    });
    if (ok) {
      if (rand() < 0.5) c.write('GET / HTTP/1.1\r\nHost: x\r\n');
      const body = Buffer.alloc(int(300), int(256));
      const bad = pick([
        () => record(23, body), // application data nobody can decrypt
        () => record(21, Buffer.from([pick([1, 2]), int(256)])), // an alert
        () => record(22, pick(ctx.hellos).subarray(5)), // a ClientHello after the handshake
        () => record(20, Buffer.from([1])), // ChangeCipherSpec
        () => damage(record(23, body)),
        () => body,
      ])();
      await new Promise((resolve) => raw.write(bad, resolve));
    }
    await leave(raw);
  },
  async split(ctx) {
    const raw = await rawConnect(ctx.port);
    const c = tls.connect({ socket: raw, ca: CA, servername: 'localhost' });
    c.on('error', () => {});
    const ok = await new Promise((resolve) => {
      c.once('secureConnect', () => resolve(true));
      c.once('close', () => resolve(false));
    });
    if (!ok) throw new Error('split: the handshake failed');
    const size = int(70000);
    const req = Buffer.concat([
      Buffer.from(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`),
      Buffer.alloc(size, 0x61),
    ]);
    const got = [];
    c.on('data', (d) => got.push(d));
    await writeSplit(c, req);
    const expect = `\r\n\r\n${size}`;
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`split: no whole response to a ${size} B body in 20 s`)), 20000);
      const check = () => {
        if (Buffer.concat(got).toString('latin1').endsWith(expect)) {
          clearTimeout(timer);
          resolve();
        }
      };
      c.on('data', check);
      c.once('close', () => {
        clearTimeout(timer);
        if (!Buffer.concat(got).toString('latin1').endsWith(expect)) reject(new Error(`split: closed before the response to a ${size} B body`));
        else resolve();
      });
    });
    c.destroy();
  },
};

function plainRequest(port) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('a plain request got no answer in 10 s')), 10000);
    const c = tls.connect({ host: '127.0.0.1', port, ca: CA, servername: 'localhost' }, () => {
      c.end('GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    let got = '';
    c.on('data', (d) => { got += d; });
    c.on('error', (e) => { clearTimeout(timer); reject(e); });
    c.on('close', () => {
      clearTimeout(timer);
      if (/^HTTP\/1\.1 200 [^]*pong$/.test(got)) resolve();
      else reject(new Error(`a plain request got ${JSON.stringify(got.slice(0, 80))}`));
    });
  });
}

let stopping = false;

async function main() {
  console.log(`tls-fuzz: ${SERVER === 'node' ? 'node:https' : 'fast-http'}, ${SECONDS} s, ${CLIENTS} clients, seed ${SEED}`);
  const srv = await startServer();
  let exited = null;
  srv.child.on('exit', (code, signal) => {
    exited = code ?? signal;
    // A crash is the finding: nothing the clients still wait for will come.
    if (!stopping) {
      console.log(`FAILED (seed ${SEED}): the server exited (${exited})`);
      process.exit(1);
    }
  });
  const session = await ticket(srv.port);
  const hellos = await Promise.all([
    {}, { maxVersion: 'TLSv1.2' }, { servername: 'localhost', ALPNProtocols: ['h2', 'http/1.1'] },
    { session }, { maxVersion: 'TLSv1.2', session }, { servername: 'a.example' },
  ].map((o) => recordHello({ servername: 'localhost', ...o })));
  await plainRequest(srv.port);
  const before = await srv.ask('stats');
  const ctx = { port: srv.port, hellos };
  const counts = Object.fromEntries(Object.keys(cases).map((k) => [k, 0]));
  const end = Date.now() + SECONDS * 1000;
  let failure = null;
  const worker = async () => {
    while (Date.now() < end && !failure && exited === null) {
      const kind = pick(KINDS);
      try {
        await cases[kind](ctx);
        counts[kind]++;
      } catch (err) {
        failure ??= `${kind}: ${err.message}`;
      }
    }
  };
  const probe = (async () => {
    while (Date.now() < end && !failure && exited === null) {
      await new Promise((r) => setTimeout(r, 1000));
      await plainRequest(srv.port).catch((err) => { failure ??= err.message; });
    }
  })();
  await Promise.all([...Array.from({ length: CLIENTS }, worker), probe]);
  if (exited !== null) failure ??= `the server exited (${exited})`;
  let after = null;
  if (!failure) {
    await plainRequest(srv.port).catch((err) => { failure = err.message; });
    const deadline = Date.now() + 15000;
    for (;;) {
      after = await srv.ask('stats');
      if ((after.connections === 0 && after.fds <= before.fds) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (after.connections !== 0) failure ??= `${after.connections} connections still open 15 s after the last client left`;
    if (after.fds > before.fds) failure ??= `open descriptors ${before.fds} -> ${after.fds}`;
  }
  stopping = true;
  srv.child.kill();
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  console.log(`cases: ${total} (${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')})`);
  if (after) {
    console.log(`server: tlsClientError ${after.tlsClientErrors}, clientError ${after.clientErrors}, ` +
      `requests ${after.requests}, ` +
      `descriptors ${before.fds} -> ${after.fds}, RSS ${(before.rss / 2 ** 20).toFixed(1)} -> ` +
      `${(after.rss / 2 ** 20).toFixed(1)} MiB`);
    console.log(`tlsClientError codes: ${Object.entries(after.codes).sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  if (failure) {
    console.log(`FAILED (seed ${SEED}): ${failure}`);
    process.exitCode = 1;
  } else {
    console.log(`passed: no crash, hang, leak or lost response (seed ${SEED})`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
