'use strict';

// fast-http under test: the package root (bench/servers -> ../..), loaded the
// way users load it, so this measures what `require('fast-http')` gives them.
// Identical to node-http.js except for the module passed to serve().

require('../handlers').serve(require('../..'));
