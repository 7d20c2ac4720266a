'use strict';
// The addon's events and callbacks (init() registers them): each finds the server, socket or
// request an event concerns and hands it to node's server logic (server-logic.js) or to the
// upgrade hand-off (upgrade-handoff.js); the socket's own events go to the socket facade.
// This file is also the one place that decides what runs now and what runs from the tick
// queue (`deliver`).
const { nextTick } = require('../internal/scheduling');
const { F_UPGRADE, F_ASK_UPGRADE } = require('../internal/native').flags;
const { binding, servers, sockets, events, init, responseBatch } = require('../internal/native');
const {
  SNI_SERVER_CONTEXT, ALPN_NOT_ASKED, EVENTS_GROUP, EVENTS_PROGRESS,
} = require('../internal/native').constants;
const { executionAsyncId, triggerAsyncId } = require('node:async_hooks');
const tickQueue = require('./tick-queue');
const errors = require('../internal/errors');
// The addon's errnos are libuv's (negative).
const UV_ECONNRESET = -require('node:os').constants.errno.ECONNRESET;
const { MODE_HTTP, onClosePhase } = require('./socket');
const { setTrailerBlock } = require('./incoming');
const diagnostics = require('./diagnostics');
const {
  socketFor, newRequest, parserOnIncoming, clientError,
} = require('./server-logic');
const { connectionResource } = require('./open-handles');
const { startUpgrade, upgradeAfterBody, upgradeAsked } = require('./upgrade-handoff');
const {
  kSeq, kBodyReq, kMode, kUpgradeReq, kTlsSession, kSecureSocket, kSniRequest, kParser,
  kReadPaused, kAdopted, kHandleId, kTlsErrorEmitted, kHandOff,
} = require('../internal/symbols');
const { closeFd } = require('../https/hand-off');

/** @type {import('../internal/native').Callbacks['onConnection']} */
function onConnection(sid, id) {
  deliver(true, emitConnection, id, this, NO_POSITION, sid, id);
}

function emitConnection(sid, id) {
  const server = servers[sid];
  if (server === undefined) return;
  const socket = socketFor(server, id);
  server.emit('connection', socket);
  if (diagnostics.serverSocket.hasSubscribers) diagnostics.serverSocket.publish({ socket });
}

/** @type {import('../internal/native').Callbacks['onRequest']} */
function onRequest(sid, id, seq, method, url, headerBlock, flags, body, headEnd) {
  // An upgrade runs now: the connection's next bytes wait for its answer. A throwing
  // shouldUpgradeCallback (F_ASK_UPGRADE) fails nothing: node's request stays an upgrade
  // that the connection's next bytes complete.
  const upgrade = (flags & (F_UPGRADE | F_ASK_UPGRADE)) !== 0;
  deliver(!upgrade, dispatchRequest, id, this,
    (flags & F_ASK_UPGRADE) !== 0 ? NO_POSITION : headEnd,
    sid, id, seq, method, url, headerBlock, flags, body);
}

/** The connection whose request was dispatched last. */
let lastDispatched = -1;

function dispatchRequest(sid, id, seq, method, url, headerBlock, flags, body) {
  // Once per connection's run of requests (a clock read costs 60–100 ns here: +2 % per
  // pipelined request when read for each).
  if (id !== lastDispatched) {
    lastDispatched = id;
    responseBatch.writeHeld();
  }
  // A server closed by an earlier handler of the read (its last connection destroyed) is
  // gone from `servers`, but node's parser still emits what the read held on its socket.
  const server = servers[sid] ?? sockets.get(id)?.server;
  if (server == null) return;
  const socket = socketFor(server, id);
  // A 'close' emitted on the socket freed its parser (node's freeParser): node's llhttp stops
  // there, and a request after it in the same read is never emitted (Node 24+).
  if (socket[kParser] === null) return;
  const req = newRequest(server, socket, seq, method, url, headerBlock, flags, body);
  if (req.upgrade) {
    if (startUpgrade(server, socket, req, flags, body)) return;
    // Refused: a plain request, its body (if any) still to come from the addon; `body` was
    // the upgrade's head.
    flags &= ~F_UPGRADE;
    body = undefined;
  }
  parserOnIncoming(server, socket, req, flags, body);
}

/** @type {import('../internal/native').Callbacks['onUpgrade']} */
function onUpgrade(id, seq, head) {
  deliver(false, upgrade, id, this, NO_POSITION, id, seq, head);
}

function upgrade(id, seq, head) {
  const socket = sockets.get(id);
  const req = socket?.[kUpgradeReq];
  if (req == null || req[kSeq] !== seq) return;
  upgradeAfterBody(socket, req, head);
}

/**
 * A piece of a body: its 'data' listeners run from the tick queue when they may.
 * @type {import('../internal/native').Callbacks['onBody']}
 */
function onBody(id, seq, chunk, at) {
  deliver(true, body, id, this, at, id, seq, chunk);
}

function body(id, seq, chunk) {
  const socket = sockets.get(id);
  const req = socket?.[kBodyReq];
  if (req == null || req[kSeq] !== seq) return;
  if (req._dumped) {
    // node drops a dumped request's body pieces as they are parsed: the addon stops copying
    // them into JS (a 1 GiB body nobody reads: 0.26 s of CPU and +0.7 MiB of RSS instead of
    // 1.1 s and +38 MiB; node:http 0.66 s and +43 MiB).
    binding.discardBody(id);
  } else if (!req.push(chunk)) {
    socket.pause();
  }
}

/** @type {import('../internal/native').Callbacks['onBodyEnd']} */
function onBodyEnd(id, seq, trailers) {
  deliver(false, bodyEnd, id, this, NO_POSITION, id, seq, trailers);
}

function bodyEnd(id, seq, trailers) {
  const socket = sockets.get(id);
  const req = socket?.[kBodyReq];
  if (req == null || req[kSeq] !== seq) return;
  socket[kBodyReq] = null;
  req.complete = true;
  if (trailers !== undefined) setTrailerBlock(req, trailers);
  req.push(null);
  // node's parserOnMessageComplete: readStart(socket) reads the next message, also after a
  // push to a destroyed request (stream.pipeline's cleanup) paused the socket.
  if (socket[kReadPaused] && !socket._paused && socket.readable) socket.resume();
}

/** @type {import('../internal/native').Callbacks['onDrain']} */
function onDrain(id) {
  const socket = sockets.get(id);
  if (socket === undefined) return;
  // Releasing the held write callbacks lets the Writable emit 'drain' itself, when (and
  // only when) a write() returned false, as net.Socket does.
  socket._onDrain();
}

/** @type {import('../internal/native').Callbacks['onClose']} */
function onClose(id, errno) {
  const socket = sockets.get(id);
  if (socket !== undefined) {
    closeSocket(socket.server, socket, errno);
  } else if (tickQueue.waiting()) {
    // Its 'connection' (or first request) still waits in the tick queue, which makes the
    // socket: it closes after them, as node's socket closes after its 'connection'.
    tickQueue.enqueue(closeQueued, id, this, NO_POSITION, id, errno);
  }
}

function closeQueued(id, errno) {
  const socket = sockets.get(id);
  if (socket !== undefined) closeSocket(socket.server, socket, errno);
}

/**
 * A connection is gone (errno < 0: its read failed). Before a TLS handshake completed, node's
 * TLSSocket reports the read error as tls.Server's 'tlsClientError' (onSocketTLSError), which
 * https makes 'clientError' or a destroy; otherwise it is the socket's own error.
 */
function closeSocket(server, socket, errno) {
  if (errno < 0 && server?.[kSecureSocket] !== undefined && socket._secureEstablished !== true) {
    emitTlsClientError(server, socket, errors.readError(errno));
    socket._onClose(0);
    return;
  }
  socket._onClose(errno);
}

/**
 * net's onconnection at maxConnections: the connection is closed and 'drop' says who.
 * @type {import('../internal/native').Callbacks['onDrop']}
 */
function onDrop(sid, a) {
  const server = servers[sid];
  if (server === undefined) return;
  server.emit('drop', {
    __proto__: null,
    localAddress: a[0],
    localPort: a[1],
    localFamily: a[2],
    remoteAddress: a[3],
    remotePort: a[4],
    remoteFamily: a[5],
  });
}

/**
 * A connection JS had no socket for failed: node's socket existed since the accept.
 * @type {import('../internal/native').Callbacks['onReset']}
 */
function onReset(sid, id, errno) {
  const server = servers[sid];
  if (server === undefined) return;
  closeSocket(server, socketFor(server, id), errno);
}

/**
 * A socket's timeout, queued (see F_QUEUED): a listener's throw shows node's caret.
 * @type {import('../internal/native').Callbacks['onTimeout']}
 */
function onTimeout(id, sid) {
  deliver(true, emitTimeout, id, this, NO_POSITION, id, sid);
}

function emitTimeout(id, sid) {
  let socket = sockets.get(id);
  if (socket === undefined) {
    // Only the server listens for 'timeout': it gets a socket object to look at.
    const server = servers[sid];
    if (server === undefined) return;
    socket = socketFor(server, id);
  }
  socket.emit('timeout');
}

/**
 * A parse error or a request timeout, from the tick queue when it may.
 * @type {import('../internal/native').Callbacks['onClientError']}
 */
function onClientError(sid, id, code, reason, rawPacket, bytesParsed) {
  deliver(true, emitClientError, id, this, NO_POSITION, sid, id, code, reason, rawPacket,
    bytesParsed);
}

function emitClientError(sid, id, code, reason, rawPacket, bytesParsed) {
  const server = servers[sid];
  if (server === undefined) return;
  clientError(socketFor(server, id), code, reason, rawPacket, bytesParsed);
}

/** @type {import('../internal/native').Callbacks['onData']} */
function onData(id, chunk) {
  deliver(false, data, id, this, NO_POSITION, id, chunk);
}

function data(id, chunk) {
  const socket = sockets.get(id);
  if (socket === undefined) return;
  if (socket[kMode] === MODE_HTTP) {
    if (upgradeAsked(socket, chunk)) return;
    // Bytes the parser consumed, for the app's own 'data' listeners.
    socket.emit('data', chunk);
  } else if (!socket.push(chunk)) {
    socket._pauseNative();
  }
}

/** @type {import('../internal/native').Callbacks['onEnd']} */
function onEnd(id) {
  const socket = sockets.get(id);
  if (socket !== undefined) {
    // As net.Socket's onStreamRead at EOF: read(0) emits 'end' even when nobody reads.
    socket.push(null);
    socket.read(0);
  }
}

/** @type {import('../internal/native').Callbacks['onShutdown']} */
function onShutdown(id) {
  const socket = sockets.get(id);
  if (socket !== undefined) socket._onShutdown();
}

/**
 * fast-http panicked serving `sid` (it closed what the panic concerned): a JS error.
 * @type {import('../internal/native').Callbacks['onInternalError']}
 */
function onInternalError(sid, message) {
  const err = codedError(message, 'ERR_FAST_HTTP_INTERNAL');
  const server = servers[sid];
  if (server !== undefined) server.emit('error', err);
  else nextTick(throwError, err);
}

/**
 * An https connection's handshake completed, before its first request: tls.Server's
 * 'secureConnection', with what the socket's TLS getters answer from.
 * @type {import('../internal/native').Callbacks['onSecure']}
 */
function onSecure(sid, id, session) {
  ranNow();
  const server = servers[sid];
  if (server === undefined) return;
  const socket = socketFor(server, id);
  socket[kTlsSession] = session;
  // node's 'secureConnection' gets a TLSSocket that is one already (a plain server the
  // addon's TLS was set on directly has no TLSSocket surface to give).
  server[kSecureSocket]?.(socket, true);
  server.emit('secureConnection', socket);
}

/**
 * A TLS connection failed before its handshake completed (OpenSSL's code, or node's own for a
 * client gone or too slow): tls.Server's 'tlsClientError'. The addon closes it next.
 * @type {import('../internal/native').Callbacks['onTlsClientError']}
 */
function onTlsClientError(sid, id, code, message) {
  ranNow();
  const server = servers[sid];
  if (server === undefined || server.listenerCount('tlsClientError') === 0) return;
  const err = code === 'ECONNRESET' && message === 'read ECONNRESET' ?
    resetInHandshake() : errors.opensslError(message, code);
  emitTlsClientError(server, socketFor(server, id), err);
}

/** tls.Server's 'tlsClientError' (and the 'clientError' https makes of it), once a socket. */
function emitTlsClientError(server, socket, err) {
  if (socket[kTlsErrorEmitted] === true) return;
  socket[kTlsErrorEmitted] = true;
  // It gets the TLSSocket.
  server[kSecureSocket]?.(socket, false);
  server.emit('tlsClientError', err, socket);
}

/**
 * A TLS connection's record failed after its handshake: node's TLSSocket emits OpenSSL's
 * error without destroying itself (_tls_wrap's onerror), and http's socketOnError makes it
 * 'clientError' (or destroys the socket with it). The addon closes the connection next.
 * @type {import('../internal/native').Callbacks['onTlsError']}
 */
function onTlsError(id, code, message) {
  ranNow();
  const socket = sockets.get(id);
  if (socket !== undefined && !socket.destroyed) {
    socket.emit('error', errors.opensslError(message, code));
  }
}

// A reset after part of a TLS handshake came: Node 24+ gives the read error, 20 and 22 the
// hang-up their onSocketClose reports.
const RESET_IS_READ_ERROR = Number(process.versions.node.split('.')[0]) >= 24;
function resetInHandshake() {
  return RESET_IS_READ_ERROR ? errors.readError(UV_ECONNRESET) : errors.connReset('socket hang up');
}

/**
 * One key-log line of a TLS handshake (the server listens for 'keylog'): tls.Server's.
 * @type {import('../internal/native').Callbacks['onKeylog']}
 */
function onKeylog(sid, id, line) {
  ranNow();
  const server = servers[sid];
  if (server === undefined) return;
  const socket = socketFor(server, id);
  // node's 'keylog' gets the TLSSocket, during its handshake.
  if (socket.encrypted !== true) server[kSecureSocket]?.(socket, false);
  server.emit('keylog', line, socket);
}

/**
 * A ClientHello named `servername` and the server has an SNICallback (tls.Server's loadSNI),
 * or it offered ALPN `protocols` (as on the wire) and the server has an ALPNCallback. The
 * handshake waits for binding.tlsSniAnswer (the https layer sets kSniRequest).
 * @type {import('../internal/native').Callbacks['onSniRequest']}
 */
function onSniRequest(sid, id, servername, protocols) {
  ranNow();
  const server = servers[sid];
  if (server === undefined) return;
  if (typeof server[kSniRequest] === 'function') {
    server[kSniRequest](socketFor(server, id), servername, protocols);
  } else {
    binding.tlsSniAnswer(id, SNI_SERVER_CONTEXT, ALPN_NOT_ASKED);
  }
}

/**
 * A TLS connection node's TLS serves (a ClientHello naming a server rustls refuses, or a
 * server listening for what only OpenSSL tells): from `fd` (the https layer sets kHandOff),
 * starting with the bytes `read` from it.
 * @type {import('../internal/native').Callbacks['onTlsHandOff']}
 */
function onTlsHandOff(sid, id, fd, read) {
  ranNow();
  const server = servers[sid] ?? sockets.get(id)?.server;
  if (typeof server?.[kHandOff] === 'function') {
    server[kHandOff](sockets.get(id), fd, read);
  } else {
    closeFd(fd);
  }
}

/** An event whose handler's throw does not fail the connection's parser. */
const NO_POSITION = -1;

/** The last group (the addon's number for a run of calls between ticks) JS ran a handler in. */
let ranIn = -1;

/** A handler runs now in the current group (a direct callback's too). */
function ranNow() {
  ranIn = events[EVENTS_GROUP];
}

/**
 * The one place that decides what runs now and what from the tick queue. A handler runs from
 * the tick queue (lib/http/tick-queue.js), where a throw keeps node's source excerpt, when it
 * may (`queueable`) and nothing ran now in its group: once something ran now, ticks it queued
 * would run first, where node calls the handler before them. What follows events that wait
 * there waits too, in the order the addon gave. `resource`: the connection's async resource,
 * the `this` of the addon's calls. `position`: where the event ended in the bytes the addon
 * parsed, when a throw of its handler fails the connection's parser as node's parser
 * callbacks do (the addon stops there); NO_POSITION else.
 */
function deliver(queueable, fn, id, resource, position, a, b, c, d, e, f, g, h, i) {
  if ((!queueable || ranIn === events[EVENTS_GROUP]) && !tickQueue.waiting()) {
    ranNow();
    let done = false;
    try {
      fn(a, b, c, d, e, f, g, h, i);
      done = true;
    } finally {
      if (!done) handlerThrew(fn, id, position);
    }
    return;
  }
  // A plain object when newResource threw: the queue runs its events without a scope.
  if (resource[kAdopted] === false) adoptIds(resource);
  tickQueue.enqueue(fn, id, resource, position, a, b, c, d, e, f, g, h, i);
}

/**
 * A handler threw. A request's handler or a body's 'data' listener: node's parser callback
 * failed, so llhttp fails the connection's later reads and never reaches what followed in
 * this one (returns true: the rest of the connection's queued events go).
 */
function handlerThrew(fn, id, position) {
  if (position === NO_POSITION) return false;
  binding.handlerThrew(id, position, fn === body);
  return true;
}

/**
 * A connection's async resource: the addon's context for the connection is made on it, and
 * what JS runs from its tick queue runs in it. One per connection, as node's parser has one
 * (lib/http/open-handles.js).
 * @type {import('../internal/native').Callbacks['newResource']}
 */
function newResource(sid, id) {
  return connectionResource(servers[sid], id);
}

/**
 * Gives a connection's resource the async ids of the addon's context for it (this runs in
 * that context), so a handler run from the tick queue and a body's listener the addon calls
 * see one executionAsyncId, as on node. AsyncResource keeps its ids in symbol-keyed fields
 * (since Node 8); where none matches, the resource keeps its own ids.
 */
function adoptIds(resource) {
  resource[kAdopted] = true;
  const ownId = resource.asyncId();
  const ownTrigger = resource.triggerAsyncId();
  const id = executionAsyncId();
  if (id === ownId || id <= 0) return;
  const trigger = triggerAsyncId();
  for (const key of Object.getOwnPropertySymbols(resource)) {
    if (key === kHandleId) continue;
    if (resource[key] === ownId) resource[key] = id;
    else if (resource[key] === ownTrigger) resource[key] = trigger;
  }
}

/**
 * Whether a connection's resource carries the ids of the addon's context for it: then its
 * events may come in a batch of many connections' (onBatch), which runs outside that context
 * (the tick queue runs them in the resource's scope).
 */
function adopted(resource) {
  return resource[kAdopted] !== false;
}

/**
 * A batch's group k (connection `id`'s events) begins: a mark in the tick queue before its
 * events (onBatch).
 */
function beginGroup(k, id) {
  tickQueue.enqueue(groupBegins, -1, null, NO_POSITION, k, id);
}

/** node's tick and promise-job run, as when its callback for one socket's read returns. */
const runTicks = process._tickCallback;

/**
 * Where a batch's group k begins in the tick queue: the ticks and promise jobs of the group
 * before it run first, as node runs them between two sockets' reads. A connection destroyed
 * meanwhile (by a handler of an earlier group) is never read again on node: its events go.
 */
function groupBegins(k, id) {
  if (k !== 0) runTicks();
  events[EVENTS_PROGRESS] = k;
  if (sockets.get(id)?.destroyed === true) tickQueue.dropHead(id);
}

/** An Error with node's `code` property. */
function codedError(message, code) {
  const err = new Error(message);
  Object.defineProperty(err, 'code', {
    __proto__: null, value: code, writable: true, enumerable: true, configurable: true,
  });
  return err;
}

function throwError(err) {
  throw err;
}

/** @type {import('../internal/native').Callbacks['onServerDrained']} */
function onServerDrained(sid) {
  const server = servers[sid];
  if (server !== undefined) server._onDrained();
}

tickQueue.setup(handlerThrew, responseBatch.ranAll);
// A throw from ticks the addon's scope ran (a body's 'data' listener) fails the connection's
// parser, as node's on_body callback fails: the addon hears of it from here.
process.on('uncaughtExceptionMonitor', noteUncaught);

function noteUncaught() {
  binding.noteUncaught();
}

init({
  onRequest, onBody, onBodyEnd, onDrain, onClose, onReset, onTimeout, onClientError, onConnection,
  onDrop,
  onData, onEnd, onServerDrained, onShutdown, onInternalError, onUpgrade, onSecure,
  onTlsClientError, onTlsError, onKeylog, onSniRequest, onTlsHandOff, newResource, onClosePhase,
  takeResponses: responseBatch.take,
}, tickQueue.waiting, adopted, beginGroup);

module.exports = { onConnection: emitConnection, onDrop };
