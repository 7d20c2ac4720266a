'use strict';
// FAST_HTTP_STATS=<file>: one JSON line per process at exit, saying what fast-http served
// natively and what went through the fallback (Node's own http machinery); docs/diagnostics.md
// describes each key. Servers usually
// stop by Ctrl-C or SIGTERM, so the line is also written on SIGINT / SIGTERM / SIGHUP,
// without changing what the signal does.
const fs = require('node:fs');

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

const counters = {
  serversCreated: 0, fallbackConnections: 0, injectedConnections: 0, tlsHandOffs: 0,
  httpsServersCreated: 0, httpsFallbackServers: 0,
};
/** Per reason an https server was node's own (options.js's text), how many were. */
const httpsFallbackReasons = { __proto__: null };
let hooked = false;
let written = false;

function write(file) {
  if (written) return;
  written = true;
  let native = [0, 0, 0, 0, 'epoll'];
  try {
    native = require('./native').binding.stats();
  } catch {}
  const line = {
    pid: process.pid,
    serversCreated: counters.serversCreated,
    connectionsAccepted: native[1],
    requestsDispatched: native[2],
    fallbackConnections: counters.fallbackConnections,
    injectedConnections: counters.injectedConnections,
    tlsHandOffs: counters.tlsHandOffs,
    httpsServersCreated: counters.httpsServersCreated,
    httpsFallbackServers: counters.httpsFallbackServers,
    httpsFallbackReasons: { ...httpsFallbackReasons },
    // Handshakes the addon completed.
    tlsHandshakes: native[3] ?? 0,
    driver: native[4] ?? 'epoll',
  };
  try {
    fs.appendFileSync(file, JSON.stringify(line) + '\n');
  } catch {}
}

function hook() {
  // Read once: process.env is a lookup in the environment on every access.
  if (hooked) return;
  hooked = true;
  const file = process.env.FAST_HTTP_STATS;
  if (!file) return;
  process.on('exit', () => write(file));
  // Signals reach the main thread only.
  if (!require('node:worker_threads').isMainThread) return;
  for (const signal of SIGNALS) {
    // A listener turns off the signal's default action (death). Ours runs first (prepended),
    // so it sees the app's listeners, `once` ones included, before they run: with any, the
    // app decides what the signal does and the line waits for its exit; with none, the
    // process would have died by the signal, so the line is written, ours removed, and the
    // signal raised again with the default action back.
    process.prependListener(signal, function onSignal() {
      if (process.listenerCount(signal) > 1) return;
      write(file);
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    });
  }
}

function serverCreated() {
  counters.serversCreated++;
  hook();
}

/**
 * `kind`: 'injected' (the app's emit('connection')), 'handOff' (a server name rustls refuses,
 * ../https/hand-off.js) or 'stepAside' (a TLS event only node's TLS tells is listened for).
 */
function fallbackConnection(kind) {
  counters.fallbackConnections++;
  if (kind === 'injected') counters.injectedConnections++;
  else if (kind === 'handOff') counters.tlsHandOffs++;
  hook();
}

/**
 * An https server made: fast-http's (`fallbackReason` null), or node's own for options it
 * lacks. True when that reason is new in this process.
 */
function httpsServerCreated(fallbackReason) {
  counters.httpsServersCreated++;
  hook();
  if (fallbackReason === null) return false;
  counters.httpsFallbackServers++;
  const seen = fallbackReason in httpsFallbackReasons;
  httpsFallbackReasons[fallbackReason] = (httpsFallbackReasons[fallbackReason] ?? 0) + 1;
  return !seen;
}

module.exports = {
  counters, httpsFallbackReasons, hook, serverCreated, fallbackConnection, httpsServerCreated,
};
