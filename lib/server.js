'use strict';
// Server: node:http's Server API (it inherits node's prototype, so `instanceof http.Server`
// holds) with listening, accepting and connection bookkeeping in the addon. Settings that
// the addon acts on (timeouts, keep-alive, header size, which events have listeners) are
// accessors that push the new values down when they change.
const {
  S_HAS_CONNECTION, S_HAS_TIMEOUT, S_HAS_UPGRADE,
  S_HAS_CONNECT, S_NO_DELAY, S_KEEP_ALIVE, S_HALF_OPEN,
  S_LENIENT,
} = require('./flags');
const net = require('node:net');
const dns = require('node:dns');
const { binding, servers } = require('./native');
require('./dispatch');
const {
  NodeServer, storeHTTPOptions, kConnectionsCheckingInterval, parseUniqueHeadersOption, maxHeaderSize: defaultMaxHeaderSize,
  kIncomingMessage, kServerResponse, kUniqueHeaders, NodeIncomingMessage, NodeServerResponse,
  sameInstances,
} = require('./node-internals');
const { IncomingMessage, isFastRequest } = require('./incoming');
const { ServerResponse } = require('./response');
const { FastSocket } = require('./socket');
const errors = require('./errors');
const {
  kSid, kConfig, kListening, kAddress, kFallbackSockets, kEagerHeaders, kClosed,
} = require('./symbols');
const stats = require('./stats');

/** node's isLenient(): the process-wide --insecure-http-parser flag. */
const processLenient = process.execArgv.includes('--insecure-http-parser') ||
  /(^|\s)--insecure-http-parser(\s|$)/.test(process.env.NODE_OPTIONS || '');

const LISTENER_FLAGS = {
  __proto__: null,
  connection: S_HAS_CONNECTION,
  timeout: S_HAS_TIMEOUT,
  upgrade: S_HAS_UPGRADE,
  connect: S_HAS_CONNECT,
};

/** Node 20.19+ keeps idle keep-alive sockets this much longer than it announces. */
const KEEP_ALIVE_BUFFER = 1000;
const kClosing = Symbol('fast-http.closing');

function Server(options, requestListener) {
  if (!(this instanceof Server)) return new Server(options, requestListener);
  if (typeof options === 'function') {
    requestListener = options;
    options = {};
  } else if (options == null) {
    options = {};
  } else if (typeof options !== 'object' || Array.isArray(options)) {
    throw errors.ERR_INVALID_ARG_TYPE('options', 'of type object', options);
  }
  this[kConfig] = {
    timeout: 0,
    keepAliveTimeout: 5000,
    headersTimeout: 60000,
    requestTimeout: 300000,
    connectionsCheckingInterval: 30000,
    maxHeaderSize: undefined,
    maxRequestsPerSocket: 0,
    maxConnections: undefined,
    flags: (options.noDelay ?? true) ? S_NO_DELAY : 0,
    keepAliveInitialDelay: 0,
  };
  this[kSid] = -1;
  storeHTTPOptions.call(this, options);
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

  const sid = binding.serverCreate();
  this[kSid] = sid;
  // The addon finds the server through `servers` only while it listens or has connections,
  // so a server that is dropped can be collected (and its native half freed).
  collected.register(this, sid);
  stats.serverCreated();
  pushConfig(this);

  this.on('newListener', onNewListener);
  this.on('removeListener', onRemoveListener);
  this.on('connection', fallbackConnection);
  this.on('listening', setupConnectionsTracking);
  if (requestListener) this.on('request', requestListener);
}
Object.setPrototypeOf(Server.prototype, NodeServer.prototype);
Object.setPrototypeOf(Server, NodeServer);
sameInstances(Server, NodeServer);

const collected = new FinalizationRegistry((sid) => binding.serverFree(sid));

function pushConfig(server) {
  const sid = server[kSid];
  if (sid < 0) return;
  const c = server[kConfig];
  const lenient = server.insecureHTTPParser === undefined ? processLenient
    : !!server.insecureHTTPParser;
  c.flags = lenient ? (c.flags | S_LENIENT) : (c.flags & ~S_LENIENT);
  const kat = c.keepAliveTimeout;
  const max = c.maxRequestsPerSocket > 0 ? `, max=${c.maxRequestsPerSocket}` : '';
  binding.serverConfig(sid, {
    maxHeaderSize: c.maxHeaderSize || defaultMaxHeaderSize,
    keepAliveTimeout: kat ? kat + KEEP_ALIVE_BUFFER : 0,
    timeout: c.timeout,
    headersTimeout: c.headersTimeout,
    requestTimeout: c.requestTimeout,
    checkInterval: c.connectionsCheckingInterval,
    flags: c.flags,
    keepAliveDelay: c.keepAliveInitialDelay,
    maxConnections: c.maxConnections > 0 ? c.maxConnections : 0,
    keepAliveLine: `Keep-Alive: timeout=${Math.floor(kat / 1000)}${max}\r\n`,
  });
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
  'connectionsCheckingInterval', 'maxHeaderSize', 'maxRequestsPerSocket', 'maxConnections']) {
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
  const n = server.listenerCount(event) + delta - own;
  const c = server[kConfig];
  c.flags = n > 0 ? (c.flags | bit) : (c.flags & ~bit);
  if (server[kSid] >= 0) binding.serverFlags(server[kSid], bit, c.flags & bit);
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
  require('./fallback').serve(this, socket);
}

function toNumber(x) {
  return (x = Number(x)) >= 0 ? x : false;
}

function isPipeName(s) {
  return typeof s === 'string' && toNumber(s) === false;
}

function validatePort(port, name) {
  if ((typeof port !== 'number' && typeof port !== 'string') ||
      (typeof port === 'string' && port.trim().length === 0) ||
      +port !== (+port >>> 0) || port > 0xFFFF) {
    throw errors.ERR_SOCKET_BAD_PORT(name, port);
  }
  return port | 0;
}

Server.prototype.listen = function listen(...args) {
  let cb = null;
  if (typeof args[args.length - 1] === 'function') cb = args.pop();
  let options = {};
  const arg0 = args[0];
  if (typeof arg0 === 'object' && arg0 !== null) options = arg0;
  else if (isPipeName(arg0)) options = { path: arg0 };
  else if (arg0 !== undefined) {
    options = { port: arg0 };
    if (typeof args[1] === 'string') options.host = args[1];
  }
  if (this[kListening]) throw errors.ERR_SERVER_ALREADY_LISTEN();
  if (cb !== null) this.once('listening', cb);
  const backlogFromArgs = toNumber(args.length > 1 && args[1]) ||
    toNumber(args.length > 2 && args[2]);
  const backlog = options.backlog || backlogFromArgs || 511;
  if (options.signal) {
    const { signal } = options;
    if (signal.aborted) {
      process.nextTick(() => this.close());
      return this;
    }
    signal.addEventListener('abort', () => this.close(), { once: true });
  }
  if (options.handle || options._handle || options.fd !== undefined) {
    throw errors.ERR_INVALID_ARG_VALUE('options', options);
  }
  // Cluster workers share a port through SO_REUSEPORT instead of the primary's handle.
  const reusePort = !!options.reusePort ||
    (process.env.NODE_UNIQUE_ID !== undefined && !options.exclusive);
  if (typeof options.port === 'number' || typeof options.port === 'string') {
    const port = validatePort(options.port, 'options.port');
    if (options.host) {
      if (net.isIP(options.host)) {
        listenTcp(this, options.host, port, backlog, reusePort, !!options.ipv6Only);
      } else {
        dns.lookup(options.host, (err, ip) => {
          if (err) this.emit('error', err);
          else listenTcp(this, ip, port, backlog, reusePort, !!options.ipv6Only);
        });
      }
    } else {
      listenAny(this, port, backlog, reusePort, !!options.ipv6Only);
    }
    return this;
  }
  if (options.port === undefined && options.path == null && (arg0 === undefined ||
      typeof arg0 === 'object')) {
    listenAny(this, 0, backlog, reusePort, !!options.ipv6Only);
    return this;
  }
  if (options.path && isPipeName(options.path)) {
    const r = binding.listenUnix(this[kSid], options.path, backlog);
    if (r < 0) {
      process.nextTick(emitError, this, errors.uvException(r, 'listen', options.path));
    } else {
      listening(this, options.path);
    }
    return this;
  }
  throw errors.ERR_INVALID_ARG_VALUE('options', options);
};

/** errno of EADDRINUSE: libuv reports it from listen(), after a bind that "succeeded". */
const UV_EADDRINUSE = require('node:os').constants.errno.EADDRINUSE;

/**
 * No host: the IPv6 any-address (dual stack), else IPv4 when IPv6 cannot be bound, like
 * node's listen. A port in use is reported for `::`, as node does.
 */
function listenAny(server, port, backlog, reusePort, ipv6Only) {
  const r = binding.listenTcp(server[kSid], '::', port, backlog, reusePort, ipv6Only);
  if (r === -UV_EADDRINUSE) {
    process.nextTick(emitError, server, errors.uvException(r, 'listen', '::', port));
  } else if (typeof r === 'number') {
    listenTcp(server, '0.0.0.0', port, backlog, reusePort, false);
  } else {
    listening(server, { address: r[0], family: r[1], port: r[2] });
  }
}

function listenTcp(server, host, port, backlog, reusePort, ipv6Only) {
  const r = binding.listenTcp(server[kSid], host, port, backlog, reusePort, ipv6Only);
  if (typeof r === 'number') {
    process.nextTick(emitError, server, errors.uvException(r, 'listen', host, port));
    return;
  }
  listening(server, { address: r[0], family: r[1], port: r[2] });
}

const listeningHandle = Object.freeze({ fastHttp: true });

function listening(server, address) {
  servers[server[kSid]] = server;
  server[kListening] = true;
  server[kAddress] = address;
  server._handle = listeningHandle;
  server._connectionKey = typeof address === 'string' ? address : `${address.family}:${address.address}:${address.port}`;
  if (server._unref) binding.serverRef(server[kSid], false);
  process.nextTick(emitListening, server);
}

/**
 * node's setupConnectionsTracking, on 'listening': the addon does the checking, but code
 * (and node's tests) look at this timer's state.
 */
function setupConnectionsTracking() {
  clearInterval(this[kConnectionsCheckingInterval]);
  this[kConnectionsCheckingInterval] =
    setInterval(noop, this.connectionsCheckingInterval || 30000).unref();
}

function noop() {}

function emitListening(server) {
  if (server[kListening]) server.emit('listening');
}

function emitError(server, err) {
  server.emit('error', err);
}

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
  this.closeIdleConnections();
  clearInterval(this[kConnectionsCheckingInterval]);
  this[kListening] = false;
  this._handle = null;
  this[kClosing] = true;
  const remaining = binding.serverClose(this[kSid]) + this[kFallbackSockets].size;
  if (remaining === 0) process.nextTick(emitCloseIfDrained, this);
  return this;
};

function emitCloseIfDrained(server) {
  server._onDrained();
}

Server.prototype._onDrained = function _onDrained() {
  if (!this[kClosing] || this[kListening]) return;
  if (binding.serverConns(this[kSid], false, false).length + this[kFallbackSockets].size > 0) {
    return;
  }
  this[kClosing] = false;
  servers[this[kSid]] = undefined;
  this.emit('close');
};

Server.prototype.closeAllConnections = function closeAllConnections() {
  binding.serverConns(this[kSid], false, true);
  for (const s of this[kFallbackSockets]) s.destroy();
};

Server.prototype.closeIdleConnections = function closeIdleConnections() {
  binding.serverConns(this[kSid], true, true);
  for (const s of this[kFallbackSockets]) {
    if (!s._httpMessage || s._httpMessage.finished) {
      if (!s.parser?.incoming || s.parser.incoming.complete) s.destroy();
    }
  }
};

Server.prototype.getConnections = function getConnections(cb) {
  const n = binding.serverConns(this[kSid], false, false).length + this[kFallbackSockets].size;
  if (typeof cb === 'function') process.nextTick(cb, null, n);
  return this;
};

Server.prototype.ref = function ref() {
  this._unref = false;
  binding.serverRef(this[kSid], true);
  return this;
};

Server.prototype.unref = function unref() {
  this._unref = true;
  binding.serverRef(this[kSid], false);
  return this;
};

Object.defineProperty(Server.prototype, 'connections', {
  __proto__: null,
  configurable: true,
  get() {
    return binding.serverConns(this[kSid], false, false).length + this[kFallbackSockets].size;
  },
  set() {},
});

function createServer(options, requestListener) {
  return new Server(options, requestListener);
}

/** Whether `server` is served by fast-http. */
function isFastHttpServer(server) {
  return Object.prototype.isPrototypeOf.call(Server.prototype, server);
}

module.exports = {
  Server, createServer, isFastHttpServer, kClosed,
  NodeIncomingMessage, NodeServerResponse,
};
