'use strict';
// Connections the addon cannot serve — a JS socket handed to the server with
// `server.emit('connection', socket)`, a TLS connection the addon hands to node's TLS
// (../https/hand-off.js) — run through Node's own http machinery: a hidden
// node:http Server (for an https server, a node:https Server with the same TLS options) with
// the same settings parses them and re-emits its events on ours.
const { NodeServer, hasShouldUpgradeCallback } = require('../internal/node-internals');
const {
  kShadow, kFallbackSockets, kMakeShadow, kTlsSocket,
} = require('../internal/symbols');
const stats = require('../internal/stats');

const FORWARDED = new Set([
  'request', 'checkContinue', 'checkExpectation', 'upgrade', 'connect', 'clientError',
  'timeout', 'dropRequest',
]);

// A TLS shadow's own events, for the app's listeners on our server. 'secureConnection' is
// the shadow's too: node's https server serves HTTP from its listener there.
const TLS_FORWARDED = new Set([...FORWARDED, 'tlsClientError', 'keylog', 'newSession',
  'resumeSession', 'OCSPRequest']);
const TLS_SHARED = new Set(['secureConnection']);
const NONE = new Set();

const SETTINGS = [
  'timeout', 'keepAliveTimeout', 'headersTimeout', 'requestTimeout', 'maxHeadersCount',
  'maxRequestsPerSocket', 'requireHostHeader', 'joinDuplicateHeaders', 'maxHeaderSize',
  'insecureHTTPParser', 'httpValidation', 'rejectNonStandardBodyWrites', 'httpAllowHalfOpen',
];

function shadowOf(server) {
  let shadow = server[kShadow];
  if (shadow === undefined) {
    const tls = server[kMakeShadow] !== undefined;
    shadow = tls ? server[kMakeShadow]() : new NodeServer();
    const forwarded = tls ? TLS_FORWARDED : FORWARDED;
    const shared = tls ? TLS_SHARED : NONE;
    const emit = shadow.emit;
    shadow.emit = function forward(event, ...args) {
      // The TLSSocket node's https server parses HTTP on, for the raw socket it wraps.
      if (event === 'secureConnection' && args[0]._parent != null) {
        args[0]._parent[kTlsSocket] = args[0];
      }
      if (forwarded.has(event)) return server.emit(event, ...args);
      if (shared.has(event)) server.emit(event, ...args);
      return emit.call(this, event, ...args);
    };
    // node's server code asks who listens (an Upgrade request is 'upgrade' only when
    // someone listens for it, 'checkContinue' replaces the automatic 100 Continue, ...).
    const listenerCount = shadow.listenerCount;
    shadow.listenerCount = function forwardedCount(event, ...rest) {
      if (forwarded.has(event)) return server.listenerCount(event, ...rest);
      return listenerCount.call(this, event, ...rest);
    };
    if (hasShouldUpgradeCallback) {
      // node asks the server it parses for (the shadow) whether a request upgrades.
      shadow.shouldUpgradeCallback = function forwardedUpgradeCallback(req) {
        return server.shouldUpgradeCallback(req);
      };
    }
    server[kShadow] = shadow;
  }
  for (const k of SETTINGS) shadow[k] = server[k];
  return shadow;
}

/**
 * `kind`: who handed the socket over: the app ('injected'), or the addon ('handOff', 'stepAside':
 * ../https/hand-off.js).
 */
function serve(server, socket, kind = 'injected') {
  stats.fallbackConnection(kind);
  const shadow = shadowOf(server);
  const set = server[kFallbackSockets];
  set.add(socket);
  socket.once('close', () => {
    set.delete(socket);
    server._onDrained();
  });
  shadow.emit('connection', socket);
  // Handlers and `socket.server` see the server the app created.
  socket.server = server;
}

/**
 * The socket node's server parses for a socket handed to it: the socket itself, or for an
 * https server the TLSSocket over it once its handshake is done (undefined before).
 */
function httpSocketOf(socket) {
  if (socket.server?.[kMakeShadow] === undefined) return socket;
  return socket[kTlsSocket];
}

module.exports = { serve, shadowOf, httpSocketOf };
