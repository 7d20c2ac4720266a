'use strict';
// What happens on each native event, following lib/_http_server.js (parserOnIncoming,
// resOnFinish, socketOnTimeout, socketOnError, ...) with the parser and net.Socket replaced
// by the addon. No per-request closures: listeners are shared functions using `this`.
const {
  F_HTTP11, F_KEEP_ALIVE, F_UPGRADE, F_EXPECT_CONTINUE,
  F_EXPECT_OTHER, F_BODY_DONE, F_HOST, F_CONNECT, F_CONTENT_LENGTH, F_CHUNKED, F_INVALID_TE,
  F_ASK_UPGRADE, F_UPGRADE_BODY,
} = require('../internal/native').flags;
const { binding, servers, sockets, init } = require('../internal/native');
const {
  METHODS, kIncomingMessage, kServerResponse, kUniqueHeaders, kNeedDrain,
  kOptimizeEmptyRequests, kDetachAbortSignal, abortsWaitingResponses, drainWaitsForResponse,
} = require('../internal/node-internals');
const { FastSocket, toRaw, MODE_HTTP, kLazy } = require('./socket');
const {
  IncomingMessage, newBodylessRequest, setHeaderBlock, setTrailerBlock,
} = require('./incoming');
const {
  makeLazy, lazyOf, lazyEnd, lazyDump, watchEnd, onDumpedEnd,
} = require('../internal/lazy-request-stream');
const { ConnState } = require('./conn-state');
const { askUpgrade } = require('./upgrade-callback');
const { UpgradeStream } = require('./upgrade-stream');
const { endedNatively } = require('./response');
const diagnostics = require('./diagnostics');
const errors = require('../internal/errors');
const {
  kId, kSeq, kState, kBodyReq, kEagerHeaders, kMode, kParser, kIncoming, kConfig,
  kAsking, kUpgradeReq, kUpgradeStream,
} = require('../internal/symbols');

const EMPTY = Buffer.alloc(0);

const badRequestResponse = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';
const responses = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
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
    socket.on('close', onResponseSocketClose);
    socket.on('drain', socketOnDrain);
  }
  return socket;
}

function onConnection(sid, id) {
  const server = servers[sid];
  if (server === undefined) return;
  const socket = socketFor(server, id);
  server.emit('connection', socket);
  if (diagnostics.serverSocket.hasSubscribers) diagnostics.serverSocket.publish({ socket });
}

function onRequest(sid, id, seq, method, url, headerBlock, flags, body) {
  const server = servers[sid];
  if (server === undefined) return;
  const socket = socketFor(server, id);
  const state = socket[kState];
  const eager = server[kEagerHeaders];
  // A body-less request of fast-http's own class (not an app's subclass, nor one whose
  // prototype an app swaps) runs its stream lifecycle only when observed.
  let req = null;
  const bodyless = (flags & (F_BODY_DONE | F_UPGRADE)) === F_BODY_DONE && !eager &&
    (body === undefined || body.length === 0) && server[kIncomingMessage] === IncomingMessage;
  if (bodyless) req = newBodylessRequest(socket);
  if (req === null) {
    req = new server[kIncomingMessage](socket);
    if (bodyless) makeLazy(req);
  }
  if (flags & F_HTTP11) {
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    req.httpVersion = '1.1';
  } else {
    const major = (flags >>> 16) & 15;
    const minor = (flags >>> 20) & 15;
    req.httpVersionMajor = major;
    req.httpVersionMinor = minor;
    req.httpVersion = `${major}.${minor}`;
  }
  req.joinDuplicateHeaders = server.joinDuplicateHeaders;
  req.url = url;
  req.upgrade = (flags & F_UPGRADE) !== 0;
  req.method = METHODS[method];
  req[kSeq] = seq;
  setHeaderBlock(req, headerBlock, eager);
  if (socket[kParser] !== null) socket[kIncoming] = req;

  if (req.upgrade) {
    if ((flags & F_ASK_UPGRADE) === 0 || askUpgrade(server, socket, req)) {
      if ((flags & F_UPGRADE_BODY) === 0) {
        upgrade(server, socket, req, flags, body);
      } else {
        // Node 26: the body first, through req; the addon says when to emit (onUpgrade).
        socket[kBodyReq] = req;
        socket[kUpgradeReq] = req;
      }
      return;
    }
    // Refused: a plain request, its body (if any) still to come from the addon; `body` was
    // the upgrade's head.
    flags &= ~F_UPGRADE;
    body = undefined;
  }

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

  const res = new server[kServerResponse](req,
    responseOptions(highWaterMark, server.rejectNonStandardBodyWrites));
  // The server's getters for these share one function (a megamorphic load per request);
  // their values live in the config the addon is given too.
  const config = server[kConfig];
  res._keepAliveTimeout = config.keepAliveTimeout;
  res._maxRequestsPerSocket = config.maxRequestsPerSocket;
  res.shouldKeepAlive = (flags & F_KEEP_ALIVE) !== 0;
  res[kUniqueHeaders] = server[kUniqueHeaders];
  res[kSeq] = seq;
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

  if (socket._httpMessage) {
    state.pushOutgoing(res);
  } else {
    assignSocket(res, socket);
  }
  res.on('finish', resOnFinish);

  let handled = false;
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
    // RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without Host.
    if (server.requireHostHeader && (flags & F_HOST) === 0) {
      res.writeHead(400, ['Connection', 'close']);
      res.end();
      deliverBody(req, flags, body);
      return;
    }
    const limit = config.maxRequestsPerSocket;
    const limited = typeof limit === 'number' && limit > 0;
    if (limited) {
      state.requestsCount++;
      res.maxRequestsOnConnectionReached = limit <= state.requestsCount;
    }
    if (limited && limit < state.requestsCount) {
      handled = true;
      server.emit('dropRequest', req, socket);
      res.writeHead(503);
      res.end();
    } else if (flags & (F_EXPECT_CONTINUE | F_EXPECT_OTHER)) {
      handled = true;
      if (flags & F_EXPECT_CONTINUE) {
        res._expect_continue = true;
        if (server.listenerCount('checkContinue') > 0) {
          server.emit('checkContinue', req, res);
        } else {
          res.writeContinue();
          server.emit('request', req, res);
        }
      } else if (server.listenerCount('checkExpectation') > 0) {
        server.emit('checkExpectation', req, res);
      } else {
        res.writeHead(417);
        res.end();
      }
    }
  }
  if (!handled) server.emit('request', req, res);
  deliverBody(req, flags, body);
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
  socket.removeListener('close', onResponseSocketClose);
  socket.removeListener('drain', socketOnDrain);
}

function upgrade(server, socket, req, flags, head) {
  detachHttp(socket);
  // Responses to earlier pipelined requests still finish through the state, as in node.
  socket.readableFlowing = null;
  // llhttp completes an upgrade request (no body) before node emits the event.
  if (!req.complete) {
    req.complete = true;
    req.push(null);
  }
  emitUpgrade(server, (flags & F_CONNECT) !== 0 ? 'connect' : 'upgrade', req, socket,
    head === undefined ? EMPTY : head);
}

function emitUpgrade(server, event, req, stream, head) {
  // shouldUpgradeCallback may say yes with nobody listening: node destroys the socket.
  if (server.listenerCount(event) > 0) {
    server.emit(event, req, stream, head);
  } else {
    req.socket.destroy();
  }
}

/** node's socketOnEnd while an upgrade's body is read: the parser finishes without error. */
function upgradeSocketOnEnd() {
  if (this[kUpgradeReq] != null && !this.server.httpAllowHalfOpen) this.end();
}

/**
 * Node 26, an Upgrade request whose body went through `req` (onParserExecuteCommon): once the
 * read that brought the head is parsed, 'upgrade' is emitted with the socket and what followed
 * the body when the body came whole (`head`), else with an UpgradeStream and an empty head,
 * and the protocol's bytes reach that stream once the body has ended.
 */
function onUpgrade(id, seq, head) {
  const socket = sockets.get(id);
  const req = socket?.[kUpgradeReq];
  if (req == null || req[kSeq] !== seq) return;
  const stream = socket[kUpgradeStream];
  if (head === undefined) {
    socket.on('end', upgradeSocketOnEnd);
    const s = socket[kUpgradeStream] = new UpgradeStream(socket, req);
    emitUpgrade(socket.server, 'upgrade', req, s, EMPTY);
    return;
  }
  socket[kUpgradeReq] = null;
  if (stream === undefined) {
    upgrade(socket.server, socket, req, 0, head);
  } else {
    socket.removeListener('end', upgradeSocketOnEnd);
    detachHttp(socket);
    stream.requestBodyCompleted(head);
  }
}

function assignSocket(res, socket) {
  socket._httpMessage = res;
  res.socket = socket;
  res.emit('socket', socket);
  if (endedNatively(res) && onlyCallbacks(res.outputData)) {
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
    if (typeof cb === 'function') process.nextTick(cb);
  }
  if (res.finished) res._finish();
}

function detachSocket(res, socket) {
  socket._httpMessage = null;
  res.socket = null;
}

function resOnFinish() {
  const res = this;
  const req = res.req;
  const socket = req.socket;
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
  clearIncoming(req);
  process.nextTick(emitCloseNT, res);
  if (!endedNatively(res)) {
    // Written through the socket (node's own path): tell the addon the response is over.
    binding.finish(socket[kId], res[kSeq], !!res._last);
  }
  if (!owner) return;
  if (res._last) {
    socket.destroySoon();
  } else {
    const next = state.shiftOutgoing();
    if (next !== null) assignSocket(next, socket);
  }
}

/** node's clearIncoming: the parser lets go of a request once it has been read. */
function clearIncoming(req) {
  req = req || this;
  const socket = req.socket;
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

function onBody(id, seq, chunk) {
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

function onBodyEnd(id, seq, trailers) {
  const socket = sockets.get(id);
  const req = socket?.[kBodyReq];
  if (req == null || req[kSeq] !== seq) return;
  socket[kBodyReq] = null;
  req.complete = true;
  if (trailers !== undefined) setTrailerBlock(req, trailers);
  req.push(null);
}

function onDrain(id) {
  const socket = sockets.get(id);
  if (socket === undefined) return;
  // Releasing the held write callbacks lets the Writable emit 'drain' itself, when (and
  // only when) a write() returned false, as net.Socket does.
  socket._onDrain();
}

/** node's updateOutgoingData, as a shared method of the response. */
function onPendingData(delta) {
  const socket = this.req.socket;
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

function onClose(id, errno) {
  const socket = sockets.get(id);
  if (socket !== undefined) socket._onClose(errno);
}

/** net's onconnection at maxConnections: the connection is closed and 'drop' says who. */
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

/** A connection JS had no socket for failed: node's socket existed since the accept. */
function onReset(sid, id, errno) {
  const server = servers[sid];
  if (server !== undefined) socketFor(server, id)._onClose(errno);
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
  const body = this[kBodyReq];
  if (body != null && !body.complete && !body.destroyed) body.destroy(errors.connReset('aborted'));
}

/** node's onServerResponseClose: the socket's current response closes with it. */
function onResponseSocketClose() {
  const res = this._httpMessage;
  if (res) emitCloseNT(res);
}

function onTimeout(id, sid) {
  let socket = sockets.get(id);
  if (socket === undefined) {
    // Only the server listens for 'timeout': it gets a socket object to look at.
    const server = servers[sid];
    if (server === undefined) return;
    socket = socketFor(server, id);
  }
  socket.emit('timeout');
}

function socketOnTimeout() {
  const req = this[kState]?.firstIncoming ?? this[kBodyReq];
  const reqTimeout = req && !req.complete && req.emit('timeout', this);
  const res = this._httpMessage;
  const resTimeout = res && res.emit('timeout', this);
  const serverTimeout = this.server.emit('timeout', this);
  if (!reqTimeout && !resTimeout && !serverTimeout) this.destroy();
}

function onClientError(sid, id, code, reason, rawPacket, bytesParsed) {
  const server = servers[sid];
  if (server === undefined) return;
  const socket = socketFor(server, id);
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

function onData(id, chunk) {
  const socket = sockets.get(id);
  if (socket === undefined) return;
  if (socket[kMode] === MODE_HTTP) {
    const asked = socket[kAsking];
    if (asked !== undefined) {
      // The upgrade shouldUpgradeCallback threw on: its connection's next bytes upgrade it,
      // as node's parser (left on that request) hands them to its upgrade path.
      socket[kAsking] = undefined;
      upgrade(socket.server, socket, asked, 0, chunk);
      return;
    }
    // Bytes the parser consumed, for the app's own 'data' listeners.
    socket.emit('data', chunk);
  } else if (!socket.push(chunk)) {
    socket._pauseNative();
  }
}

function onEnd(id) {
  const socket = sockets.get(id);
  if (socket !== undefined) {
    // As net.Socket's onStreamRead at EOF: read(0) emits 'end' even when nobody reads.
    socket.push(null);
    socket.read(0);
  }
}

function onShutdown(id) {
  const socket = sockets.get(id);
  if (socket !== undefined) socket._onShutdown();
}

/** fast-http panicked serving `sid` (it closed what the panic concerned): a JS error. */
function onInternalError(sid, message) {
  const err = new Error(message);
  err.code = 'ERR_FAST_HTTP_INTERNAL';
  const server = servers[sid];
  if (server !== undefined) server.emit('error', err);
  else process.nextTick(throwError, err);
}

function throwError(err) {
  throw err;
}

function onServerDrained(sid) {
  const server = servers[sid];
  if (server !== undefined) server._onDrained();
}

init({
  onRequest, onBody, onBodyEnd, onDrain, onClose, onReset, onTimeout, onClientError, onConnection,
  onDrop,
  onData, onEnd, onServerDrained, onShutdown, onInternalError, onUpgrade,
});

module.exports = { socketFor, onConnection, onDrop };
