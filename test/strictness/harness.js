'use strict';

// Runs the raw requests of the strictness corpus against node:http and fast-http and
// records what each server did: the status line and Connection header of every response,
// the requests the handler saw (method, url, version, raw headers, body, raw trailers,
// whether the body ended or was aborted), every 'clientError' (err.code and err.reason,
// observed by wrapping server.emit: a listener would change node's behaviour), and the
// 'upgrade' / 'connect' events. Each case runs in two modes: the raw bytes followed by
// `GET /follow-up` in the same write, and the follow-up in a later write (sent once the
// server has answered or closed: a server answers only after parsing the whole read).
//
// Nothing here measures time: every wait is for an event (a response, the server closing
// the connection, the server-side socket closing), with a generous safety timeout whose
// firing is itself part of the recorded outcome.
//
// `node test/strictness/harness.js [--fast] [name-substring...]` prints the outcomes.

const net = require('node:net');
const nodeHttp = require('node:http');

const FOLLOW_UP = 'GET /follow-up HTTP/1.1\r\nHost: localhost\r\n\r\n';
const SAFETY_TIMEOUT = 10000;

let fastHttp;
function fast() {
  if (!fastHttp) fastHttp = require('../..');
  return fastHttp;
}

// ---------------------------------------------------------------------------
// Servers: one per (implementation, options, listeners), reused case after case; each
// serves one connection at a time and records into `srv.rec`.

function configKey(c) {
  return JSON.stringify([c.server, [...c.listen].sort()]);
}

async function startServer(impl, c) {
  const srv = { rec: null, sockets: new Set(), closed: null };
  const handler = (req, res) => {
    const rec = srv.rec;
    const seen = {
      method: req.method,
      url: req.url,
      httpVersion: req.httpVersion,
      rawHeaders: req.rawHeaders,
      body: '',
      end: 'open',
    };
    if (rec) rec.requests.push(seen);
    req.on('data', (chunk) => { seen.body += chunk.toString('latin1'); });
    req.on('aborted', () => { seen.end = 'aborted'; });
    req.on('error', () => {});
    req.on('end', () => {
      seen.end = 'end';
      seen.rawTrailers = req.rawTrailers;
      res.setHeader('X-Seen-Url', encodeURIComponent(req.url));
      res.end();
    });
  };
  const options = { ...c.server };
  const server = Object.keys(options).length ?
    impl.createServer(options, handler) :
    impl.createServer(handler);
  const origEmit = server.emit;
  server.emit = function emit(name, ...args) {
    const rec = srv.rec;
    if (rec && name === 'clientError') {
      const err = args[0];
      rec.clientErrors.push({ code: err && err.code, reason: err && err.reason });
    }
    if (rec && (name === 'upgrade' || name === 'connect')) {
      rec.events.push({ event: name, url: args[0].url, head: args[2].toString('latin1') });
    }
    return origEmit.call(this, name, ...args);
  };
  // fast-http emits 'connection' only when someone listens; the server-side close tells
  // when a case is over.
  server.on('connection', (socket) => {
    srv.sockets.add(socket);
    socket.once('close', () => {
      srv.sockets.delete(socket);
      if (srv.sockets.size === 0 && srv.closed) srv.closed();
    });
  });
  for (const l of c.listen) {
    switch (l) {
      case 'clientError':
        server.on('clientError', (err, socket) => {
          if (srv.rec) srv.rec.events.push({ event: 'clientError-listener', code: err.code });
          socket.destroy();
        });
        break;
      case 'checkContinue':
        server.on('checkContinue', (req, res) => {
          if (srv.rec) srv.rec.events.push({ event: 'checkContinue', url: req.url });
          res.writeContinue();
          handler(req, res);
        });
        break;
      case 'checkExpectation':
        server.on('checkExpectation', (req, res) => {
          if (srv.rec) {
            srv.rec.events.push({ event: 'checkExpectation', expect: req.headers.expect });
          }
          handler(req, res);
        });
        break;
      case 'upgrade':
      case 'connect':
        server.on(l, (req, socket) => {
          socket.end(`HTTP/1.1 ${l === 'upgrade' ? '101 Switching Protocols' : '200 Connection Established'}\r\n` +
                     `X-Seen-Url: ${encodeURIComponent(req.url)}\r\n\r\n`);
        });
        break;
      default:
        throw new Error(`unknown listener ${l}`);
    }
  }
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  srv.server = server;
  srv.port = server.address().port;
  return srv;
}

/** Resolves once every server-side socket of `srv` has closed. */
function serverIdle(srv) {
  if (srv.sockets.size === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      srv.closed = null;
      resolve(false);
    }, SAFETY_TIMEOUT);
    srv.closed = () => {
      clearTimeout(timer);
      srv.closed = null;
      resolve(true);
    };
  });
}

class Servers {
  constructor(impl) {
    this.impl = impl;
    this.map = new Map();
  }

  async get(c) {
    const key = configKey(c);
    if (!this.map.has(key)) this.map.set(key, await startServer(this.impl, c));
    return this.map.get(key);
  }

  async close() {
    for (const srv of this.map.values()) {
      for (const s of srv.sockets) s.destroy();
      await new Promise((resolve) => srv.server.close(resolve));
    }
    this.map.clear();
  }
}

// ---------------------------------------------------------------------------
// Client: a minimal response reader. Our handler always answers with Content-Length: 0;
// node's canned error responses have no framing and end with the connection.

class Responses {
  constructor() {
    this.buf = '';
    this.list = [];
    this.finals = 0;
    this.raw = false;
  }

  push(chunk) {
    if (this.raw) return;
    this.buf += chunk.toString('latin1');
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const lines = this.buf.slice(0, end).split('\r\n');
      this.buf = this.buf.slice(end + 4);
      const headers = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(lines[0])?.[1]);
      const r = { status: lines[0], connection: headers.connection || null };
      if (headers['x-seen-url'] !== undefined) r.url = decodeURIComponent(headers['x-seen-url']);
      this.list.push(r);
      const len = Number(headers['content-length'] || 0);
      if (len > 0) this.buf = this.buf.slice(len);
      // node's 400 (missing Host) and 417 answers are chunked and empty.
      if (/chunked/i.test(headers['transfer-encoding'] || '')) {
        const last = this.buf.indexOf('0\r\n\r\n');
        if (last === -1) {
          this.buf = lines.join('\r\n') + '\r\n\r\n' + this.buf;
          this.list.pop();
          return;
        }
        this.buf = this.buf.slice(last + 5);
      }
      if (!(status >= 100 && status < 200) || status === 101) this.finals++;
      if (status === 101 || /^HTTP\/1\.1 200 Connection Established/.test(lines[0])) {
        this.raw = true;
        return;
      }
    }
  }
}

/**
 * Writes `writes` one after the other on a fresh connection; before each write after the
 * first, waits for `responses` (default 1) final responses, or the server closing. Ends when
 * the server closes, when the response to /follow-up arrived (`followUp`), or after
 * `responses` final responses to everything written (without `followUp`, or when the
 * follow-up went in the same write and gets no answer).
 */
function exchange(port, writes, responses, followUp) {
  return new Promise((resolve) => {
    const rs = new Responses();
    const socket = net.connect(port, '127.0.0.1');
    let finished = false;
    let closed = false;
    let timedOut = false;
    let next = 0;
    let step = null;

    const done = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ responses: rs.list, closedByServer: closed, timedOut });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      done();
    }, SAFETY_TIMEOUT);

    const check = () => {
      if (finished) return;
      if (closed) return done();
      if (next >= writes.length) {
        if (rs.list.some((r) => r.url === '/follow-up')) return done();
        const last = writes.length > 1 && followUp;
        if (responses !== undefined && !last && rs.finals >= responses) return done();
      }
      if (step && rs.finals >= step.finals + (responses ?? 1)) {
        const s = step;
        step = null;
        s.go();
      }
    };

    socket.on('data', (chunk) => {
      rs.push(chunk);
      check();
    });
    socket.on('end', () => { closed = true; check(); });
    socket.on('close', () => { closed = true; check(); });
    socket.on('error', () => { closed = true; check(); });
    socket.on('connect', () => {
      const writeNext = () => {
        if (finished || closed) return;
        socket.write(Buffer.from(writes[next++], 'latin1'));
        if (next < writes.length) {
          step = { finals: rs.finals, go: writeNext };
        }
        check();
      };
      writeNext();
    });
  });
}

/**
 * Runs case `c` on one implementation in `mode` ('same-write' or 'later-write').
 * Returns the recorded outcome.
 */
async function runCase(servers, c, mode) {
  const srv = await servers.get(c);
  const rec = { requests: [], clientErrors: [], events: [] };
  srv.rec = rec;
  let writes;
  if (!c.followup) writes = [c.raw];
  else if (mode === 'same-write') writes = [c.raw + FOLLOW_UP];
  else writes = [c.raw, FOLLOW_UP];
  const wire = await exchange(srv.port, writes, c.responses, c.followup);
  const idle = await serverIdle(srv);
  await new Promise((resolve) => setImmediate(resolve));
  srv.rec = null;
  return {
    responses: wire.responses,
    closedByServer: wire.closedByServer,
    timedOut: wire.timedOut,
    serverSocketsClosed: idle,
    requests: rec.requests,
    clientErrors: rec.clientErrors,
    events: rec.events,
  };
}

module.exports = { Servers, runCase, FOLLOW_UP, fast, nodeHttp };

if (require.main === module) {
  (async () => {
    const { load } = require('./corpus');
    const args = process.argv.slice(2);
    const useFast = args.includes('--fast');
    const both = args.includes('--both');
    const filters = args.filter((a) => !a.startsWith('--'));
    const cases = load().filter((c) => !filters.length || filters.some((f) => c.name.includes(f)));
    const impls = both ? [nodeHttp, fast()] : [useFast ? fast() : nodeHttp];
    const all = impls.map((i) => new Servers(i));
    for (const c of cases) {
      for (const mode of ['same-write', 'later-write']) {
        const outs = [];
        for (const s of all) outs.push(await runCase(s, c, mode));
        const line = JSON.stringify(outs[0]);
        const same = outs.every((o) => JSON.stringify(o) === line);
        console.log(`${same ? '  ' : '!!'} ${c.name} [${mode}]`);
        for (const o of (same ? [outs[0]] : outs)) console.log(`   ${JSON.stringify(o)}`);
      }
    }
    for (const s of all) await s.close();
  })();
}
