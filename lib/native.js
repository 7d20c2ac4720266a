'use strict';
// The addon, initialized once per thread with the callbacks it calls for native events.
const binding = require('./binding');
const { METHODS, STATUS_CODES } = require('./node-internals');

/** Server objects by native server id. */
const servers = [];
/** Socket objects by native connection id, for connections JS holds objects for. */
const sockets = new Map();

let initialized = false;

function init(handlers) {
  if (initialized) return;
  initialized = true;
  const codes = [];
  for (const code of Object.keys(STATUS_CODES)) codes.push(Number(code), STATUS_CODES[code]);
  binding.init(handlers, METHODS, codes);
  // node:http writes an ended response at once, so it reaches the client even when the
  // process exits right after: write what is queued before this one exits.
  process.on('exit', binding.flushAll);
}

module.exports = { binding, servers, sockets, init };
