'use strict';
// What the tools that find open handles see. On node:http a listening server is a libuv TCP
// handle (`TCPServerWrap` in process.getActiveResourcesInfo(), an async resource of type
// TCPSERVERWRAP) and each connection another (`TCPSocketWrap`, TCPWRAP, triggered by the
// server's): process._getActiveHandles() returns their owners (the server, the sockets)
// while they are open and referenced, and async_hooks' init / destroy tell when they come
// and go (why-is-node-running, jest --detectOpenHandles, wtfnode read these). fast-http's
// listeners and connections are the addon's, which libuv's handle list does not hold: a
// listening server has a resource of node's type here instead, a connection's async resource
// stands for its handle too, and the two process functions add them (the lists are built
// only when asked for).

const { AsyncResource, executionAsyncId } = require('node:async_hooks');
const { servers, sockets, flags } = require('../internal/native');
const { kHandleResource, kId, kAdopted, kHandleId } = require('../internal/symbols');
const { SocketTable } = require('../internal/socket-table');

class ServerHandle extends AsyncResource {
  constructor(server) {
    super('TCPSERVERWRAP', { requireManualDestroy: true });
    this.server = server;
  }

  /** As a TCP handle's: whether it keeps the loop alive; undefined once closed. */
  hasRef() {
    if (this.server[kHandleResource] !== this) return undefined;
    return this.server._unref !== true;
  }
}

/**
 * A connection's async resource, named and shaped as node's parser resource (`type`,
 * `socket`): the addon makes its context for the connection (HTTPINCOMINGMESSAGE) on it. Its
 * own ids, made first, are the connection's TCPWRAP, triggered by the server's: one object
 * stands for both of node's (the socket's handle and the parser's resource), so a connection
 * pays nothing more for being seen. The ids its listeners run in are the context's
 * (native-events.js adopts them); `kHandleId` keeps the TCPWRAP's for its destroy.
 */
class HTTPServerAsyncResource extends AsyncResource {
  constructor(trigger, id) {
    super('TCPWRAP', { triggerAsyncId: trigger, requireManualDestroy: true });
    this.type = 'HTTPINCOMINGMESSAGE';
    this.socket = null;
    this[kAdopted] = false;
    this[kHandleId] = this.asyncId();
    // Its key in `resources`.
    this[kId] = id;
  }

  /** As the TCP handle's: whether it keeps the loop alive; undefined once closed. */
  hasRef() {
    if (this[kHandleId] === 0) return undefined;
    return this.socket === null || !unreferenced.has(this.socket[kId]);
  }
}

/** The connections' resources, by connection id. */
const resources = new SocketTable(flags.ID_INDEX_MASK);
/** The ids of connections whose socket was unref()'d (rare: a Set, not a field each). */
const unreferenced = new Set();
let asyncIdSymbol = null;

/** The resource for connection `id` of `server` (the addon's factory). */
function connectionResource(server, id) {
  const trigger = server?.[kHandleResource]?.asyncId() ?? executionAsyncId();
  const resource = new HTTPServerAsyncResource(trigger, id);
  resources.set(id, resource);
  // A socket made before (for process._getActiveHandles()); one destroyed already (the
  // addon's first event for it is its close) has no handle left to stand for.
  const socket = sockets.get(id);
  if (socket !== undefined) {
    resource.socket = socket;
    if (socket.destroyed) endHandle(resource);
  }
  return resource;
}

/** A server starts listening: its handle comes, as node's at listen(). */
function serverOpened(server) {
  serverClosed(server);
  server[kHandleResource] = new ServerHandle(server);
}

/** The server stops listening. */
function serverClosed(server) {
  const h = server[kHandleResource];
  if (h != null) {
    server[kHandleResource] = null;
    h.emitDestroy();
  }
}

function socketOpened(socket) {
  const r = resources.get(socket[kId]);
  if (r !== undefined) r.socket = socket;
}

/** The connection's 'close': its TCPWRAP is destroyed, as node's handle at its close. */
function socketClosed(socket) {
  const id = socket[kId];
  unreferenced.delete(id);
  const r = resources.get(id);
  if (r !== undefined) endHandle(r);
}

function endHandle(r) {
  resources.delete(r[kId]);
  const handleId = r[kHandleId];
  if (handleId === 0) return;
  r[kHandleId] = 0;
  asyncIdSymbol ??= Object.getOwnPropertySymbols(r)
    .find((s) => s.description === 'async_id_symbol') ?? null;
  // AsyncResource's emitDestroy for the TCPWRAP's id (the resource's own are the context's now).
  if (asyncIdSymbol !== null) AsyncResource.prototype.emitDestroy.call({ [asyncIdSymbol]: handleId });
}

function socketRef(socket, on) {
  if (on) unreferenced.delete(socket[kId]);
  else unreferenced.add(socket[kId]);
}

/**
 * The open, referenced servers and sockets, in node's order (listeners first). A connection
 * no event has brought to JS yet gets its socket now (`materialize(server)`): node's exists
 * from the accept.
 */
function activeOwners(materialize) {
  const out = [];
  for (const server of servers) {
    if (server == null) continue;
    materialize(server);
    if (server[kHandleResource]?.hasRef()) out.push(server);
  }
  sockets.forEach((socket) => {
    if (!unreferenced.has(socket[kId])) out.push(socket);
  });
  return out;
}

/**
 * Adds fast-http's handles to process._getActiveHandles() and getActiveResourcesInfo():
 * after node's own handles, before its timers (node's order: requests, handles, timers).
 * `materialize(server)` makes the sockets of the server's connections JS has none for.
 */
function patchProcess(materialize) {
  const getHandles = process._getActiveHandles;
  if (typeof getHandles === 'function') {
    process._getActiveHandles = function _getActiveHandles() {
      const own = Reflect.apply(getHandles, this, arguments);
      return own.concat(activeOwners(materialize));
    };
  }
  const getInfo = process.getActiveResourcesInfo;
  if (typeof getInfo === 'function' && typeof getHandles === 'function' &&
      typeof process._getActiveRequests === 'function') {
    process.getActiveResourcesInfo = function getActiveResourcesInfo() {
      const info = Reflect.apply(getInfo, this, arguments);
      const at = process._getActiveRequests().length + getHandles().length;
      const names = activeOwners(materialize).map((o) => (o[kHandleResource] instanceof ServerHandle ?
        'TCPServerWrap' : 'TCPSocketWrap'));
      info.splice(at, 0, ...names);
      return info;
    };
  }
}

module.exports = {
  connectionResource, serverOpened, serverClosed, socketOpened, socketClosed, socketRef,
  patchProcess,
};
