'use strict';

// Another fast-http checkout (`node bench/run.js --base DIR`): the code before a change,
// measured in the same alternating rounds as bench/servers/fast-http.js.
const base = require(process.env.FAST_HTTP_BENCH_BASE);

require('../handlers').serve(base, () => {
  if (!base.https) throw new Error('the base checkout has no https server');
  return base.https;
});
