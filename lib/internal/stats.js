'use strict';
// FAST_HTTP_STATS=<file>: one JSON line per process at exit, saying what fast-http served
// natively and what went through the fallback (Node's own http machinery).
const fs = require('node:fs');

const counters = { serversCreated: 0, fallbackConnections: 0, injectedConnections: 0 };
let hooked = false;

function hook() {
  // Read once: process.env is a lookup in the environment on every access.
  if (hooked) return;
  hooked = true;
  const file = process.env.FAST_HTTP_STATS;
  if (!file) return;
  process.on('exit', () => {
    let native = [0, 0, 0];
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
    };
    try {
      fs.appendFileSync(file, JSON.stringify(line) + '\n');
    } catch {}
  });
}

function serverCreated() {
  counters.serversCreated++;
  hook();
}

function fallbackConnection(injected) {
  counters.fallbackConnections++;
  if (injected) counters.injectedConnections++;
  hook();
}

module.exports = { counters, hook, serverCreated, fallbackConnection };
