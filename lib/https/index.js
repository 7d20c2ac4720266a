'use strict';
// fast-http/https: node:https's server API on the addon (see server.js), node's own where no
// addon loads; everything else node:https exports (Agent, globalAgent, get, request) is node's
// own (lib/internal/node-exports.js).
const https = require('node:https');
const { moduleOf } = require('../internal/node-exports');

let Server;
let createServer;
try {
  require('../internal/native');
  ({ Server, createServer } = require('./server'));
} catch (err) {
  if (err?.code !== 'ERR_FAST_HTTP_NO_ADDON' || process.env.FAST_HTTP_REQUIRE_NATIVE === '1') {
    throw err;
  }
  ({ Server, createServer } = https);
}

module.exports = moduleOf(https, { Server, createServer });
