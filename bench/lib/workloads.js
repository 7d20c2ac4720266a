'use strict';

// What each workload sends with wrk and what the proof check expects back.
// The handlers themselves live in bench/handlers.js.

const path = require('node:path');
const { HELLO_BODY, JSON_HEADERS, JSON_PAYLOAD, BIG_BODY, POST_BODY } = require('../handlers');
const app = require('../realistic');

const WRK_DIR = path.join(__dirname, '..', 'wrk');
const PIPELINE_DEPTH = 16;

const get = (port, target = '/') => `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
const post = (port) => `POST / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`
  + `Content-Type: application/octet-stream\r\nContent-Length: ${Buffer.byteLength(POST_BODY)}\r\n\r\n${POST_BODY}`;

// The proof client verifies the server's certificate against the bench CA.
const PROOF_TLS = {
  ca: require('node:fs').readFileSync(path.join(__dirname, '..', '..', 'test', 'fixtures', 'tls',
    'ca-cert.pem')),
  servername: 'localhost',
};

const helloExpect = { status: 200, headers: { 'Content-Type': 'text/plain' }, body: HELLO_BODY };

// The framework rows: a hello route on each (bench/servers/framework.js), every header left to
// the framework (Express adds an ETag and a charset, Fastify its own Content-Type...), so the
// proof checks the status, the body and keep-alive. `packages`: what the row measures, named
// with their versions in the report (package.json's devDependencies; Express 5 and Koa 3 are
// installed under aliases beside the Express 4 and Koa 2 the tests use).
const FRAMEWORKS = [
  { name: 'express4', title: 'Express 4, hello route', packages: ['express'] },
  { name: 'express5', title: 'Express 5, hello route', packages: ['express5'] },
  { name: 'fastify', title: 'Fastify 5, hello route', packages: ['fastify'] },
  { name: 'koa', title: 'Koa 3, hello route', packages: ['koa3'] },
  { name: 'hono', title: 'Hono 4 (@hono/node-server), hello route', packages: ['hono', '@hono/node-server'] },
];

// The realistic row asks for this user (twice) in its proof; wrk asks for random ones
// (wrk/realistic.lua). Its expected body is computed from the same pure records the servers
// hold, for the heap size bench/run.js passes them (BENCH_LIVE_HEAP_MB).
const REALISTIC_PROOF_ID = 42;
const realisticBody = () => {
  const count = app.recordCount(app.liveHeapMb());
  return app.render(REALISTIC_PROOF_ID, (id) => app.makeRecord(id, count));
};

// proof.requests(port) -> list of raw requests; sent back-to-back on one
// keep-alive connection (or in one write when pipelined), and every response
// must match proof.expect.
const workloads = [
  {
    name: 'hello',
    title: 'hello (writeHead + end)',
    wrk: {},
    proof: { requests: (p) => [get(p), get(p)], expect: helloExpect },
  },
  {
    name: 'hello-set',
    title: 'hello (setHeader + end)',
    wrk: {},
    proof: { requests: (p) => [get(p), get(p)], expect: helloExpect },
  },
  {
    name: 'json',
    title: 'JSON, 5 headers',
    wrk: {},
    proof: {
      requests: (p) => [get(p), get(p)],
      expect: {
        status: 200,
        headers: JSON_HEADERS,
        body: (body) => {
          try {
            const got = JSON.parse(body.toString('utf8'));
            return JSON.stringify(got) === JSON.stringify(JSON_PAYLOAD) ? null : `JSON body ${body}`;
          } catch {
            return `body is not JSON: ${body.toString('latin1').slice(0, 60)}`;
          }
        },
      },
    },
  },
  {
    name: '64k',
    title: '64 KiB response',
    wrk: {},
    proof: {
      requests: (p) => [get(p), get(p)],
      expect: { status: 200, headers: { 'Content-Type': 'application/octet-stream' }, body: BIG_BODY },
    },
  },
  {
    name: 'post-echo',
    title: 'POST 4 KiB echo',
    wrk: { script: path.join(WRK_DIR, 'post-echo.lua') },
    proof: {
      requests: (p) => [post(p), post(p)],
      expect: { status: 200, headers: { 'Content-Type': 'application/octet-stream' }, body: POST_BODY },
    },
  },
  {
    name: 'pipeline',
    title: `hello, pipelined x${PIPELINE_DEPTH}`,
    wrk: { script: path.join(WRK_DIR, 'pipeline.lua'), scriptArgs: [String(PIPELINE_DEPTH)] },
    proof: {
      requests: (p) => Array.from({ length: PIPELINE_DEPTH }, () => get(p)),
      pipelined: true,
      expect: helloExpect,
    },
  },
  {
    name: 'memory',
    title: 'RSS per idle keep-alive connection',
    memory: true,
    proof: { requests: (p) => [get(p), get(p)], expect: helloExpect },
  },
  // https rows: node's https server vs fast-http's, same handler, same certificate (ECDSA
  // P-256 unless the name says RSA 2048; test/fixtures/tls).
  {
    name: 'https-hello',
    title: 'https hello, keep-alive (ECDSA P-256)',
    https: true,
    wrk: {},
    proof: { requests: (p) => [get(p), get(p)], expect: helloExpect, tls: PROOF_TLS },
  },
  {
    name: 'https-pipeline',
    title: `https hello, pipelined x${PIPELINE_DEPTH} (ECDSA P-256)`,
    https: true,
    wrk: { script: path.join(WRK_DIR, 'pipeline.lua'), scriptArgs: [String(PIPELINE_DEPTH)] },
    proof: {
      requests: (p) => Array.from({ length: PIPELINE_DEPTH }, () => get(p)),
      pipelined: true,
      expect: helloExpect,
      tls: PROOF_TLS,
    },
  },
  // Connection: close makes wrk open a new connection per request, so req/s is handshakes/s
  // and CPU µs/req is CPU per handshake (full handshakes: wrk does not resume sessions).
  {
    name: 'https-handshake-ecdsa',
    title: 'https one request per connection (handshakes/s, CPU/handshake), ECDSA P-256',
    https: true,
    handshake: true,
    wrk: { headers: ['Connection: close'] },
    proof: { requests: (p) => [get(p), get(p)], expect: helloExpect, tls: PROOF_TLS },
  },
  {
    name: 'https-handshake-rsa',
    title: 'https one request per connection (handshakes/s, CPU/handshake), RSA 2048',
    https: true,
    handshake: true,
    wrk: { headers: ['Connection: close'] },
    proof: { requests: (p) => [get(p), get(p)], expect: helloExpect, tls: PROOF_TLS },
  },
  {
    name: 'https-idle',
    title: 'RSS per idle TLS keep-alive connection (ECDSA P-256)',
    https: true,
    memory: true,
    proof: { requests: (p) => [get(p), get(p)], expect: helloExpect, tls: PROOF_TLS },
  },
  ...FRAMEWORKS.map((f) => ({
    name: f.name,
    title: f.title,
    framework: true,
    packages: f.packages,
    wrk: {},
    proof: { requests: (p) => [get(p), get(p)], expect: { status: 200, body: HELLO_BODY } },
  })),
  // A JSON API over a live heap (bench/realistic.js): CPU, p99 and GC time per request.
  {
    name: 'realistic',
    title: 'JSON API over a live heap (GET /user/<random id>, ~1 KB JSON)',
    realistic: true,
    gc: true,
    wrk: {
      script: path.join(WRK_DIR, 'realistic.lua'),
      scriptArgs: () => [String(app.recordCount(app.liveHeapMb()))],
    },
    proof: {
      requests: (p) => [get(p, `/user/${REALISTIC_PROOF_ID}`), get(p, `/user/${REALISTIC_PROOF_ID}`)],
      expect: {
        status: 200,
        headers: { 'Content-Type': 'application/json' },
        body: (body) => {
          const got = body.toString('utf8');
          const want = realisticBody();
          if (got === want) return null;
          let at = 0;
          while (got[at] === want[at]) at++;
          return `body differs at byte ${at}: ...${got.slice(at, at + 40)}..., want ...${want.slice(at, at + 40)}...`;
        },
      },
    },
  },
];

module.exports = { workloads, PIPELINE_DEPTH, FRAMEWORKS };
