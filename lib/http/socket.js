'use strict';
// The socket object handlers see as req.socket / res.socket (and, after 'upgrade' or
// 'connect', the raw byte stream): a Duplex whose prototype chain includes net.Socket's, so
// `instanceof net.Socket` holds, with the net.Socket surface apps use backed by the native
// connection. In HTTP mode the addon parses the bytes; in raw mode they arrive as 'data'.
const { clearTimeout, setImmediate } = require('../internal/scheduling');
const net = require('node:net');
const { Duplex, Readable } = require('node:stream');
const { defineLazyGetters, materialize, kLazy } = require('../internal/lazy-duplex');
const openHandles = require('./open-handles');
const { WritingSocket, coalesceWrites, sendHeldWrites } = require('./socket-write');
const { binding, sockets, defaults } = require('../internal/native');
const { NO_RESPONSE } = require('../internal/native').constants;
const errors = require('../internal/errors');
const {
  kId, kMode, kAddress, kClosed, kState, kReadPaused, kTapping, kParser,
  kIncoming, kConnectionGone,
} = require('../internal/symbols');
const { HTTPParser } = require('_http_common');

const kOnTimeout = HTTPParser.kOnTimeout | 0;

// APM agents and test spies replace methods on net.Socket.prototype; node:http's sockets then
// run the replacement, which usually calls node's own method on the socket. The facade's
// methods below run theirs only while net.Socket.prototype still has node's method (one
// comparison); otherwise they run what is there, and node's method, called by it on this
// socket, finds a handle that forwards to the connection (`_handle`, only for that call)
// and what it could not forward is carried over afterwards (patchedSetTimeout, syncPause).
const NetSocketProto = net.Socket.prototype;
const nodeSetTimeout = NetSocketProto.setTimeout;
const nodeSetNoDelay = NetSocketProto.setNoDelay;
const nodeSetKeepAlive = NetSocketProto.setKeepAlive;
const nodeAddress = NetSocketProto.address;
const nodeRef = NetSocketProto.ref;
const nodeUnref = NetSocketProto.unref;
const nodePause = NetSocketProto.pause;
const nodeResume = NetSocketProto.resume;
/** Set on a socket while a patched method runs: `_handle` is then a forwarding one. */
const kPatchedCall = Symbol('fast-http.patchedCall');
/** Set while the facade itself resumes (replaying node's 'data' listener): no patch runs. */
const kQuiet = Symbol('fast-http.quiet');
let nodeTimeoutSymbol;

const MODE_HTTP = 0;
const MODE_RAW = 1;

/** One options object per high-water mark, shared by the sockets until their states exist. */
const optionsByHwm = new Map();
function streamOptions(highWaterMark) {
  let o = optionsByHwm.get(highWaterMark);
  if (o === undefined) {
    o = Object.freeze({ allowHalfOpen: true, decodeStrings: false, emitClose: false, highWaterMark });
    optionsByHwm.set(highWaterMark, o);
  }
  return o;
}

// Named as node's: `socket.constructor.name`, and the `Socket.<anonymous>` frames of its
// listeners in a stack.
const FastSocket = class Socket extends WritingSocket {
  constructor(server, id) {
    super(streamOptions(server?.highWaterMark));
    this[kId] = id;
    this[kMode] = MODE_HTTP;
    this[kClosed] = false;
    this[kState] = null;
    this.server = server;
    this._server = server;
    this._httpMessage = null;
    this[kParser] = undefined;
    this[kIncoming] = null;
    this._paused = false;
    // What node's socket says before its first setTimeout().
    this.timeout = undefined;
    this._bytesRead = 0;
    this._bytesWritten = 0;
    sockets.set(id, this);
    openHandles.socketOpened(this);
    binding.watch(id, true);
    this.on('end', onReadableStreamEnd);
    this.on('newListener', onSocketNewListener);
    // node:http calls socket.setTimeout(server.timeout) on each new connection; the addon
    // has armed that timer already, so only a patch of net.Socket.prototype.setTimeout
    // (which must see the call) makes it run.
    const serverTimeout = server?.timeout;
    if (serverTimeout) {
      if (NetSocketProto.setTimeout === nodeSetTimeout) this.timeout = serverTimeout;
      else this.setTimeout(serverTimeout);
    }
  }

  _onStreamStates() {
    // node's http server listens for the socket's 'data' from the start (its parser is fed
    // from it); registered with the states because Readable#on('data') starts the flow. An
    // app that listens too gets the raw bytes.
    // node:http's listener resumed the socket when it connected, not now: no patch sees it.
    if (this[kMode] === MODE_HTTP) {
      this[kQuiet] = true;
      try {
        Readable.prototype.on.call(this, 'data', socketOnData);
      } finally {
        this[kQuiet] = false;
      }
    }
  }

  /** What node code and tests find as `socket.parser`, made on first look. */
  get parser() {
    let p = this[kParser];
    if (p === undefined) p = this[kParser] = this[kMode] === MODE_HTTP ? new Parser(this) : null;
    return p;
  }

  set parser(value) {
    this[kParser] = value;
  }

  _read() {
    if (this[kMode] === MODE_RAW && this[kReadPaused]) {
      this[kReadPaused] = false;
      binding.pause(this[kId], false);
    }
  }

  /** Stops the addon reading (backpressure from a full readable buffer). */
  _pauseNative() {
    if (!this[kClosed] && !this[kReadPaused]) {
      this[kReadPaused] = true;
      binding.pause(this[kId], true);
    }
  }

  _destroy(err, cb) {
    // Writes held for the end of the task were, for net.Socket, in the kernel already.
    sendHeldWrites(this);
    // The id stays in `sockets` until the addon reports the close: bytes it read before
    // still reach 'data' listeners, as every listener of net.Socket's emit gets them.
    if (!this[kClosed]) {
      this[kClosed] = true;
      this._saveStats();
      binding.destroy(this[kId], false, this[kState]?.assignedSeq ?? NO_RESPONSE);
    }
    // net.Socket's _destroy counts the server's connection out at once: a closing server's
    // 'close' comes a tick later (before this socket's own 'close', in the close phase).
    this.server?.[kConnectionGone]?.();
    this._releaseWrites(err);
    cb(err);
    closeAtClosePhase(this, !!err);
  }

  _saveStats() {
    const s = binding.ioStats(this[kId]);
    if (s !== undefined) {
      this._bytesRead = s[0];
      // Like net.Socket, count what was handed over, written to the kernel yet or not.
      this._bytesWritten = s[1] + s[2];
    }
  }

  /** The addon closed the connection (peer reset, end, or a native decision). */
  _onClose(errno) {
    this[kClosed] = true;
    sockets.delete(this[kId]);
    // 'finish', then autoDestroy (both sides ended) destroys it, as net.Socket's order.
    if (errno >= 0 && this.readableEnded && this._finalOnClose()) return;
    if (!this.destroyed) {
      const err = errno < 0 ? errors.readError(errno) : null;
      if (err) this._hadError = true;
      this.destroy(err);
    }
  }

  /** In HTTP mode, pushed bytes go to the parser, as a net.Socket's 'data' would. */
  push(chunk, encoding) {
    if (this[kMode] === MODE_HTTP && chunk != null) {
      if (!this[kClosed]) {
        binding.inject(this[kId], typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk);
      }
      return true;
    }
    return Duplex.prototype.push.call(this, chunk, encoding);
  }

  /**
   * Readable's pause first: on a socket without stream states it makes them, and the 'data'
   * listener node's http server keeps (replayed then) would resume it again. While the
   * socket speaks HTTP its bytes go to the parser, which stops; an upgraded socket keeps
   * reading, as net.Socket does, until its buffer passes the high-water mark (push() turns
   * false), so it still notices the peer's FIN.
   */
  pause() {
    const patched = NetSocketProto.pause;
    if (patched !== nodePause && !this[kQuiet]) return syncPause(this, callPatched(this, patched, arguments));
    Duplex.prototype.pause.call(this);
    if (this[kMode] === MODE_HTTP && !this[kClosed] && !this[kReadPaused]) {
      this[kReadPaused] = true;
      binding.pause(this[kId], true);
    }
    return this;
  }

  resume() {
    const patched = NetSocketProto.resume;
    if (patched !== nodeResume && !this[kQuiet]) return syncPause(this, callPatched(this, patched, arguments));
    // IncomingMessage#_read resumes the socket on every read: cross only when paused.
    if (!this[kClosed] && this[kReadPaused]) {
      this[kReadPaused] = false;
      binding.pause(this[kId], false);
    }
    // Without states nothing paused it: it flows once they exist (_onStreamStates).
    if (this[kLazy]) return this;
    return Duplex.prototype.resume.call(this);
  }

  setEncoding(enc) {
    if (this[kMode] === MODE_HTTP) throw errors.ERR_HTTP_SOCKET_ENCODING();
    return Duplex.prototype.setEncoding.call(this, enc);
  }

  setTimeout(msecs, callback) {
    const patched = NetSocketProto.setTimeout;
    if (patched !== nodeSetTimeout) return patchedSetTimeout(this, patched, arguments);
    this.timeout = msecs;
    msecs = Math.max(0, Number(msecs) || 0);
    if (!this[kClosed]) binding.setTimeout(this[kId], msecs);
    if (callback !== undefined) {
      if (typeof callback !== 'function') {
        throw errors.ERR_INVALID_ARG_TYPE('callback', 'of type function', callback);
      }
      if (msecs === 0) this.removeListener('timeout', callback);
      else this.once('timeout', callback);
    }
    return this;
  }

  setNoDelay(enable) {
    const patched = NetSocketProto.setNoDelay;
    if (patched !== nodeSetNoDelay) return callPatched(this, patched, arguments);
    if (!this[kClosed]) binding.setNoDelay(this[kId], enable === undefined ? true : !!enable);
    return this;
  }

  setKeepAlive(enable, initialDelay) {
    const patched = NetSocketProto.setKeepAlive;
    if (patched !== nodeSetKeepAlive) return callPatched(this, patched, arguments);
    if (!this[kClosed]) {
      binding.setKeepAlive(this[kId], !!enable, Math.floor((Number(initialDelay) || 0) / 1000));
    }
    return this;
  }

  ref() {
    const patched = NetSocketProto.ref;
    if (patched !== nodeRef) return callPatched(this, patched, arguments);
    if (!this[kClosed]) binding.connRef(this[kId], true);
    openHandles.socketRef(this, true);
    return this;
  }

  unref() {
    const patched = NetSocketProto.unref;
    if (patched !== nodeUnref) return callPatched(this, patched, arguments);
    if (!this[kClosed]) binding.connRef(this[kId], false);
    openHandles.socketRef(this, false);
    return this;
  }

  resetAndDestroy() {
    if (!this[kClosed]) {
      this[kClosed] = true;
      this._saveStats();
      binding.destroy(this[kId], true, NO_RESPONSE);
    }
    return this.destroy(errors.connReset('socket hang up'));
  }

  _unrefTimer() {}

  _info() {
    let a = this[kAddress];
    if (a === null) {
      a = this[kClosed] ? undefined : binding.info(this[kId]);
      this[kAddress] = a === undefined ? [] : a;
      a = this[kAddress];
    }
    return a;
  }

  address() {
    const patched = NetSocketProto.address;
    if (patched !== nodeAddress) return callPatched(this, patched, arguments);
    const a = this._info();
    if (a[0] === undefined || this[kClosed]) return {};
    return { address: a[0], family: a[2], port: a[1] };
  }

  get remoteAddress() { return this._info()[3]; }
  get remotePort() { return this._info()[4]; }
  get remoteFamily() { return this._info()[5]; }
  // node keeps the peer's address once read (`_peername`), its own only while the handle
  // lives (`_getsockname()` answers {} without one).
  get localAddress() { return this[kClosed] ? undefined : this._info()[0]; }
  get localPort() { return this[kClosed] ? undefined : this._info()[1]; }
  get localFamily() { return this[kClosed] ? undefined : this._info()[2]; }

  get bytesRead() {
    if (!this[kClosed]) this._saveStats();
    return this._bytesRead;
  }

  get bytesWritten() {
    if (!this[kClosed]) this._saveStats();
    // Like net.Socket, bytes still buffered in the stream count as written.
    return this._bytesWritten + this.writableLength;
  }

  // node: `this._handle ? this.writableLength : undefined`, and pending `!this._handle`.
  get bufferSize() {
    return this[kClosed] ? undefined : this.writableLength;
  }

  get pending() {
    return this[kClosed];
  }

  get readyState() {
    if (this.readable && this.writable) return 'open';
    if (this.readable && !this.writable) return 'readOnly';
    if (!this.readable && this.writable) return 'writeOnly';
    return 'closed';
  }

  // No libuv stream handle: code that would take one over (tls.TLSSocket, http2) wraps the
  // socket as a plain Duplex instead. node's own net.Socket methods, run by a patch of
  // net.Socket.prototype, find one that forwards to the connection.
  get _handle() {
    return this[kPatchedCall] === true ? new ForwardingHandle(this) : null;
  }
};

// Fields most sockets never change live on the prototype until they do (an idle keep-alive
// connection's socket is kept for as long as the connection).
Object.assign(FastSocket.prototype, {
  [kAddress]: null,
  [kReadPaused]: false,
  [kTapping]: false,
  [kPatchedCall]: false,
  [kQuiet]: false,
  connecting: false,
  _hadError: false,
});

// Every method net.Socket code paths need is defined above; the stream getters answer
// without states until something needs them.
defineLazyGetters(FastSocket.prototype, streamOptions(undefined), true);

/**
 * What node code and tests find as `socket.parser` while the connection speaks HTTP: the
 * request being received (`incoming`) and the hooks node calls when it lets a parser go.
 */
class Parser {
  constructor(socket) {
    this.socket = socket;
    this.outgoing = null;
    this.maxHeaderPairs = defaults.maxHeaderPairs;
    this._consumed = false;
    this._headers = [];
    this._url = '';
    this.joinDuplicateHeaders = socket.server?.joinDuplicateHeaders ?? null;
    this[kOnTimeout] = parserOnTimeout;
  }

  /** The request being received; the socket keeps it, so no parser is needed to track it. */
  get incoming() {
    return this.socket === null ? null : this.socket[kIncoming];
  }

  set incoming(req) {
    if (this.socket !== null) this.socket[kIncoming] = req;
  }

  /** node's cleanParser, as freeParser does when the connection closes. */
  free() {
    this._headers = [];
    this._url = '';
    if (this.socket !== null) this.socket[kIncoming] = null;
    this.socket = null;
    this.outgoing = null;
    this[kOnTimeout] = null;
  }

  close() {}
  remove() {}
  finish() {}
  pause() {}
  resume() {}
}

/**
 * What node's net.Socket methods use of a TCP handle, forwarded to the connection: they run
 * on the facade only when a patch of net.Socket.prototype calls them (see callPatched).
 */
class ForwardingHandle {
  constructor(socket) {
    this.socket = socket;
    this.reading = !socket[kReadPaused];
  }

  setNoDelay(enable) {
    const s = this.socket;
    if (!s[kClosed]) binding.setNoDelay(s[kId], !!enable);
    return 0;
  }

  setKeepAlive(enable, initialDelaySecs) {
    const s = this.socket;
    if (!s[kClosed]) binding.setKeepAlive(s[kId], !!enable, Math.max(0, initialDelaySecs | 0));
    return 0;
  }

  ref() {
    const s = this.socket;
    if (!s[kClosed]) binding.connRef(s[kId], true);
    openHandles.socketRef(s, true);
  }

  unref() {
    const s = this.socket;
    if (!s[kClosed]) binding.connRef(s[kId], false);
    openHandles.socketRef(s, false);
  }

  getsockname(out) {
    const a = this.socket._info();
    if (a[0] === undefined) return -9; // EBADF, as for a closed handle
    out.address = a[0];
    out.family = a[2];
    out.port = a[1];
    return 0;
  }

  getpeername(out) {
    const a = this.socket._info();
    if (a[3] === undefined) return -9;
    out.address = a[3];
    out.family = a[5];
    out.port = a[4];
    return 0;
  }
}

/** Runs a replacement of a net.Socket.prototype method on the socket, as node:http would. */
function callPatched(socket, fn, args) {
  const outer = socket[kPatchedCall];
  socket[kPatchedCall] = true;
  try {
    return Reflect.apply(fn, socket, args);
  } finally {
    socket[kPatchedCall] = outer;
  }
}

/** The symbol node's setTimeout keeps a socket's JS timer under. */
function timeoutSymbol() {
  if (nodeTimeoutSymbol === undefined) {
    const probe = new net.Socket();
    nodeTimeoutSymbol = Object.getOwnPropertySymbols(probe)
      .find((s) => s.description === 'timeout') ?? null;
    probe.destroy();
  }
  return nodeTimeoutSymbol;
}

/**
 * A patched setTimeout: node's, if the patch called it, armed a JS timer that nothing
 * refreshes on this socket's traffic; the connection's own idle timer takes its place.
 */
function patchedSetTimeout(socket, fn, args) {
  const before = socket.timeout;
  const result = callPatched(socket, fn, args);
  const k = timeoutSymbol();
  const timer = k === null ? null : socket[k];
  if (timer != null) {
    clearTimeout(timer);
    socket[k] = null;
  }
  if ((timer != null || socket.timeout !== before) && !socket[kClosed]) {
    binding.setTimeout(socket[kId], Math.max(0, Number(socket.timeout) || 0));
  }
  return result;
}

/**
 * After a patched pause / resume: node's paused or resumed the stream only; while the
 * socket speaks HTTP the addon's reading follows it (as the facade's own pause does).
 */
function syncPause(socket, result) {
  if (socket[kMode] === MODE_HTTP && !socket[kClosed] && !socket[kLazy]) {
    const paused = Boolean(socket.isPaused());
    if (paused !== socket[kReadPaused]) {
      socket[kReadPaused] = paused;
      binding.pause(socket[kId], paused);
    }
  }
  return result;
}

function socketOnData() {}

function parserOnTimeout() {}

function onSocketNewListener(event) {
  if (event === 'data' && this[kMode] === MODE_HTTP && !this[kTapping] &&
      this.listenerCount('data') > 0) {
    this[kTapping] = true;
    if (!this[kClosed]) binding.tap(this[kId], true);
  }
}

/**
 * net.Socket's: a socket that may not stay half-open stops writing after the peer's FIN.
 * With node's socketOnEnd (httpAllowHalfOpen false; a true value sends the server to node's
 * own): the peer's FIN on a connection between messages ends the socket's writable side,
 * so its 'finish' comes before 'close'. With a request or response in progress the addon's
 * handling stands (what node's abortIncoming and end() lead to, the finish-order fuzz
 * compares). One listener for both: a second costs each connection ~80 B (README).
 */
function onReadableStreamEnd() {
  if (!this.allowHalfOpen) {
    this.end();
    return;
  }
  const state = this[kState];
  if (this[kMode] === MODE_HTTP && state !== null && !state.endFailed && state.first === null &&
      state.outgoing === null && this._httpMessage === null && this.writable) {
    this.end();
  }
}

// net.Socket emits 'close' from its handle's close callback: in the loop's close phase,
// after the setImmediate callbacks of the iteration that destroyed it, the latest closed
// first. Each destroyed socket waits for a close callback of its own from the addon.
const closing = new Map();
let lastCloseToken = 0;

function closeAtClosePhase(socket, hadError) {
  lastCloseToken = lastCloseToken >= 0x3fffffff ? 1 : lastCloseToken + 1;
  if (binding.closePhase(hadError ? -lastCloseToken : lastCloseToken)) {
    closing.set(lastCloseToken, socket);
  } else {
    // No loop to close in (the addon is being torn down): 'close' still comes.
    setImmediate(emitClose, socket, hadError);
  }
}

function emitClose(socket, hadError) {
  // node's TCP handle is listed until its close callback, where 'close' is emitted.
  openHandles.socketClosed(socket);
  socket.emit('close', hadError);
}

function onClosePhase(token) {
  const key = token < 0 ? -token : token;
  const socket = closing.get(key);
  if (socket === undefined) return;
  closing.delete(key);
  emitClose(socket, token < 0);
}

/** Switches a socket to raw mode (after 'upgrade' / 'connect'). */
function toRaw(socket) {
  materialize(socket);
  socket[kMode] = MODE_RAW;
  coalesceWrites(socket);
  socket.parser = null;
  socket[kIncoming] = null;
  socket.removeListener('data', socketOnData);
  socket.removeListener('newListener', onSocketNewListener);
}

module.exports = {
  FastSocket, toRaw, onSocketNewListener, onClosePhase, MODE_HTTP, MODE_RAW, kLazy,
};
