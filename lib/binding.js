'use strict';
// Loads the native addon: the binary built in this package (npm install compiles it), else a
// per-platform prebuilt package `fast-http-<triple>` when one is installed.
const path = require('node:path');
const { binaryName, triple } = require('./binding-name');

function load() {
  const local = path.join(__dirname, '..', binaryName());
  try {
    return require(local);
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND') throw err;
    try {
      return require(`fast-http-${triple()}`);
    } catch {
      const e = new Error(`fast-http: native addon not found (${local}). ` +
        'Run `npm install` (or `npm run build`) in the fast-http package to compile it.');
      e.code = 'ERR_FAST_HTTP_NO_ADDON';
      throw e;
    }
  }
}

module.exports = load();
