'use strict';
// 10 MiB responses on connections that close after them must arrive whole, on node:http and
// on fast-http: Connection: close, HTTP/1.0, res.shouldKeepAlive = false, and the last
// request maxRequestsPerSocket allows; the body sent at once and in writes. The client
// starts reading only after the handler's end() returned.
const assert = require('node:assert/strict');
const { threeWay, rawExchange, write, digest, HANG_BOUND_MS } = require('./helpers/three-way');

const CASES = [
  { label: 'Connection: close', requests: ['GET /end?label=L HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'] },
  { label: 'HTTP/1.0', requests: ['GET /end?label=L HTTP/1.0\r\nHost: x\r\n\r\n'] },
  { label: 'shouldKeepAlive = false', requests: ['GET /end?label=L&keepAlive=false HTTP/1.1\r\nHost: x\r\n\r\n'] },
  {
    label: 'last request of maxRequestsPerSocket',
    // The second request is sent once the first response finished (no pipelining). node:http
    // answers it with Connection: close but closes only at the keep-alive timeout: the client
    // stops once it has both responses.
    untilResponses: 2,
    requests: ['GET /small HTTP/1.1\r\nHost: x\r\n\r\n', 'finish', 'GET /end?label=L HTTP/1.1\r\nHost: x\r\n\r\n'],
  },
  { label: 'writes, Connection: close', requests: ['GET /write?label=L HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'] },
  { label: 'writes, HTTP/1.0', requests: ['GET /write?label=L HTTP/1.0\r\nHost: x\r\n\r\n'] },
];

/** The responses in `bytes` (Content-Length framed, or up to the close): heads and bodies. */
function responses(bytes) {
  const out = [];
  let pos = 0;
  while (pos < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', pos);
    if (end === -1) {
      out.push({ head: ['(incomplete head)'], body: Buffer.alloc(0), complete: false });
      break;
    }
    const head = bytes.subarray(pos, end).toString('latin1').split('\r\n');
    const length = head.find((l) => /^content-length:/i.test(l));
    const bodyEnd = length ? end + 4 + Number(length.split(':')[1]) : bytes.length;
    out.push({ head, body: bytes.subarray(end + 4, bodyEnd), complete: bodyEnd <= bytes.length });
    pos = bodyEnd;
  }
  return out;
}

/** Head lines of every response (Date masked), and the last body's digest. */
function summarize(bytes) {
  const all = responses(bytes);
  return {
    heads: all.map((r) => r.head.map((l) => l.replace(/^Date: .*/, 'Date: <date>'))),
    lastBody: digest(all.at(-1)?.body ?? Buffer.alloc(0)),
    total: bytes.length,
  };
}

threeWay('10 MiB responses on connections that close after them arrive whole', {
  fixture: 'big-response.js',
  async exercise(app) {
    const out = [];
    for (const c of CASES) {
      const label = encodeURIComponent(c.label);
      const r = await rawExchange(app.port, async (socket) => {
        for (const step of c.requests) {
          if (step === 'finish') await app.waitFor('finish', HANG_BOUND_MS);
          else await write(socket, step.replace('label=L', `label=${label}`));
        }
      }, {
        pauseFirst: () => app.waitFor('ended', HANG_BOUND_MS),
        until: c.untilResponses && ((bytes) => responses(bytes).filter((x) => x.complete).length >= c.untilResponses),
        bound: 4 * HANG_BOUND_MS,
      });
      out.push({ label: c.label, ended: r.ended, ...summarize(r.bytes), app: await app.take() });
    }
    return out;
  },
  check({ client }) {
    for (const c of client) {
      assert.equal(c.ended, c.label.startsWith('last request') ? 'until' : 'server-close', c.label);
      assert.equal(c.lastBody.split(':')[0], String(10 * 1024 * 1024), c.label);
      assert.deepEqual(c.app.filter((e) => e[0] === 'finish' && e[1] === c.label).length, 1, c.label);
    }
  },
});
