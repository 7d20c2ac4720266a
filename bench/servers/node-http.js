'use strict';

// node:http baseline. Identical to fast-http.js except for the module passed
// to serve(): same handlers, same options, same listen call.

require('../handlers').serve(require('node:http'));
