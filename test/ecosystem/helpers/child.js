'use strict';
// The process an ecosystem fixture runs in, in every mode (helpers/three-way.js starts it):
//   node      `node child.js <fixture>`                      the app gets node:http
//   fast      `node child.js <fixture>`                      the app gets require('fast-http')
//   register  `node -r lib/register.js child.js <fixture>`   the app gets require('http'),
//                                                             patched by the preload
// An https fixture takes ctx.https instead: require('fast-http').https in fast mode,
// require('https') (patched by the preload in register mode) otherwise.
// With ECO_FAST_IMPL=node the fast and register modes get node:http too (no preload).
//
// The fixture module exports `start(ctx)`, which serves and resolves with
// `{ server, port, isFastHttp, info, commands, close }` (port and isFastHttp default to the
// server's). Its process talks to the
// test over the IPC channel: one 'ready' message with the port and `info`, then replies to
// the test's calls (the fixture's `commands`, plus 'records', 'waitFor' and 'close'). The
// process exits when the channel closes, so a crashed test cannot leave it behind.
// Cluster workers (forked from this file by a fixture) run the fixture's `worker(ctx)`.

const path = require('node:path');
const cluster = require('node:cluster');
const { closeServer, HANG_BOUND_MS } = require('./fixture-kit');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const MODE = process.env.ECO_MODE || 'node';
const NODE_IMPL = process.env.ECO_FAST_IMPL === 'node';
const fixtureName = process.argv[2];
const options = JSON.parse(process.argv[3] || '{}');
// A fixture may set up hooks (OpenTelemetry, diagnostics_channel) before http is loaded.
const fixture = require(path.join(__dirname, '..', 'fixtures', fixtureName));

/** The module the app serves with, loaded when the fixture first asks for it. */
function serverModule() {
  if (MODE === 'fast' && !NODE_IMPL) return require(ROOT);
  return require('http');
}

/** The https module the app serves with (as serverModule, for node:https's server API). */
function httpsModule() {
  if (MODE === 'fast' && !NODE_IMPL) return require(ROOT).https;
  return require('https');
}

/** Whether `server` is a fast-http Server (never loads the addon in node mode). */
function isFastHttp(server) {
  if (MODE === 'node' || NODE_IMPL) return false;
  try {
    return require(ROOT).isFastHttpServer(server);
  } catch {
    return false;
  }
}

const records = [];
const waiters = [];

/** Records one entry: [name, ...values]. */
function record(...entry) {
  const value = entry;
  records.push(value);
  for (let i = waiters.length - 1; i >= 0; i--) {
    if (waiters[i].match(value)) waiters.splice(i, 1)[0].resolve(true);
  }
}

function named(name) {
  return (entry) => entry[0] === name;
}

/** Resolves true once an entry named one of `names` is recorded, false after `bound` ms. */
function waitFor(names, bound) {
  // (An argument left out by the test arrives as null over IPC.)
  bound ??= HANG_BOUND_MS;
  names = [].concat(names);
  const matchers = names.map(named);
  const match = (v) => matchers.some((m) => m(v));
  if (records.some(match)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const w = { match, resolve };
    waiters.push(w);
    setTimeout(() => {
      const i = waiters.indexOf(w);
      if (i !== -1) waiters.splice(i, 1);
      resolve(false);
    }, bound).unref();
  });
}

const ctx = {
  mode: MODE,
  nodeImpl: NODE_IMPL,
  options,
  root: ROOT,
  get http() {
    return serverModule();
  },
  get https() {
    return httpsModule();
  },
  record,
  records,
  waitFor,
  isFastHttp,
};

async function main() {
  if (cluster.isWorker) {
    await fixture.worker(ctx);
    return;
  }
  const app = (await fixture.start(ctx)) || {};
  const server = app.server;
  const commands = {
    records: () => records,
    /** The records so far, which are then forgotten (a scenario's phases compare apart). */
    take: () => records.splice(0),
    waitFor: (names, bound) => waitFor(names, bound),
    close: async () => (app.close ? app.close() : closeServer(server)),
    ...app.commands,
  };
  process.on('message', async (msg) => {
    if (!msg || msg.type !== 'call') return;
    let reply;
    try {
      const fn = commands[msg.name];
      if (typeof fn !== 'function') throw new Error(`no command ${msg.name}`);
      reply = { type: 'reply', id: msg.id, ok: true, value: await fn(...(msg.args || [])) };
    } catch (err) {
      reply = { type: 'reply', id: msg.id, ok: false, error: err?.stack || String(err) };
    }
    if (process.connected) process.send(reply);
  });
  process.on('disconnect', () => process.exit(0));
  const address = server && server.listening ? server.address() : null;
  process.send({
    type: 'ready',
    port: app.port ?? (address && typeof address === 'object' ? address.port : null),
    isFastHttp: app.isFastHttp ?? (server ? isFastHttp(server) : false),
    info: app.info || {},
  });
}

main().catch((err) => {
  console.error(err?.stack || err);
  process.exit(70);
});
