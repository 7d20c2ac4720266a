'use strict';
// fast-http: node:http's server API on a native core.
const { Server, createServer, isFastHttpServer } = require('./http/server');
const { IncomingMessage } = require('./http/incoming');
const { ServerResponse } = require('./http/response');
const {
  METHODS, STATUS_CODES, validateHeaderName, validateHeaderValue, maxHeaderSize,
} = require('./internal/node-internals');

module.exports = {
  createServer,
  Server,
  IncomingMessage,
  ServerResponse,
  METHODS,
  STATUS_CODES,
  maxHeaderSize,
  validateHeaderName,
  validateHeaderValue,
  isFastHttpServer,
};
