'use strict';

// The framework rows (issue #34 item 4): a hello route on Express 4, Express 5, Fastify 5, Koa 3
// and Hono 4 (@hono/node-server), written as each framework's documentation writes it and
// started the way an app starts it (the framework creates its node:http server itself). The
// runner starts this same file on every runtime: `node` (node:http), `node -r
// fast-http/register` (fast-http, as apps use it), `bun` and `deno` (their node:http); so a
// row's ×node is the framework on that server against the same framework on node:http.
//
// argv: <workload> <port>, as the other server files. With BENCH_EXPECT_FAST_HTTP=<fast-http
// package dir> the server checks that the framework's server really is fast-http's (the
// register hook falls back to node:http with a warning when the addon cannot load: that must
// not be measured as fast-http).

const { exitWithParent, HELLO_BODY } = require('../handlers');

const FRAMEWORKS = {
  express4: (port, ready) => {
    const app = require('express')();
    app.get('/', (req, res) => res.send(HELLO_BODY));
    const server = app.listen(port, '127.0.0.1', () => ready(server));
  },
  // Express 5, installed under the alias "express5" (package.json: "npm:express@^5").
  express5: (port, ready) => {
    const app = require('express5')();
    app.get('/', (req, res) => res.send(HELLO_BODY));
    const server = app.listen(port, '127.0.0.1', () => ready(server));
  },
  fastify: (port, ready) => {
    const app = require('fastify')();
    app.get('/', async () => HELLO_BODY);
    app.listen({ port, host: '127.0.0.1' }).then(() => ready(app.server), fail);
  },
  // Koa 3, under the alias "koa3" (the "koa" devDependency is Koa 2, which test/frameworks.test.js
  // covers).
  koa: (port, ready) => {
    const Koa = require('koa3');
    const app = new Koa();
    app.use((ctx) => {
      ctx.body = HELLO_BODY;
    });
    const server = app.listen(port, '127.0.0.1', () => ready(server));
  },
  hono: (port, ready) => {
    const { Hono } = require('hono');
    const { serve } = require('@hono/node-server');
    const app = new Hono();
    app.get('/', (c) => c.text(HELLO_BODY));
    const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => ready(server));
  },
};

function fail(err) {
  process.stderr.write(`framework server: ${err.stack || err}\n`);
  process.exit(1);
}

const workload = process.argv[2];
const port = Number(process.argv[3]);
const start = FRAMEWORKS[workload];
if (!start) {
  process.stdout.write(`UNAVAILABLE no framework app for ${workload}\n`);
  process.exit(0);
}
try {
  start(port, (server) => {
    const fastDir = process.env.BENCH_EXPECT_FAST_HTTP;
    if (fastDir && !require(fastDir).isFastHttpServer(server)) {
      fail(new Error(`the ${workload} server is node:http's, not fast-http's (did fast-http/register load?)`));
    }
    process.stdout.write(`READY ${server.address().port}\n`);
  });
} catch (err) {
  fail(err);
}
exitWithParent();
