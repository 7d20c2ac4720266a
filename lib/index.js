'use strict';
// fast-http: node:http's server API on a native core.
//
// Where no addon loads (Windows, a platform without a prebuilt binary and no Rust, a failed
// build), the API is node:http's own server classes, with one line on stderr naming the
// platform and the fix: a drop-in accelerator must never be why an app does not start.
// FAST_HTTP_REQUIRE_NATIVE=1 makes require() throw ERR_FAST_HTTP_NO_ADDON instead (for
// production checks); `native`, isFastHttpServer() and `server.fastHttp` say which one an app
// got. Everything else node:http exports is node's own (lib/internal/node-exports.js).
const http = require('node:http');
const { moduleOf } = require('./internal/node-exports');

let createServer;
let Server;
let IncomingMessage;
let ServerResponse;
let isFastHttpServer;
let native;

try {
  require('./internal/native');
  native = true;
} catch (err) {
  if (err?.code !== 'ERR_FAST_HTTP_NO_ADDON' || process.env.FAST_HTTP_REQUIRE_NATIVE === '1') {
    throw err;
  }
  native = false;
  // One line, whatever the fix says: apps and log collectors read stderr line by line.
  process.stderr.write(`fast-http: no native addon for ${err.platform}, so node:http's own ` +
    `server is used. To fix: ${err.fix} (FAST_HTTP_REQUIRE_NATIVE=1 makes this an error.)\n`);
}

if (native) {
  ({ Server, createServer, isFastHttpServer } = require('./http/server'));
  ({ IncomingMessage } = require('./http/incoming'));
  ({ ServerResponse } = require('./http/response'));
  // What served this server, for apps and bug reports (https servers node serves say why).
  Object.defineProperty(Server.prototype, 'fastHttp', {
    __proto__: null, configurable: true, writable: true, value: Object.freeze({ native: true }),
  });
} else {
  ({ Server, createServer, IncomingMessage, ServerResponse } = http);
  isFastHttpServer = function isFastHttpServer(server) {
    return false;
  };
}

module.exports = moduleOf(http, {
  createServer, Server, IncomingMessage, ServerResponse, isFastHttpServer, native,
});

// node:https's server API on the addon (fast-http/https). Loaded when first read: node:https
// and node:tls cost an app that serves only http some milliseconds of start-up.
Object.defineProperty(module.exports, 'https', {
  __proto__: null,
  configurable: true,
  enumerable: true,
  get() {
    return require('./https');
  },
});
