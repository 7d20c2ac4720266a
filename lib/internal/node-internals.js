'use strict';
// node:http's own classes and the private symbols its methods keep state under, captured
// before `register` swaps fast-http into the http module. fast-http's request and response
// objects keep node's state layout, so node's own methods (which Express and friends call
// after swapping prototypes) work on them unchanged.

const http = require('node:http');
const httpServer = require('_http_server');
const httpOutgoing = require('_http_outgoing');

function symbolsOf(obj) {
  const out = Object.create(null);
  for (const s of Object.getOwnPropertySymbols(obj)) out[s.description] = s;
  return out;
}

const outSyms = symbolsOf(new http.OutgoingMessage());
const inSyms = symbolsOf(new http.IncomingMessage(null));
const probeServer = new http.Server();
const serverSyms = symbolsOf(probeServer);

const functionHasInstance = Function.prototype[Symbol.hasInstance];

/**
 * Makes `x instanceof fast` hold for every object of node's class `node` too (fast extends
 * it): under `register`, http.IncomingMessage is fast-http's, and a response node's own http
 * client made must still be `instanceof http.IncomingMessage`.
 */
function sameInstances(fast, node) {
  Object.defineProperty(fast, Symbol.hasInstance, {
    __proto__: null,
    configurable: true,
    value: function hasInstance(obj) {
      return functionHasInstance.call(node, obj);
    },
  });
}

module.exports = {
  sameInstances,
  NodeServer: http.Server,
  NodeServerResponse: http.ServerResponse,
  NodeIncomingMessage: http.IncomingMessage,
  nodeEnd: http.OutgoingMessage.prototype.end,
  storeHTTPOptions: httpServer.storeHTTPOptions,
  parseUniqueHeadersOption: httpOutgoing.parseUniqueHeadersOption,
  kConnectionsCheckingInterval: httpServer.kConnectionsCheckingInterval,
  METHODS: http.METHODS,
  STATUS_CODES: http.STATUS_CODES,
  validateHeaderName: http.validateHeaderName,
  validateHeaderValue: http.validateHeaderValue,
  maxHeaderSize: http.maxHeaderSize,
  kOutHeaders: outSyms.kOutHeaders,
  kNeedDrain: outSyms.kNeedDrain,
  kCorked: outSyms.corked,
  kUniqueHeaders: serverSyms.kUniqueHeaders,
  kIncomingMessage: serverSyms.IncomingMessage,
  kServerResponse: serverSyms.ServerResponse,
  kHeaders: inSyms.kHeaders,
  kHeadersCount: inSyms.kHeadersCount,
  kTrailers: inSyms.kTrailers,
  kTrailersCount: inSyms.kTrailersCount,
};
