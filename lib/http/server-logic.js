'use strict';
// node's HTTP server logic (lib/_http_server.js: connectionListenerInternal, parserOnIncoming,
// resOnFinish, socketOnTimeout, socketOnError, ...) with the parser and net.Socket replaced
// by the addon; native-events.js calls it. No per-request closures: listeners are shared
// functions using `this`.
const { nextTick } = require('../internal/scheduling');
const {
  F_HTTP11, F_KEEP_ALIVE, F_UPGRADE, F_EXPECT_CONTINUE,
  F_EXPECT_OTHER, F_BODY_DONE, F_HOST, F_CONTENT_LENGTH, F_CHUNKED, F_INVALID_TE,
  VERSION_MAJOR_SHIFT, VERSION_MINOR_SHIFT, VERSION_DIGIT_MASK,
} = require('../internal/native').flags;
const {
  binding, sockets, clientErrorResponses, badRequestResponse,
} = require('../internal/native');
const { NO_RESPONSE } = require('../internal/native').constants;
const {
  METHODS, kIncomingMessage, kServerResponse, kUniqueHeaders, kNeedDrain,
  kOptimizeEmptyRequests, kDetachAbortSignal, abortsWaitingResponses, drainWaitsForResponse,
} = require('../internal/node-internals');
const { FastSocket, toRaw, onSocketNewListener, kLazy } = require('./socket');
const {
  IncomingMessage, newBodylessRequest, setHeaderBlock,
} = require('./incoming');
const {
  makeLazy, lazyOf, lazyEnd, lazyDump, watchEnd, onDumpedEnd,
} = require('../internal/lazy-request-stream');
const { ConnState } = require('./conn-state');
const { endedNatively } = require('./response');
const diagnostics = require('./diagnostics');
const bornWith = require('./born-with');
const EventEmitter = require('node:events');
const net = require('node:net');
const errors = require('../internal/errors');
const {
  kId, kSeq, kState, kBodyReq, kEagerHeaders, kParser, kIncoming, kConfig, kEmitSeen, kWatchEmit,
  kConn,
} = require('../internal/symbols');

const responses = {
  ...clientErrorResponses,
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
};

/** The socket object for a connection, made on first need. */
function socketFor(server, id) {
  let socket = sockets.get(id);
  if (socket === undefined) {
    socket = new FastSocket(server, id);
    socket[kState] = new ConnState();
    socket.on('timeout', socketOnTimeout);
    socket.on('error', socketOnError);
    socket.on('close', socketOnClose);
    socket.on('drain', socketOnDrain);
  }
  return socket;
}

/**
 * The request object for a head the addon parsed (parserOnIncoming's first half, and what
 * node's parser sets before it): a body-less request of fast-http's own class (not an app's
 * subclass, nor one whose prototype an app swaps) runs its stream lifecycle only when observed.
 */
function newRequest(server, socket, seq, method, url, headerBlock, flags, body) {
  // node's resetSocketTimeout: the next request's bytes end the keep-alive timeout.
  const state = socket[kState];
  if (state.keepAliveTimeoutSet) {
    state.keepAliveTimeoutSet = false;
    socket.timeout = server.timeout || 0;
  }
  const eager = server[kEagerHeaders];
  let req = null;
  const bodyless = (flags & (F_BODY_DONE | F_UPGRADE)) === F_BODY_DONE && !eager &&
    (body === undefined || body.length === 0) && server[kIncomingMessage] === IncomingMessage;
  // Born with the prototype the app gives it, when only the app's 'request' can see it.
  const born = (flags & (F_UPGRADE | F_EXPECT_CONTINUE | F_EXPECT_OTHER)) === 0 ?
    bornWith.requestBorn(server) : null;
  if (bodyless) req = newBodylessRequest(socket, born === null ? null : born.bodyless);
  if (req === null) {
    req = born === null ? new server[kIncomingMessage](socket) : new born.full(socket);
    if (bodyless) makeLazy(req);
  }
  setVersion(req, flags);
  // node: `socket.server.joinDuplicateHeaders || parser.joinDuplicateHeaders` (null).
  req.joinDuplicateHeaders = server.joinDuplicateHeaders || null;
  req.url = url;
  req.upgrade = (flags & F_UPGRADE) !== 0;
  req.method = METHODS[method];
  req[kSeq] = seq;
  setHeaderBlock(req, headerBlock, eager);
  if (socket[kParser] !== null) socket[kIncoming] = req;
  return req;
}

/** The request's HTTP version, as the addon packs it in the flags. */
function setVersion(req, flags) {
  if (flags & F_HTTP11) {
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    req.httpVersion = '1.1';
  } else {
    const major = (flags >>> VERSION_MAJOR_SHIFT) & VERSION_DIGIT_MASK;
    const minor = (flags >>> VERSION_MINOR_SHIFT) & VERSION_DIGIT_MASK;
    req.httpVersionMajor = major;
    req.httpVersionMinor = minor;
    req.httpVersion = `${major}.${minor}`;
  }
}

/** The socket whose request's listeners run now (see parserOnIncoming), or null. */
let inHead = null;

/**
 * node's parserOnIncoming for a request that does not upgrade: queued on the connection, its
 * response made and given the socket (or queued behind earlier pipelined ones), then
 * 'request' or the answer node gives itself, then the body that came with the head.
 */
function parserOnIncoming(server, socket, req, flags, body) {
  const state = socket[kState];
  if ((flags & F_BODY_DONE) === 0) socket[kBodyReq] = req;
  state.pushIncoming(req);

  // node's flood protection: stop reading while responses queue up unsent.
  const highWaterMark = socket.writableHighWaterMark;
  if (!socket._paused) {
    if ((!socket[kLazy] && socket._writableState.needDrain) ||
        state.outgoingData >= highWaterMark) {
      socket._paused = true;
      socket.pause();
    }
  }

  const res = newResponse(server, socket, req, flags, highWaterMark);
  if (socket._httpMessage) {
    state.pushOutgoing(res);
  } else {
    assignSocket(res, socket);
  }
  res.on('finish', resOnFinish);
  // node's parser is inside on_headers_complete while the request's listeners run: the
  // message is not complete, so the connection is not idle (closeIdleConnections).
  inHead = socket;
  try {
    if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1 ||
        !answeredByServer(server, socket, req, res, flags)) {
      server.emit('request', req, res);
      bornWith.learn(server, req, res);
    }
  } finally {
    inHead = null;
  }
  // An emit wrapped while the server runs (by a handler, say) sees the connections after it.
  if (server.emit !== server[kEmitSeen]) server[kWatchEmit]();
  deliverBody(req, flags, body);
}

/** The response node's parserOnIncoming makes, with the server's settings copied in. */
function newResponse(server, socket, req, flags, highWaterMark) {
  const Born = (flags & (F_EXPECT_CONTINUE | F_EXPECT_OTHER)) === 0 ?
    bornWith.responseBorn(server) : null;
  const options = responseOptions(highWaterMark, server.rejectNonStandardBodyWrites);
  const res = Born === null ? new server[kServerResponse](req, options) : new Born(req, options);
  // The server's getters for these share one function (a megamorphic load per request);
  // their values live in the config the addon is given too.
  const config = server[kConfig];
  res._keepAliveTimeout = config.keepAliveTimeout;
  res._maxRequestsPerSocket = config.maxRequestsPerSocket;
  res.shouldKeepAlive = (flags & F_KEEP_ALIVE) !== 0;
  res[kUniqueHeaders] = server[kUniqueHeaders];
  res[kSeq] = req[kSeq];
  res[kConn] = socket;
  res._onPendingData = onPendingData;
  if (diagnostics.requestStart.hasSubscribers) {
    diagnostics.requestStart.publish({ request: req, response: res, socket, server });
  }
  // optimizeEmptyRequests (Node 24+): a request with neither Content-Length nor
  // Transfer-Encoding is dumped and closed before 'request' (no 'data', 'end' or 'close').
  if (kOptimizeEmptyRequests !== undefined && server[kOptimizeEmptyRequests] === true &&
      (flags & (F_CONTENT_LENGTH | F_CHUNKED | F_INVALID_TE)) === 0) {
    req._dumpAndCloseReadable();
    req._read();
  }
  return res;
}

/**
 * What node's parserOnIncoming answers itself for an HTTP/1.1 request instead of emitting
 * 'request': 400 without Host, 503 past maxRequestsPerSocket ('dropRequest'), and
 * Expect ('checkContinue', 100 Continue, 'checkExpectation', 417). False: 'request' is due.
 */
function answeredByServer(server, socket, req, res, flags) {
  // RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without Host.
  if (server.requireHostHeader && (flags & F_HOST) === 0) {
    res.writeHead(400, ['Connection', 'close']);
    res.end();
    return true;
  }
  const state = socket[kState];
  const limit = server[kConfig].maxRequestsPerSocket;
  const limited = typeof limit === 'number' && limit > 0;
  if (limited) {
    state.requestsCount++;
    res.maxRequestsOnConnectionReached = limit <= state.requestsCount;
  }
  if (limited && limit < state.requestsCount) {
    server.emit('dropRequest', req, socket);
    res.writeHead(503);
    res.end();
    return true;
  }
  if ((flags & (F_EXPECT_CONTINUE | F_EXPECT_OTHER)) === 0) return false;
  if ((flags & F_EXPECT_CONTINUE) === 0) {
    if (server.listenerCount('checkExpectation') > 0) {
      server.emit('checkExpectation', req, res);
    } else {
      res.writeHead(417);
      res.end();
    }
    return true;
  }
  res._expect_continue = true;
  if (server.listenerCount('checkContinue') > 0) {
    server.emit('checkContinue', req, res);
  } else {
    res.writeContinue();
    server.emit('request', req, res);
  }
  return true;
}

/** The options node passes to every ServerResponse; read in the constructor, not kept. */
let resOptions = { highWaterMark: undefined, rejectNonStandardBodyWrites: undefined };

function responseOptions(highWaterMark, rejectNonStandardBodyWrites) {
  if (resOptions.highWaterMark !== highWaterMark ||
      resOptions.rejectNonStandardBodyWrites !== rejectNonStandardBodyWrites) {
    resOptions = { highWaterMark, rejectNonStandardBodyWrites };
  }
  return resOptions;
}

/**
 * A body that arrived with the head: node emits it after 'request' (llhttp's on_body). The
 * message completes now when there is no body; after a body the addon reports the end
 * (onBodyEnd) once JS has run the ticks and promise jobs of the body, as node does.
 */
function deliverBody(req, flags, body) {
  if (body !== undefined && body.length > 0 && !req._dumped) req.push(body);
  if ((flags & F_BODY_DONE) === 0) return;
  req.complete = true;
  const lazy = lazyOf(req);
  if (lazy !== null) lazyEnd(req, lazy);
  else req.push(null);
}

/** The socket leaves node's HTTP server: its bytes are the app's from now on. */
function detachHttp(socket) {
  toRaw(socket);
  socket.removeListener('timeout', socketOnTimeout);
  socket.removeListener('error', socketOnError);
  socket.removeListener('close', socketOnClose);
  socket.removeListener('close', onServerResponseClose);
  socket.removeListener('drain', socketOnDrain);
}

function assignSocket(res, socket) {
  socket._httpMessage = res;
  socket[kState].assignedSeq = res[kSeq];
  addResponseClose(socket);
  res.socket = socket;
  res.emit('socket', socket);
  // node's _flush() does nothing on a socket no longer writable: a response the addon
  // wrote while it waited does not finish on a destroyed one either.
  if (endedNatively(res) && onlyCallbacks(res.outputData) && socket.writable) {
    releaseWaiting(res);
  } else {
    res._flush();
  }
}

function onlyCallbacks(outputData) {
  for (let i = 0; i < outputData.length; i++) {
    if (outputData[i].data.length !== 0) return false;
  }
  return true;
}

/**
 * A pipelined response the addon already wrote while it waited: what node's _flush() would
 * do with its queued entries (all empty writes carrying 'finish'), minus the empty socket
 * writes: callbacks run a tick later, as after a write, then 'prefinish'.
 */
function releaseWaiting(res) {
  const outputData = res.outputData;
  res.outputData = [];
  res._onPendingData(-res.outputSize);
  res.outputSize = 0;
  for (let i = 0; i < outputData.length; i++) {
    const cb = outputData[i].callback;
    if (typeof cb === 'function') nextTick(cb);
  }
  if (res.finished) res._finish();
}

function detachSocket(res, socket) {
  socket.removeListener('close', onServerResponseClose);
  socket._httpMessage = null;
  res.socket = null;
}

function resOnFinish() {
  const res = this;
  const req = res.req;
  const socket = res[kConn];
  const state = socket[kState];
  if (state === null) return;
  if (diagnostics.responseFinish.hasSubscribers) {
    diagnostics.responseFinish.publish({ request: req, response: res, socket, server: socket.server });
  }
  // req.signal (Node 24+) no longer follows the socket once the response is done.
  if (kDetachAbortSignal !== undefined) req[kDetachAbortSignal]();
  // Pipelined responses may finish out of order (the addon keeps the wire order).
  state.removeIncoming(req);
  if (!req._consuming) {
    const lazy = lazyOf(req);
    if (lazy !== null) lazyDump(req, lazy);
    else if (!req._readableState.resumeScheduled) req._dump();
  }
  const owner = socket._httpMessage === res;
  if (owner) detachSocket(res, socket);
  clearIncoming(req, socket);
  nextTick(emitCloseNT, res);
  if (!endedNatively(res)) {
    // Written through the socket (node's own path): tell the addon the response is over.
    binding.finish(socket[kId], res[kSeq], !!res._last);
  }
  if (!owner) return;
  if (res._last) {
    socket.destroySoon();
  } else {
    const next = state.shiftOutgoing();
    if (next !== null) {
      assignSocket(next, socket);
    } else if (socket.server.keepAliveTimeout) {
      // The addon runs the idle timer; `socket.timeout` says what node's
      // socket.setTimeout(keepAliveTimeout + buffer) would have set.
      socket.timeout = socket.server.keepAliveTimeout + keepAliveBuffer(socket.server);
      state.keepAliveTimeoutSet = true;
    }
  }
}

/**
 * node keeps an idle keep-alive socket this much longer than it announces: 1 s on Node 20,
 * server.keepAliveTimeoutBuffer where Node has it (a finite number >= 0, else 1 s).
 */
function keepAliveBuffer(server) {
  const b = server.keepAliveTimeoutBuffer;
  return Number.isFinite(b) && b >= 0 ? b : 1000;
}

/**
 * node's clearIncoming: the parser lets go of a request once it has been read. `socket`: the
 * request's connection (its 'end' comes with none: it is still `req.socket` then, or was
 * detached by a destroyer that ends nothing).
 */
function clearIncoming(req, socket) {
  req = req || this;
  socket = socket || req.socket;
  if (socket && socket[kParser] !== null && socket[kIncoming] === req) {
    if (req.readableEnded) socket[kIncoming] = null;
    else if (!watchEnd(req)) req.on('end', clearIncoming);
  }
}

onDumpedEnd(clearIncoming);

function emitCloseNT(res) {
  if (!res._closed) {
    res.destroyed = true;
    res._closed = true;
    res.emit('close');
  }
}

/** node's updateOutgoingData, as a shared method of the response. */
function onPendingData(delta) {
  const socket = this[kConn];
  const state = socket?.[kState];
  if (!state) return;
  state.outgoingData += delta;
  socketOnDrain.call(socket);
}

function socketOnDrain() {
  const state = this[kState];
  if (state && this._paused && !(state.outgoingData > this.writableHighWaterMark)) {
    this._paused = false;
    this.resume();
  }
  const msg = this._httpMessage;
  if (msg && !msg.finished && msg[kNeedDrain] &&
      (!drainWaitsForResponse || msg.writableLength === 0)) {
    msg[kNeedDrain] = false;
    msg.emit('drain');
  }
}

function socketOnClose() {
  // node's freeParser.
  const parser = this[kParser];
  if (parser) parser.free();
  this[kParser] = null;
  this[kIncoming] = null;
  const state = this[kState];
  if (state) {
    for (let req = state.shiftIncoming(); req !== null; req = state.shiftIncoming()) {
      req.destroy(errors.connReset('aborted'));
    }
    if (abortsWaitingResponses) {
      for (let res = state.shiftOutgoing(); res !== null; res = state.shiftOutgoing()) {
        res.destroy(errors.connReset('aborted'));
      }
    }
  }
  // A request whose response finished is no longer node's to abort: its body, if still
  // coming, just stops (no 'aborted', 'error' or 'close').
}

// node's assignSocket calls socket.on('close', onServerResponseClose) for every response.
// On fast-http's sockets that also emits 'newListener' to the socket's own tap check
// (onSocketNewListener), which node's sockets do not have: the emit and the emitter's walk
// were 4-5 % of a pipelined request's CPU. Where nothing else could see the call (the listener
// methods are node's own, unpatched; no app 'close' or 'newListener' listener; a max-listeners
// limit of at least 2) the listener store gets what EventEmitter would give it.
const socketOn = FastSocket.prototype.on;
const eeOn = EventEmitter.prototype.on;
const netOn = net.Socket.prototype.on;

function addResponseClose(socket) {
  const events = socket._events;
  const max = socket._maxListeners ?? EventEmitter.defaultMaxListeners;
  if (events.close === socketOnClose &&
      (events.newListener === undefined || events.newListener === onSocketNewListener) &&
      (max === 0 || max >= 2) && socket.on === socketOn && net.Socket.prototype.on === netOn &&
      EventEmitter.prototype.on === eeOn) {
    events.close = [socketOnClose, onServerResponseClose];
  } else {
    socket.on('close', onServerResponseClose);
  }
}

/**
 * node's onServerResponseClose: the socket's current response closes with it. Added per
 * response and removed when it detaches, as node does: an idle connection has one 'close'
 * listener and no listener array (64 B of heap less per idle connection; issue #20).
 */
function onServerResponseClose() {
  const res = this._httpMessage;
  if (res) emitCloseNT(res);
}

/**
 * node's closeAllConnections / closeIdleConnections on server `sid`'s connections: each one JS
 * has a socket for gets `socket.destroy()` (its `destroyed` is true at once, and what it had
 * written still goes out), the others close natively. `idleOnly`: the ids are those between
 * messages, and node spares one whose response has not ended (`_httpMessage.finished`), as
 * it would one whose request's listeners run now or whose body's end has not reached JS.
 */
function destroyConnections(server, sid, idleOnly) {
  const all = binding.serverConns(sid, false);
  const ids = idleOnly ? binding.serverConns(sid, true) : all;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const socket = sockets.get(id);
    if (idleOnly) {
      const res = socket?._httpMessage;
      if ((res && !res.finished) || socket === inHead) continue;
      // node's parser completes a message with a body when JS hears of its end (onBodyEnd).
      if (socket !== undefined && socket[kBodyReq] != null) continue;
    }
    if (socket !== undefined) socket.destroy();
    else binding.destroy(id, false, NO_RESPONSE);
  }
  // A connection the addon closed already (its `Connection: close` response written, a
  // reset) whose close has not reached JS yet is open to node's eyes until then: destroyed now.
  let open = null;
  sockets.forEach((socket) => {
    if (socket.server !== server || socket.destroyed) return;
    if (open === null) open = new Set(all);
    if (!open.has(socket[kId])) socket.destroy();
  });
}

function socketOnTimeout() {
  const req = this[kState]?.firstIncoming ?? this[kBodyReq];
  const reqTimeout = req && !req.complete && req.emit('timeout', this);
  const res = this._httpMessage;
  const resTimeout = res && res.emit('timeout', this);
  const serverTimeout = this.server.emit('timeout', this);
  if (!reqTimeout && !resTimeout && !serverTimeout) this.destroy();
}

/** A client error the addon reported (parse error, request timeout, a message cut short). */
function clientError(socket, code, reason, rawPacket, bytesParsed) {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socketOnError.call(socket, errors.ERR_HTTP_REQUEST_TIMEOUT());
  } else if (rawPacket === undefined) {
    socketOnEndError(socket, code, reason);
  } else {
    socketOnError.call(socket, errors.parseError(code, reason, bytesParsed, rawPacket));
  }
}

/**
 * The peer's FIN cut a message short. node's socket emits 'end' first; its socketOnEnd
 * (the first 'end' listener, added at the connection) then gets the error of
 * parser.finish(): 'Parse Error' with neither the reason in the message nor a rawPacket
 * (llhttp_finish is not parser.execute, whose errors prepareError() completes).
 */
function socketOnEndError(socket, code, reason) {
  const err = new Error('Parse Error');
  err.bytesParsed = 0;
  err.code = code;
  err.reason = reason;
  if (socket[kState] !== null) socket[kState].endFailed = true;
  socket.prependOnceListener('end', function socketOnEnd() {
    socketOnError.call(this, err);
  });
  socket.push(null);
  socket.read(0);
}

function noop() {}

function socketOnError(e) {
  this.removeListener('error', socketOnError);
  if (this.listenerCount('error') === 0) this.on('error', noop);
  if (!this.server.emit('clientError', e, this)) {
    if (this.writable && (!this._httpMessage || !this._httpMessage._headerSent)) {
      this.write(responses[e.code] || badRequestResponse);
    }
    this.destroy(e);
  }
}

module.exports = {
  socketFor, newRequest, parserOnIncoming, detachHttp, clientError, keepAliveBuffer,
  destroyConnections,
};
