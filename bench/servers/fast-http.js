'use strict';

// fast-http under test: the package root (bench/servers -> ../..), loaded the
// way users load it, so this measures what `require('fast-http')` gives them.
// Identical to node-http.js except for the modules passed to serve().

const fastHttp = require('../..');

require('../handlers').serve(fastHttp, () => {
  if (!fastHttp.https) throw new Error("fast-http has no https server (require('fast-http').https is missing)");
  return fastHttp.https;
});
