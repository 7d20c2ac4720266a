'use strict';

// Another fast-http checkout (`node bench/run.js --base DIR`): the code before a change,
// measured in the same alternating rounds as bench/servers/fast-http.js.
require('../handlers').serve(require(process.env.FAST_HTTP_BENCH_BASE));
