'use strict';
// Server: node:http's Server API (it inherits node's prototype, so `instanceof http.Server`
// holds) with listening, accepting and connection bookkeeping in the addon. Settings that
// the addon acts on (timeouts, keep-alive, header size, which events have listeners) are
// accessors that push the new values down when they change.
const { setInterval, clearInterval, nextTick } = require('../internal/scheduling');
const {
  S_HAS_CONNECTION, S_HAS_TIMEOUT, S_HAS_UPGRADE,
  S_HAS_CONNECT, S_NO_DELAY, S_KEEP_ALIVE, S_HALF_OPEN,
  S_LENIENT, S_HAS_CLIENT_ERROR, S_HAS_DROP, S_RELAXED, S_UPGRADE_BODY, S_HAS_KEYLOG,
  S_TLS_TO_NODE,
} = require('../internal/native').flags;
const EventEmitter = require('node:events');
const net = require('node:net');
const { binding, servers, defaults } = require('../internal/native');
require('./native-events');
const {
  NodeServer, storeHTTPOptions, kConnectionsCheckingInterval, parseUniqueHeadersOption, maxHeaderSize: defaultMaxHeaderSize,
  kIncomingMessage, kServerResponse, kUniqueHeaders, NodeIncomingMessage, NodeServerResponse,
  sameInstances, headerCountLimit, nullableMaxConnections, hasHttpValidation, upgradeBodyFirst,
} = require('../internal/node-internals');
const { IncomingMessage, isFastRequest } = require('./incoming');
const { keepAliveBuffer, destroyConnections, socketFor } = require('./server-logic');
const { ServerResponse } = require('./response');
const { FastSocket } = require('./socket');
const errors = require('../internal/errors');
const {
  kSid, kConfig, kListening, kAddress, kFallbackSockets, kEagerHeaders, kClosed, kEmitSeen,
  kWatchEmit, kConnectionGone, kTlsServer, kTlsToNode,
} = require('../internal/symbols');
const stats = require('../internal/stats');
const diagnostics = require('./diagnostics');
const { serve: serveFallback, httpSocketOf } = require('./fallback');
const {
  listen: listenWith, releaseHandles, refHandles, kNativeSid, kReleaseNative,
} = require('./listen');
const { serverClosed, patchProcess } = require('./open-handles');
const { defineUpgradeCallback, initUpgradeCallback } = require('./upgrade-callback');

/** node's isLenient(): the process-wide --insecure-http-parser flag. */
const processLenient = process.execArgv.includes('--insecure-http-parser') ||
  /(^|\s)--insecure-http-parser(\s|$)/.test(process.env.NODE_OPTIONS || '');

/**
 * How leniently the addon parses requests (S_RELAXED, S_LENIENT or neither), chosen as node's
 * calculateLenientFlags chooses llhttp's lenient flags: httpValidation where the running Node
 * has it ('strict' even under --insecure-http-parser), else insecureHTTPParser, else the
 * process flag.
 */
function leniencyFlags(server) {
  const validation = hasHttpValidation ? server.httpValidation : undefined;
  if (validation === 'strict') return 0;
  if (validation === 'relaxed') return S_RELAXED;
  if (validation === 'insecure') return S_LENIENT;
  const lenient = server.insecureHTTPParser === undefined ? processLenient
    : !!server.insecureHTTPParser;
  return lenient ? S_LENIENT : 0;
}

const LISTENER_FLAGS = {
  __proto__: null,
  connection: S_HAS_CONNECTION,
  timeout: S_HAS_TIMEOUT,
  upgrade: S_HAS_UPGRADE,
  connect: S_HAS_CONNECT,
  clientError: S_HAS_CLIENT_ERROR,
  drop: S_HAS_DROP,
  // TLS key log lines are collected only for a server with a listener, as node's.
  keylog: S_HAS_KEYLOG,
  // What only OpenSSL tells (its session cache, OCSP stapling): while the app listens, new
  // TLS connections are node's TLS's (../https/hand-off.js).
  newSession: S_TLS_TO_NODE,
  resumeSession: S_TLS_TO_NODE,
  OCSPRequest: S_TLS_TO_NODE,
};
const TO_NODE_EVENTS = ['newSession', 'resumeSession', 'OCSPRequest'];

/**
 * Events node emits on the server whether or not anything listens (net's onconnection, the
 * 'drop' at maxConnections, socketOnTimeout, socketOnError): an `emit` wrapped by an APM agent
 * or a spy (on the server, http.Server.prototype or EventEmitter.prototype) sees every one of
 * them on node:http, so the addon reports them as if a listener were there.
 */
const ALWAYS_EMITTED = ['connection', 'drop', 'timeout', 'clientError'];
const stockEmit = EventEmitter.prototype.emit;

const kClosing = Symbol('fast-http.closing');
/** Set during close() when the addon said the server has no connection. */
const kNoNativeConns = Symbol('fast-http.noNativeConns');

function Server(options, requestListener) {
  if (!(this instanceof Server)) return new Server(options, requestListener);
  initServer.call(this, options, requestListener);
}

/** node's Server(options, listener) arguments: [options, listener], options an object. */
function serverArgs(options, requestListener) {
  if (typeof options === 'function') return [{}, options];
  if (options == null) return [{}, requestListener];
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw errors.ERR_INVALID_ARG_TYPE('options', 'of type object', options);
  }
  return [options, requestListener];
}

/** Server's constructor body, which lib/https/server.js runs on its own servers too. */
function initServer(options, requestListener) {
  [options, requestListener] = serverArgs(options, requestListener);
  this[kConfig] = {
    timeout: defaults.timeout,
    keepAliveTimeout: defaults.keepAliveTimeout,
    headersTimeout: defaults.headersTimeout,
    requestTimeout: defaults.requestTimeout,
    connectionsCheckingInterval: defaults.connectionsCheckingInterval,
    maxHeaderSize: undefined,
    maxRequestsPerSocket: 0,
    maxConnections: undefined,
    maxHeadersCount: null,
    keepAliveTimeoutBuffer: undefined,
    flags: ((options.noDelay ?? true) ? S_NO_DELAY : 0) | (upgradeBodyFirst ? S_UPGRADE_BODY : 0),
    keepAliveInitialDelay: 0,
  };
  this[kSid] = -1;
  storeHTTPOptions.call(this, options);
  initUpgradeCallback(this, options);
  if (!options.IncomingMessage) this[kIncomingMessage] = IncomingMessage;
  if (!options.ServerResponse) this[kServerResponse] = ServerResponse;
  net.Server.call(this, {
    allowHalfOpen: true,
    noDelay: options.noDelay ?? true,
    keepAlive: options.keepAlive,
    keepAliveInitialDelay: options.keepAliveInitialDelay,
    highWaterMark: options.highWaterMark,
  });
  if (options.keepAlive) this[kConfig].flags |= S_KEEP_ALIVE;
  this[kConfig].keepAliveInitialDelay = Math.floor((options.keepAliveInitialDelay || 0) / 1000);
  this[kListening] = false;
  this[kAddress] = null;
  this[kClosing] = false;
  this[kFallbackSockets] = new Set();
  this[kEagerHeaders] = false;
  this.httpAllowHalfOpen = false;
  this.timeout = 0;
  this.maxHeadersCount = null;
  this.maxRequestsPerSocket = 0;
  this[kUniqueHeaders] = parseUniqueHeadersOption(options.uniqueHeaders);

  stats.serverCreated();
  this.on('newListener', onNewListener);
  this.on('removeListener', onRemoveListener);
  this.on('connection', fallbackConnection);
  this.on('listening', setupConnectionsTracking);
  if (requestListener) this.on('request', requestListener);
}
Object.setPrototypeOf(Server.prototype, NodeServer.prototype);
Server.prototype[kNoNativeConns] = false;
Object.setPrototypeOf(Server, NodeServer);
sameInstances(Server, NodeServer);
defineUpgradeCallback(Server.prototype);

/**
 * The server's half in the addon, made when it starts listening (node's handle is made by
 * listen too) and freed once it has closed and drained, so a server costs the addon nothing
 * while it does not listen and needs no finalizer. A server with the settings of the last one
 * configured starts with a copy of them (serverCreate(sameAsLast): one crossing).
 */
function nativeServer(server) {
  let sid = server[kSid];
  if (sid < 0) {
    const previous = lastOptions;
    const config = configFor(server);
    sid = server[kSid] = binding.serverCreate(config === previous);
    if (config !== previous) binding.serverConfig(sid, config);
  }
  return sid;
}

/** Frees the server's half in the addon when it neither listens nor has connections. */
function releaseNative(server) {
  const sid = server[kSid];
  if (sid < 0 || server[kListening] || server[kClosing]) return;
  forgetNative(server, sid);
  binding.serverFree(sid);
}

function forgetNative(server, sid) {
  server[kSid] = -1;
  if (servers[sid] === server) servers[sid] = undefined;
}

/**
 * Header lines a request may have where node's parser enforces maxHeadersCount (its
 * parser.maxHeaderPairs: maxHeadersCount pairs, 2000 entries by default, 0 for none).
 */
function headerLineLimit(count) {
  if (typeof count !== 'number') return defaults.maxHeaderFields;
  return count > 0 ? count : 0;
}

/**
 * The count of connections at which net's onconnection drops new ones (`_connections >=
 * maxConnections`, a numeric comparison), -1 for none.
 */
function connectionLimit(v) {
  if (nullableMaxConnections ? v == null : !v) return -1;
  const n = Number(v);
  if (Number.isNaN(n) || n === Infinity) return -1;
  return n > 0 ? Math.ceil(n) : 0;
}

/**
 * The last options object handed to serverConfig and what it was made from: most servers
 * have the same settings, and a server is often made, listened on and closed in a loop
 * (tests, CLIs), so they share one object instead of building it (and its Keep-Alive line)
 * each time.
 */
let lastOptions = null;
const lastInputs = new Array(12);

function pushConfig(server) {
  const sid = server[kSid];
  if (sid >= 0) binding.serverConfig(sid, configFor(server));
}

/**
 * The options object for serverConfig: `lastOptions` again when the server's settings are
 * the ones it was made from (the addon then still has them: see serverCreate).
 */
function configFor(server) {
  const c = server[kConfig];
  c.flags = (c.flags & ~(S_LENIENT | S_RELAXED)) | leniencyFlags(server);
  const kat = c.keepAliveTimeout;
  const buffer = kat ? keepAliveBuffer(server) : 0;
  const inputs = lastInputs;
  if (lastOptions === null ||
      inputs[0] !== c.maxHeaderSize || inputs[1] !== kat || inputs[2] !== buffer ||
      inputs[3] !== c.timeout || inputs[4] !== c.headersTimeout ||
      inputs[5] !== c.requestTimeout || inputs[6] !== c.connectionsCheckingInterval ||
      inputs[7] !== c.flags || inputs[8] !== c.keepAliveInitialDelay ||
      inputs[9] !== c.maxConnections || inputs[10] !== c.maxRequestsPerSocket ||
      inputs[11] !== c.maxHeadersCount) {
    inputs[0] = c.maxHeaderSize;
    inputs[1] = kat;
    inputs[2] = buffer;
    inputs[3] = c.timeout;
    inputs[4] = c.headersTimeout;
    inputs[5] = c.requestTimeout;
    inputs[6] = c.connectionsCheckingInterval;
    inputs[7] = c.flags;
    inputs[8] = c.keepAliveInitialDelay;
    inputs[9] = c.maxConnections;
    inputs[10] = c.maxRequestsPerSocket;
    inputs[11] = c.maxHeadersCount;
    lastOptions = configOptions(c, kat, buffer);
  }
  return lastOptions;
}

/**
 * A timeout the app assigned as it liked (`server.headersTimeout = 'x'` is kept as is): one
 * that is not a number is none, as node's connection checks and the addon take it.
 */
function ms(v) {
  return typeof v === 'number' ? v : 0;
}

function configOptions(c, kat, buffer) {
  const max = c.maxRequestsPerSocket > 0 ? `, max=${c.maxRequestsPerSocket}` : '';
  return {
    maxHeaderSize: c.maxHeaderSize || defaultMaxHeaderSize,
    keepAliveTimeout: kat ? ms(kat + buffer) : 0,
    timeout: ms(c.timeout),
    headersTimeout: ms(c.headersTimeout),
    requestTimeout: ms(c.requestTimeout),
    checkInterval: c.connectionsCheckingInterval,
    flags: c.flags,
    keepAliveDelay: c.keepAliveInitialDelay,
    maxConnections: connectionLimit(c.maxConnections),
    // Node 22+ refuses a request with more headers than maxHeadersCount (node's parser
    // reads parser.maxHeaderPairs); Node 20 keeps the first ones.
    maxHeaderLines: headerCountLimit ? headerLineLimit(c.maxHeadersCount) : 0,
    keepAliveLine: `Keep-Alive: timeout=${Math.floor(kat / 1000)}${max}\r\n`,
  };
}

Object.defineProperty(Server.prototype, 'httpAllowHalfOpen', {
  __proto__: null,
  configurable: true,
  enumerable: true,
  get() {
    return (this[kConfig].flags & S_HALF_OPEN) !== 0;
  },
  set(v) {
    const c = this[kConfig];
    c.flags = v ? (c.flags | S_HALF_OPEN) : (c.flags & ~S_HALF_OPEN);
    pushConfig(this);
  },
});

for (const name of ['timeout', 'keepAliveTimeout', 'headersTimeout', 'requestTimeout',
  'connectionsCheckingInterval', 'maxHeaderSize', 'maxRequestsPerSocket', 'maxConnections',
  'maxHeadersCount', 'keepAliveTimeoutBuffer']) {
  Object.defineProperty(Server.prototype, name, {
    __proto__: null,
    configurable: true,
    enumerable: true,
    get() {
      return this[kConfig][name];
    },
    set(v) {
      this[kConfig][name] = v;
      pushConfig(this);
    },
  });
}

function isExpressApp(fn) {
  return typeof fn === 'function' && typeof fn.handle === 'function' &&
    typeof fn.set === 'function' && fn.request !== null && typeof fn.request === 'object' &&
    !isFastRequest(fn.request);
}

function updateFlags(server, event, delta) {
  const bit = LISTENER_FLAGS[event];
  if (bit === undefined) return;
  // The server's own fallback listener is always there; count only the app's.
  const own = event === 'connection' ? 1 : 0;
  // net.server.socket subscribers need every connection's socket, as 'connection' does.
  const listeners = bit === S_TLS_TO_NODE ?
    TO_NODE_EVENTS.reduce((sum, e) => sum + server.listenerCount(e), server[kTlsToNode] ? 1 : 0) :
    server.listenerCount(event);
  const n = listeners + delta - own +
    (event === 'connection' && diagnostics.serverSocket.hasSubscribers ? 1 : 0) +
    // tls.Server always hears of a connection that fails in its handshake ('tlsClientError').
    (event === 'clientError' && server[kTlsServer] !== undefined ? 1 : 0) +
    (server.emit !== stockEmit && ALWAYS_EMITTED.includes(event) ? 1 : 0);
  const c = server[kConfig];
  const flags = n > 0 ? (c.flags | bit) : (c.flags & ~bit);
  if (flags === c.flags) return;
  c.flags = flags;
  if (server[kSid] >= 0) binding.serverFlags(server[kSid], bit, flags & bit);
}

function onNewListener(event, listener) {
  if (event === 'request' && isExpressApp(listener)) {
    // Express replaces req's prototype with one built on node's IncomingMessage: its
    // requests get node's eager header fields.
    this[kEagerHeaders] = true;
  }
  updateFlags(this, event, 1);
}

function onRemoveListener(event) {
  updateFlags(this, event, 0);
}

function fallbackConnection(socket) {
  if (socket instanceof FastSocket) return;
  serveFallback(this, socket);
}

/** Re-decides the always-emitted events' flags when the server's `emit` is another one. */
Server.prototype[kWatchEmit] = function watchEmit() {
  this[kEmitSeen] = this.emit;
  for (const event of ALWAYS_EMITTED) updateFlags(this, event, 0);
};

Server.prototype.listen = function listen(...args) {
  // Subscribers to net.server.socket that came after the server was made count now, and an
  // emit wrapped since.
  updateFlags(this, 'connection', 0);
  this[kWatchEmit]();
  return listenWith(this, args);
};

// listen.js makes the addon's half when it binds (after a lookup or the cluster's answer,
// a close() in between may have freed it), and frees it when the listen failed.
Server.prototype[kNativeSid] = function () {
  return nativeServer(this);
};
Server.prototype[kReleaseNative] = function () {
  releaseNative(this);
};

/**
 * node's setupConnectionsTracking, on 'listening': the addon does the checking, but code
 * (and node's tests) look at this timer's state.
 */
function setupConnectionsTracking() {
  clearInterval(this[kConnectionsCheckingInterval]);
  this[kConnectionsCheckingInterval] =
    setInterval(noop, this.connectionsCheckingInterval || 30000).unref();
  // An emit wrapped in a listen callback or a later 'listening' listener: seen before the
  // first connection can be accepted (the loop polls only after this tick).
  nextTick(watchEmitAgain, this);
}

function watchEmitAgain(server) {
  if (server.emit !== server[kEmitSeen]) server[kWatchEmit]();
}

function noop() {}

Object.defineProperty(Server.prototype, 'listening', {
  __proto__: null,
  configurable: true,
  enumerable: true,
  get() {
    return this[kListening];
  },
});

Server.prototype.address = function address() {
  if (!this[kListening]) return null;
  const a = this[kAddress];
  return typeof a === 'string' ? a : { ...a };
};

Server.prototype.close = function close(cb) {
  if (typeof cb === 'function') {
    if (!this[kListening]) {
      this.once('close', function onClose() {
        cb(errors.ERR_SERVER_NOT_RUNNING());
      });
    } else {
      this.once('close', cb);
    }
  }
  // Stopping the listener first tells whether there are connections at all (no JS runs in
  // between, so the order is not observable): without any, closing the idle ones needs no
  // crossing into the addon, nor does counting them when 'close' is due.
  const sid = this[kSid];
  let open = 0;
  if (sid >= 0) {
    // Without connections the addon frees the server in the same call (listen makes another).
    open = binding.serverFree(sid);
    if (open === 0) forgetNative(this, sid);
  }
  this[kNoNativeConns] = open === 0;
  try {
    this.closeIdleConnections();
  } finally {
    this[kNoNativeConns] = false;
  }
  clearInterval(this[kConnectionsCheckingInterval]);
  this[kListening] = false;
  this._handle = null;
  this[kClosing] = true;
  releaseHandles(this);
  serverClosed(this);
  const remaining = (open === 0 ? 0 : binding.serverClose(sid)) + this[kFallbackSockets].size;
  if (remaining === 0) nextTick(emitCloseIfDrained, this);
  return this;
};

function emitCloseIfDrained(server) {
  // Stopped listening with no connection: none can have come since.
  server[kNoNativeConns] = true;
  try {
    server._onDrained();
  } finally {
    server[kNoNativeConns] = false;
  }
}

Server.prototype[kConnectionGone] = function connectionGone() {
  if (this[kClosing] && !this[kListening]) nextTick(emitCloseIfDrained, this);
};

Server.prototype._onDrained = function _onDrained() {
  if (!this[kClosing] || this[kListening]) return;
  if (connectionCount(this) > 0) return;
  this[kClosing] = false;
  releaseNative(this);
  this.emit('close');
};

Server.prototype.closeAllConnections = function closeAllConnections() {
  if (this[kSid] >= 0) destroyConnections(this, this[kSid], false);
  for (const s of this[kFallbackSockets]) s.destroy();
};

Server.prototype.closeIdleConnections = function closeIdleConnections() {
  if (this[kSid] >= 0 && !this[kNoNativeConns]) {
    destroyConnections(this, this[kSid], true);
  }
  for (const raw of this[kFallbackSockets]) {
    // The socket node's server parses: an https one's is the TLSSocket, from
    // 'secureConnection' on (node's https server leaves a handshake alone).
    const s = httpSocketOf(raw);
    if (s === undefined) continue;
    if (!s._httpMessage || s._httpMessage.finished) {
      if (!s.parser?.incoming || s.parser.incoming.complete) s.destroy();
    }
  }
};

// The tools that list open handles see every connection (lib/http/open-handles.js).
patchProcess((server) => {
  const sid = server[kSid];
  if (sid >= 0 && server[kListening]) {
    for (const id of binding.serverConns(sid, false)) socketFor(server, id);
  }
});

function connectionCount(server) {
  const fallback = server[kFallbackSockets];
  if (fallback === undefined) return 0; // still in the constructor
  const sid = server[kSid];
  const native = sid < 0 || server[kNoNativeConns] ? 0 :
    binding.serverConns(sid, false).length;
  return native + fallback.size;
}

Server.prototype.getConnections = function getConnections(cb) {
  const n = connectionCount(this);
  if (typeof cb === 'function') nextTick(cb, null, n);
  return this;
};

Server.prototype.ref = function ref() {
  this._unref = false;
  if (this[kSid] >= 0) binding.serverRef(this[kSid], true);
  refHandles(this, true);
  return this;
};

Server.prototype.unref = function unref() {
  this._unref = true;
  if (this[kSid] >= 0) binding.serverRef(this[kSid], false);
  refHandles(this, false);
  return this;
};

// net.Server's count, which cluster's round-robin hand-off and monitoring code read; the
// addon's connections are not net's, so the count is asked for (assignments are net's own).
for (const name of ['connections', '_connections']) {
  Object.defineProperty(Server.prototype, name, {
    __proto__: null,
    configurable: true,
    get() {
      return connectionCount(this);
    },
    set() {},
  });
}

function createServer(options, requestListener) {
  return new Server(options, requestListener);
}

/** Whether `server` is served by fast-http. */
function isFastHttpServer(server) {
  for (const proto of fastPrototypes) {
    if (Object.prototype.isPrototypeOf.call(proto, server)) return true;
  }
  return false;
}

/** From now on, the server's new TLS connections are node's TLS's (../https/hand-off.js). */
function tlsToNode(server) {
  server[kTlsToNode] = true;
  updateFlags(server, 'newSession', 0);
}

// Prototypes of fast-http's servers: Server's, and https.Server's (which is on node's https
// chain instead, with Server.prototype's own properties copied onto it).
const fastPrototypes = [Server.prototype];

module.exports = {
  Server, createServer, isFastHttpServer, kClosed,
  NodeIncomingMessage, NodeServerResponse, initServer, serverArgs, fastPrototypes, tlsToNode,
};

