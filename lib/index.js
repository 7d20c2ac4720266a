'use strict';
// fast-http: node:http's server API on a native core.
const { Server, createServer, isFastHttpServer } = require('./server');
const { IncomingMessage } = require('./incoming');
const { ServerResponse } = require('./response');
const {
  METHODS, STATUS_CODES, validateHeaderName, validateHeaderValue, maxHeaderSize,
} = require('./node-internals');

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
