'use strict';
// What the tools that find open handles see. On node:http a listening server is a libuv TCP
// handle (`TCPServerWrap` in process.getActiveResourcesInfo(), an async resource of type
// TCPSERVERWRAP) and each connection another (`TCPSocketWrap`, TCPWRAP, triggered by the
// server's): process._getActiveHandles() returns their owners (the server, the sockets)
// while they are open and referenced, and async_hooks' init / destroy tell when they come
// and go (why-is-node-running, jest --detectOpenHandles, wtfnode read these). fast-http's
// listeners and connections are the addon's, which libuv's handle list does not hold: each
// listening server and JS socket has a resource of node's type here instead, and the two
// process functions add them. A connection pays one AsyncResource with its JS socket (it
// replaced the connection's never-entered HTTPINCOMINGMESSAGE one); the lists are built only
// when asked for.

const { AsyncResource, executionAsyncId } = require('node:async_hooks');
const { servers, sockets } = require('../internal/native');
const { kHandleResource } = require('../internal/symbols');

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

class SocketHandle extends AsyncResource {
  constructor(socket, server) {
    super('TCPWRAP', {
      triggerAsyncId: server?.[kHandleResource]?.asyncId() ?? executionAsyncId(),
      requireManualDestroy: true,
    });
    this.socket = socket;
    this.refed = true;
  }

  hasRef() {
    if (this.socket[kHandleResource] !== this) return undefined;
    return this.refed;
  }
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

function socketOpened(socket, server) {
  socket[kHandleResource] = new SocketHandle(socket, server);
}

function socketClosed(socket) {
  const h = socket[kHandleResource];
  if (h != null) {
    socket[kHandleResource] = null;
    h.emitDestroy();
  }
}

function socketRef(socket, on) {
  const h = socket[kHandleResource];
  if (h != null) h.refed = on;
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
    if (socket[kHandleResource]?.hasRef()) out.push(socket);
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
  serverOpened, serverClosed, socketOpened, socketClosed, socketRef, patchProcess,
};
