'use strict';
/* global process -- the eslint config gives node's globals to .js files; this one is .cjs */

// Deno runs a CommonJS program only from a file named .cjs (or under a package.json with
// "type": "commonjs", which this package does not have). bench/run.js starts every Deno row as
// `deno run ... cjs-entry.cjs <server file> <workload> <port>`: this file takes the server
// file out of argv and requires it, so Deno runs the same server files as Node and Bun (a file
// require()d from here is loaded as CommonJS whatever its extension).

// Resolved from the working directory, as `node <file>` resolves it (require() alone would
// look for a relative name under node_modules).
const file = require('node:path').resolve(process.argv[2]);
process.argv.splice(2, 1);
require(file);
