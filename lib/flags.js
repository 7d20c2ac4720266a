'use strict';
// The bit flags JS and the addon exchange, as the addon defines them (src/binding/flags.rs):
// F_* request facts, R_* how to write a response, S_* server settings.
const { flags } = require('./binding');

module.exports = Object.freeze({ ...flags });
