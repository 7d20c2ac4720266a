'use strict';
// `node -r fast-http/register app.js` (or `require('fast-http/register')` first thing in an
// app): node:http's server becomes fast-http's. The http module is patched when it is first
// required, not loaded here, so startup stays as fast as before.
const Module = require('node:module');
const stats = require('./internal/stats');

let patched = false;

/**
 * fast-http's API, or null when its addon cannot load: the app then keeps node:http, with the
 * one warning line lib/index.js writes (platform and fix), unless FAST_HTTP_REQUIRE_NATIVE=1
 * asks to fail instead (index.js throws then).
 */
function loadFast() {
  let fast;
  try {
    fast = require('./index');
  } catch (err) {
    if (process.env.FAST_HTTP_REQUIRE_NATIVE === '1') throw err;
    // A missing addon does not throw (index.js falls back itself); anything else is a bug in
    // fast-http, and the app still starts, on node:http.
    const why = String(err?.message ?? err).split('\n')[0];
    process.stderr.write(`fast-http/register: keeping node:http (${why})\n`);
    return null;
  }
  return fast.native ? fast : null;
}

function patch(http) {
  if (patched) return http;
  patched = true;
  const fast = loadFast();
  if (fast === null) return http;
  http.createServer = fast.createServer;
  http.Server = fast.Server;
  http.IncomingMessage = fast.IncomingMessage;
  http.ServerResponse = fast.ServerResponse;
  // ESM `import { createServer } from 'node:http'` sees the patched functions too.
  Module.syncBuiltinESMExports();
  return http;
}

const libDir = __dirname;
const originalLoad = Module._load;
Module._load = function load(request, parent, isMain) {
  const exports = originalLoad.apply(this, arguments);
  // fast-http's own modules load node's http as it is (they capture node's classes).
  if (!patched && (request === 'http' || request === 'node:http') &&
      !(parent?.filename && parent.filename.startsWith(libDir))) {
    patch(exports);
  }
  return exports;
};

// An ESM entry point imports node:http without Module._load: patch before it runs.
const entry = process.argv[1] || '';
if (/\.mjs$/.test(entry) || process.execArgv.some((a) => a.startsWith('--import')) ||
    isModulePackage(entry)) {
  patch(require('node:http'));
}

function isModulePackage(file) {
  if (!file || /\.c?js$/.test(file) === false) return false;
  if (/\.cjs$/.test(file)) return false;
  try {
    const path = require('node:path');
    const fs = require('node:fs');
    let dir = path.dirname(path.resolve(file));
    for (;;) {
      const pj = path.join(dir, 'package.json');
      if (fs.existsSync(pj)) return JSON.parse(fs.readFileSync(pj, 'utf8')).type === 'module';
      const up = path.dirname(dir);
      if (up === dir) return false;
      dir = up;
    }
  } catch {
    return false;
  }
}

stats.hook();

module.exports = { patch };
