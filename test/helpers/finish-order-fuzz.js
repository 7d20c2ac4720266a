'use strict';
// Random orders of what can end a request: the handler's res.end() (at once, in a tick, a
// promise job, an immediate, from 'finish' or 'close'), stream.pipeline into a sink that
// fails, `for await` that stops early, node's destroyer of a server request, the socket's
// destroy(), res.destroy(), server.close() / closeIdleConnections() / closeAllConnections(),
// a client that hangs up. Each sequence runs on its own server of the implementation given,
// with a raw client; what the client received and what the server's objects emitted are
// logged, and anything thrown out of a listener or the server's code is collected.
const net = require('node:net');
const { pipeline, Writable } = require('node:stream');
const { ResponseParser } = require('../wire/helpers');

/** A small seeded generator (mulberry32): a sequence is replayed from its seed. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const OPS = ['end', 'writeEnd', 'detach', 'pipelineFail', 'forAwaitBreak', 'destroySocket',
  'resDestroy', 'closeServer', 'closeIdle', 'closeAll'];
// What answers or ends a request by itself (a sequence without one gets an 'end').
const ENDS = new Set(['end', 'writeEnd', 'pipelineFail', 'forAwaitBreak', 'destroySocket',
  'resDestroy', 'closeAll']);
const WHEN = ['sync', 'tick', 'micro', 'immediate', 'finish', 'close'];
const CLIENTS = ['get', 'getClose', 'post', 'postPartial', 'pipelined', 'abort', 'abortPost'];

function pick(r, list) {
  return list[Math.floor(r() * list.length)];
}

/** The sequence of a seed: the client's kind and the handler's steps with their timing. */
function sequenceOf(seed) {
  const r = rng(seed);
  const client = pick(r, CLIENTS);
  const steps = [];
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) steps.push([pick(r, OPS), pick(r, WHEN)]);
  // Something ends the request for sure: an 'end' that waits for 'finish' or 'close' may
  // wait for ever, on node too.
  if (!steps.some(([op, when]) => ENDS.has(op) && when !== 'finish' && when !== 'close')) {
    steps.push(['end', pick(r, WHEN.slice(0, 4))]);
  }
  return { seed, client, steps };
}

/** Whether the outcome depends on a race between the client and the server. */
function racy(seq) {
  return seq.client === 'abort' || seq.client === 'abortPost';
}

const BODY = 'b'.repeat(64);
const REQUESTS = {
  get: 'GET /1 HTTP/1.1\r\nHost: x\r\n\r\n',
  getClose: 'GET /1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  post: `POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY.length * 2}\r\n\r\n${BODY}${BODY}`,
  // Half the body: the rest never comes (the client's FIN ends the message short).
  postPartial: `POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY.length * 2}\r\n\r\n${BODY}`,
  pipelined: 'GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n',
  abort: 'GET /1 HTTP/1.1\r\nHost: x\r\n\r\n',
  abortPost: `POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY.length * 2}\r\n\r\n${BODY}`,
};
const EXPECTED = { pipelined: 2 };

/**
 * Runs `seq` on a server of `impl` (node:http or fast-http); resolves with its log. It ends
 * on events: once the client's connection and the server's side of it have closed, and the
 * ticks and immediates that follow have run. `hung`: that did not happen within
 * `timeoutMs` (node too leaves some orders hanging: a response nobody ends).
 */
function runSequence(impl, seq, timeoutMs = 5000) {
  return new Promise((resolve) => {
    const log = [];
    // Nothing after a hang is compared (closing the server then is the harness's own step).
    const push = (line) => finished || log.push(line);
    const server = impl.createServer();
    let requests = 0;
    let serverClosed = false;
    let clientDone = false;
    /** The server's side of the connection, once a request showed it; and whether it closed. */
    let sock = null;
    let sockClosed = false;
    let finished = false;
    const timer = setTimeout(() => finish(true), timeoutMs);

    function finish(hung) {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (hung) log.push('hung');
      server.closeAllConnections();
      if (serverClosed) resolve(log);
      else server.close(() => resolve(log));
    }

    function maybeDone() {
      if (clientDone && (sock === null || sockClosed)) {
        setImmediate(() => setImmediate(() => finish(false)));
      }
    }

    function closeServer(tag) {
      server.close((err) => {
        serverClosed = true;
        push(`${tag} callback${err ? ` ${err.code}` : ''}`);
      });
    }

    server.on('request', (req, res) => {
      const n = ++requests;
      if (sock === null) sock = req.socket;
      const socket = req.socket;
      req.setMaxListeners(0);
      req.on('error', (e) => push(`req${n} error ${e.code ?? e.message}`));
      req.on('aborted', () => push(`req${n} aborted`));
      res.on('finish', () => push(`res${n} finish`));
      res.on('close', () => push(`res${n} close`));
      res.on('error', (e) => push(`res${n} error ${e.code ?? e.message}`));
      const answer = (text) => !res.writableEnded && !res.destroyed && res.end(text);
      const ops = {
        end: () => res.end(`ok${n}`),
        writeEnd: () => {
          res.write(`w${n}`);
          res.end(`e${n}`);
        },
        detach: () => {
          // node's destroyer for a server request (stream.pipeline's cleanup).
          req.socket = null;
          req.destroy(new Error('detached'));
        },
        pipelineFail: () => pipeline(req, new Writable({
          write(chunk, enc, cb) {
            cb(new Error('sink failed'));
          },
          final(cb) {
            cb(new Error('sink failed'));
          },
        }), (err) => {
          push(`pipeline${n} ${err ? err.message : 'ok'}`);
          answer(`pf${n}`);
        }),
        forAwaitBreak: () => {
          (async () => {
            // The first chunk is enough: the iterator's return() destroys the request.
            // eslint-disable-next-line no-unused-vars
            for await (const chunk of req) break;
            push(`loop${n} out`);
            answer(`fa${n}`);
          })().catch((e) => {
            push(`loop${n} error ${e.code ?? e.message}`);
            answer(`fe${n}`);
          });
        },
        destroySocket: () => socket.destroy(),
        resDestroy: () => res.destroy(),
        closeServer: () => closeServer(`close${n}`),
        closeIdle: () => server.closeIdleConnections(),
        closeAll: () => server.closeAllConnections(),
      };
      for (const [op, when] of seq.steps) {
        const fn = ops[op];
        if (when === 'sync') fn();
        else if (when === 'tick') process.nextTick(fn);
        else if (when === 'micro') queueMicrotask(fn);
        else if (when === 'immediate') setImmediate(fn);
        else res.on(when, fn);
      }
    });

    server.listen(0, '127.0.0.1', () => {
      const expected = EXPECTED[seq.client] ?? 1;
      const parser = new ResponseParser([], { keepBodies: true });
      const c = net.connect(server.address().port, '127.0.0.1');
      let ended = false;
      c.on('connect', () => {
        c.write(REQUESTS[seq.client]);
        if (racy(seq)) setImmediate(() => c.destroy());
      });
      c.on('data', (d) => {
        parser.push(d);
        if (!ended && parser.final >= expected) {
          ended = true;
          c.end();
        }
      });
      c.on('error', (e) => push(`client error ${e.code}`));
      c.on('close', () => {
        // The client's view: the complete responses it got, and who ended the connection.
        const got = parser.bodies.map((body, i) => `${parser.statuses[i]} ${body}`);
        push(`client got [${got.join(' | ')}]${ended ? '' : ' closed by server'}`);
        clientDone = true;
        // Listened for only now: a 'close' listener of its own would change the socket's
        // listener store for the whole sequence.
        if (sock !== null && !sock.closed) {
          sock.once('close', () => {
            sockClosed = true;
            maybeDone();
          });
        } else {
          sockClosed = true;
        }
        maybeDone();
      });
    });
  });
}

module.exports = { sequenceOf, runSequence, racy, rng };
