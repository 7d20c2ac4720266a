'use strict';

// node:http baseline. Identical to fast-http.js except for the modules passed
// to serve(): same handlers, same options, same listen call.

require('../handlers').serve(require('node:http'), () => require('node:https'));
