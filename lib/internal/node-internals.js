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
const inProtoSyms = symbolsOf(http.IncomingMessage.prototype);
const nodeMajor = Number(process.versions.node.split('.')[0]);
const inSyms = symbolsOf(new http.IncomingMessage(null));
const probeServer = new http.Server();
const serverSyms = symbolsOf(probeServer);

let ownerSymbol;

/**
 * net's owner_symbol: a handle's JS owner. cluster's round-robin hand-off reads the server's
 * maxConnections / _connections / dropMaxConnection through it. Taken from a Socket node
 * builds around a plain object (no I/O happens: the object is not a real handle).
 */
function handleOwnerSymbol() {
  if (ownerSymbol === undefined) {
    const handle = {};
    try {
      new (require('node:net').Socket)({ handle, readable: false, writable: false });
    } catch {
      // No owner: cluster then accepts every connection for the server, as before.
    }
    ownerSymbol = Object.getOwnPropertySymbols(handle)
      .find((s) => s.description === 'owner_symbol') ?? null;
  }
  return ownerSymbol;
}

const functionHasInstance = Function.prototype[Symbol.hasInstance];

/**
 * Whether node's parser refuses a request with more header lines than parser.maxHeaderPairs
 * allows (HPE_HEADER_OVERFLOW, Node 22+) instead of keeping the first ones (Node 20): asked
 * of node's own parser.
 */
function detectHeaderCountLimit() {
  try {
    const { HTTPParser } = require('_http_common');
    const parser = new HTTPParser();
    parser.initialize(HTTPParser.REQUEST, {}, 0, 0);
    parser.maxHeaderPairs = 2;
    parser[HTTPParser.kOnHeadersComplete] = () => 0;
    const r = parser.execute(Buffer.from('GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\n\r\n'));
    parser.close();
    return r instanceof Error && r.code === 'HPE_HEADER_OVERFLOW';
  } catch {
    return false;
  }
}

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
  handleOwnerSymbol,
  headerCountLimit: detectHeaderCountLimit(),
  // net's onconnection drops at `maxConnections != null` from Node 22 on (0 drops every
  // connection); Node 20 only at a truthy maxConnections.
  nullableMaxConnections: nodeMajor >= 22,
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
  // Version features, found on node's own objects where they show (undefined / false where
  // the running Node does not have them).
  kOptimizeEmptyRequests: serverSyms.OptimizeEmptyRequestsOption,
  kDetachAbortSignal: inProtoSyms.kDetachAbortSignal,
  hasShouldUpgradeCallback: typeof probeServer.shouldUpgradeCallback === 'function',
  // Node 24+'s httpValidation server option (node's storeHTTPOptions sets the property).
  hasHttpValidation: Object.hasOwn(probeServer, 'httpValidation'),
  defaultShouldUpgradeCallback: probeServer.shouldUpgradeCallback,
  // Node 24's socketOnClose also aborts the responses waiting for the socket, and its
  // socketOnDrain emits a response's 'drain' only once res.writableLength is 0.
  abortsWaitingResponses: nodeMajor >= 24,
  drainWaitsForResponse: nodeMajor >= 24,
  // Node 26's parserOnIncoming lets llhttp read an Upgrade request's body (it returned 2,
  // skip the body, before): the body goes through req and 'upgrade' gets an UpgradeStream
  // when the body has not all arrived with the head.
  upgradeBodyFirst: nodeMajor >= 26,
  kHeaders: inSyms.kHeaders,
  kHeadersCount: inSyms.kHeadersCount,
  kTrailers: inSyms.kTrailers,
  kTrailersCount: inSyms.kTrailersCount,
};
