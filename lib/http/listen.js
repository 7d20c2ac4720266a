'use strict';
// Server#listen as net.Server's (lib/net.js): the same argument forms and normalization
// (`listen()`, `listen(null, cb)`, `listen({ port: null })`, handles, `{ fd }`, pipes,
// backlogs, signals), and the same cluster behaviour: a worker asks the primary for the
// server (cluster._getServer) and serves what it hands over, so workers share one port
// (round-robin connections, or the shared listening socket with SCHED_NONE).
const { nextTick } = require('../internal/scheduling');
const dns = require('node:dns');
const { binding, servers } = require('../internal/native');
const errors = require('../internal/errors');
const openHandles = require('./open-handles');
const { kSid, kListening, kAddress } = require('../internal/symbols');
const { serverListen } = require('./diagnostics');
const { handleOwnerSymbol } = require('../internal/node-internals');

const kClusterHandle = Symbol('fast-http.clusterHandle');
const kOwnedHandle = Symbol('fast-http.ownedHandle');
const kListeningId = Symbol('fast-http.listeningId');
/** The server's methods that make (when missing) and free its half in the addon. */
const kNativeSid = Symbol('fast-http.nativeSid');
const kReleaseNative = Symbol('fast-http.releaseNative');

/** errno of EADDRINUSE: libuv reports it from listen(), after a bind that "succeeded". */
const UV_EADDRINUSE = -require('node:os').constants.errno.EADDRINUSE;

function toNumber(x) {
  return (x = Number(x)) >= 0 ? x : false;
}

function isPipeName(s) {
  return typeof s === 'string' && toNumber(s) === false;
}

/** net's normalizeArgs: [options, cb]. */
function normalizeArgs(args) {
  if (args.length === 0) return [{}, null];
  const arg0 = args[0];
  let options = {};
  if (typeof arg0 === 'object' && arg0 !== null) {
    options = arg0;
  } else if (isPipeName(arg0)) {
    options.path = arg0;
  } else {
    options.port = arg0;
    if (args.length > 1 && typeof args[1] === 'string') options.host = args[1];
  }
  const cb = args[args.length - 1];
  return [options, typeof cb === 'function' ? cb : null];
}

function validatePort(port, name) {
  if ((typeof port !== 'number' && typeof port !== 'string') ||
      (typeof port === 'string' && port.trim().length === 0) ||
      +port !== (+port >>> 0) || port > 0xFFFF) {
    throw errors.ERR_SOCKET_BAD_PORT(name, port);
  }
  return port | 0;
}

/** A libuv handle object (TCP or Pipe wrap) whose descriptor can be adopted. */
function isHandle(obj) {
  return obj !== null && typeof obj === 'object' && typeof obj.fd === 'number' &&
    typeof obj.close === 'function';
}

function listen(server, args) {
  const [given, cb] = normalizeArgs(args);
  if (server[kListening] || server[kClusterHandle]) throw errors.ERR_SERVER_ALREADY_LISTEN();
  if (serverListen?.hasSubscribers) serverListen.asyncStart.publish({ server, options: given });
  if (cb !== null) server.once('listening', cb);
  const backlog = backlogFromArgs(args);
  const options = given._handle || given.handle || given;
  server[kListeningId] = (server[kListeningId] || 0) + 1;
  if (isHandle(options)) {
    // listen(handle): the handle's socket, shared through a second descriptor; closing the
    // server closes the handle, as it would close node's.
    server[kOwnedHandle] = options;
    adopt(server, options.fd, backlog || 511, true, null, null);
    return server;
  }
  addAbortSignal(server, options);
  if (typeof options.fd === 'number' && options.fd >= 0) {
    listenInCluster(server, null, null, null, backlog, options.fd);
  } else {
    listenOnOptions(server, options, args, backlog);
  }
  return server;
}

/** net's backlog from `listen(port, [host], [backlog])` / `listen(port, backlog)`. */
function backlogFromArgs(args) {
  return toNumber(args.length > 1 && args[1]) || toNumber(args.length > 2 && args[2]);
}

/** `listen()`, `listen(cb)`, `listen({ port: undefined })`, `listen({ port: null })`: port 0. */
function listensOnAnyPort(args, options) {
  return args.length === 0 || typeof args[0] === 'function' ||
    (typeof options.port === 'undefined' && 'port' in options) || options.port === null;
}

/** The `{ port, host }` and `{ path }` forms (and the errors for neither). */
function listenOnOptions(server, options, args, argsBacklog) {
  if (listensOnAnyPort(args, options)) options.port = 0;
  if (typeof options.port === 'number' || typeof options.port === 'string') {
    listenOnPort(server, options, argsBacklog);
  } else if (options.path && isPipeName(options.path)) {
    listenOnPath(server, options, argsBacklog);
  } else if (!('port' in options) && !('path' in options)) {
    throw errors.ERR_INVALID_ARG_VALUE('options', options,
      'must have the property "port" or "path"');
  } else {
    throw errors.ERR_INVALID_ARG_VALUE('options', options);
  }
}

function listenOnPort(server, options, argsBacklog) {
  validatePort(options.port, 'options.port');
  const backlog = options.backlog || argsBacklog;
  const flags = { ipv6Only: !!options.ipv6Only, reusePort: options.reusePort === true };
  if (options.host) {
    lookupAndListen(server, options.port | 0, options.host, backlog, options.exclusive, flags);
  } else {
    listenInCluster(server, null, options.port | 0, 4, backlog, undefined, options.exclusive,
      flags);
  }
}

function listenOnPath(server, options, argsBacklog) {
  const backlog = options.backlog || argsBacklog;
  listenInCluster(server, options.path, -1, -1, backlog, undefined, options.exclusive);
  if (server[kListening] && (options.readableAll === true || options.writableAll === true)) {
    const mode = (options.readableAll ? 0o444 : 0) | (options.writableAll ? 0o222 : 0);
    require('node:fs').chmodSync(options.path, 0o600 | mode);
  }
}

function addAbortSignal(server, options) {
  const { signal } = options;
  if (signal === undefined) return;
  if (signal === null || typeof signal !== 'object' || !('aborted' in signal)) {
    throw errors.ERR_INVALID_ARG_TYPE('options.signal', 'an instance of AbortSignal', signal);
  }
  const onAborted = () => server.close();
  if (signal.aborted) {
    nextTick(onAborted);
  } else {
    signal.addEventListener('abort', onAborted, { once: true });
    server.once('close', () => signal.removeEventListener('abort', onAborted));
  }
}

function lookupAndListen(server, port, host, backlog, exclusive, flags) {
  dns.lookup(host, (err, ip, family) => {
    if (err) {
      if (!server[kListening]) server[kReleaseNative]();
      server.emit('error', err);
      return;
    }
    listenInCluster(server, ip, port, family, backlog, undefined, exclusive, flags);
  });
}

let cluster;

/** net's listenInCluster: a worker takes the server from the primary. */
function listenInCluster(server, address, port, addressType, backlog, fd, exclusive, flags) {
  // Loaded on first use, as net does (a require per listen cost more than the rest of it).
  cluster ??= require('node:cluster');
  if (cluster.isPrimary || exclusive) {
    listenHere(server, address, port, backlog, fd, flags);
    return;
  }
  const query = { address, port, addressType, fd, flags: flags?.ipv6Only ? 1 : 0, backlog };
  const listeningId = server[kListeningId];
  cluster._getServer(server, query, (err, handle) => {
    if (listeningId !== server[kListeningId]) {
      handle.close();
      return;
    }
    if (err === 0 && port > 0 && typeof handle.getsockname === 'function') {
      // A failed bind followed by listen() binds a random port: check it is the one asked.
      const out = {};
      err = handle.getsockname(out);
      if (err === 0 && port !== out.port) err = UV_EADDRINUSE;
    }
    if (err) {
      server.emit('error', errors.uvException(err, 'bind', address, port));
      return;
    }
    server[kClusterHandle] = handle;
    if (typeof handle.fd === 'number' && handle.fd >= 0) {
      // SCHED_NONE: the primary's listening socket, shared.
      adopt(server, handle.fd, backlog || 511, true, address, port);
      return;
    }
    // Round-robin: the primary accepts and hands each connection over.
    handle.onconnection = onClusterConnection.bind(server);
    // cluster's child asks the owner first: at maxConnections (without dropMaxConnection)
    // it refuses the connection and the primary hands it to another worker.
    const owner = handleOwnerSymbol();
    if (owner !== null) handle[owner] = server;
    const out = {};
    const address_ = typeof handle.getsockname === 'function' && handle.getsockname(out) === 0 ?
      { address: out.address, family: out.family, port: out.port } :
      (typeof address === 'string' && port === -1 ? address : { address, family: 'IPv4', port });
    listening(server, address_);
  });
}

/** A connection the cluster primary accepted and handed to this worker. */
function onClusterConnection(err, clientHandle) {
  if (err) {
    this.emit('error', errors.uvException(err, 'accept'));
    return;
  }
  const r = binding.adoptConnection(this[kSid], clientHandle.fd);
  clientHandle.close();
  if (!Array.isArray(r)) return;
  const events = require('./native-events');
  if (r.length === 1) events.onDrop(this[kSid], r[0]);
  else if (r[1]) events.onConnection(this[kSid], r[0]);
}

/** This process binds and listens itself (not a cluster worker, or `exclusive`). */
function listenHere(server, address, port, backlog, fd, flags) {
  // The handle takes the backlog as an int32 (node's Int32Value: '5' is 5, 'x' is 0).
  backlog = (backlog || 511) | 0;
  if (typeof fd === 'number' && fd >= 0) {
    adopt(server, fd, backlog, false, null, null);
    return;
  }
  if (port === -1) {
    const r = binding.listenUnix(server[kNativeSid](), address, backlog);
    if (r < 0) nextTick(emitError, server, errors.uvException(r, 'listen', address));
    else listening(server, address);
    return;
  }
  const { ipv6Only = false, reusePort = false } = flags || {};
  if (address) {
    listenTcp(server, address, port, backlog, reusePort, ipv6Only);
    return;
  }
  // No host: the IPv6 any-address (dual stack), else IPv4 when IPv6 cannot be bound, like
  // node's listen. A port in use is reported for `::`, as node does.
  const r = binding.listenTcp(server[kNativeSid](), '::', port, backlog, reusePort, ipv6Only);
  if (r === UV_EADDRINUSE) {
    nextTick(emitError, server, errors.uvException(r, 'listen', '::', port));
  } else if (typeof r === 'number') {
    listenTcp(server, '0.0.0.0', port, backlog, reusePort, false);
  } else {
    listening(server, { address: r[0], family: r[2], port: r[1] });
  }
}

function listenTcp(server, host, port, backlog, reusePort, ipv6Only) {
  const r = binding.listenTcp(server[kNativeSid](), host, port, backlog, reusePort, ipv6Only);
  if (typeof r === 'number') {
    nextTick(emitError, server, errors.uvException(r, 'listen', host, port));
    return;
  }
  listening(server, { address: r[0], family: r[2], port: r[1] });
}

/** Accepts on a socket that already exists (`{ fd }`, a handle, a cluster's shared one). */
function adopt(server, fd, backlog, dup, address, port) {
  const r = binding.adoptListener(server[kNativeSid](), fd, backlog | 0, dup);
  if (typeof r === 'number') {
    nextTick(emitError, server, errors.uvException(r, 'listen', address, port));
    return;
  }
  listening(server, typeof r === 'string' ? r : { address: r[0], family: r[2], port: r[1] });
}

const listeningHandle = Object.freeze({ fastHttp: true });

function listening(server, address) {
  servers[server[kNativeSid]()] = server;
  openHandles.serverOpened(server);
  server[kListening] = true;
  server[kAddress] = address;
  server._handle = listeningHandle;
  server._connectionKey = typeof address === 'string' ? `-1:${address}:-1` :
    `${address.family === 'IPv6' ? 6 : 4}:${address.address}:${address.port}`;
  if (server._unref) binding.serverRef(server[kSid], false);
  if (serverListen?.hasSubscribers) serverListen.asyncEnd.publish({ server });
  nextTick(emitListening, server);
}

function emitListening(server) {
  if (server[kListening]) server.emit('listening');
}

function emitError(server, error) {
  if (!server[kListening]) server[kReleaseNative]();
  if (serverListen?.hasSubscribers) serverListen.error.publish({ server, error });
  server.emit('error', error);
}

/** The server stops listening: what it took from a handle or the cluster is let go. */
function releaseHandles(server) {
  const cluster = server[kClusterHandle];
  if (cluster) {
    server[kClusterHandle] = null;
    cluster.close();
  }
  const owned = server[kOwnedHandle];
  if (owned) {
    server[kOwnedHandle] = null;
    owned.close();
  }
}

/** The cluster's round-robin handle keeps a worker alive like a listening socket does. */
function refHandles(server, on) {
  const cluster = server[kClusterHandle];
  if (cluster && typeof cluster.ref === 'function') {
    if (on) cluster.ref();
    else cluster.unref();
  }
}

module.exports = {
  listen, releaseHandles, refHandles, isPipeName, toNumber, kNativeSid, kReleaseNative,
};
