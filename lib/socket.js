'use strict';
// The socket object handlers see as req.socket / res.socket (and, after 'upgrade' or
// 'connect', the raw byte stream): a Duplex whose prototype chain includes net.Socket's, so
// `instanceof net.Socket` holds, with the net.Socket surface apps use backed by the native
// connection. In HTTP mode the addon parses the bytes; in raw mode they arrive as 'data'.
const { Duplex, Readable } = require('node:stream');
const { LazyDuplex, defineLazyGetters, materialize, kLazy } = require('./lazy-duplex');
const { binding, sockets } = require('./native');
const errors = require('./errors');
const {
  kId, kMode, kPendingWrites, kAddress, kClosed, kState, kReadPaused, kTapping, kParser,
  kIncoming,
} = require('./symbols');
const { HTTPParser } = require('_http_common');
const { isUint8Array } = require('node:util/types');

/** Writes up to this size may be coalesced with others of the same task. */
const COALESCE_MAX_WRITE = 16 * 1024;
const kRawWrites = Symbol('fast-http.rawWrites');
const kFinalCallback = Symbol('fast-http.finalCallback');

const kOnTimeout = HTTPParser.kOnTimeout | 0;

const MODE_HTTP = 0;
const MODE_RAW = 1;

function isLatin1(encoding) {
  return encoding === 'latin1' || encoding === 'binary' || encoding === 'ascii';
}

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

class FastSocket extends LazyDuplex {
  constructor(server, id) {
    super(streamOptions(server?.highWaterMark));
    this[kId] = id;
    this[kMode] = MODE_HTTP;
    this[kClosed] = false;
    this[kRawWrites] = null;
    this[kState] = null;
    this.server = server;
    this._server = server;
    this._httpMessage = null;
    this[kParser] = undefined;
    this[kIncoming] = null;
    this._paused = false;
    this.timeout = 0;
    this._bytesRead = 0;
    this._bytesWritten = 0;
    sockets.set(id, this);
    binding.watch(id, true);
    this.on('end', onReadableStreamEnd);
    this.on('newListener', onSocketNewListener);
  }

  _onStreamStates() {
    // node's http server listens for the socket's 'data' from the start (its parser is fed
    // from it); registered with the states because Readable#on('data') starts the flow. An
    // app that listens too gets the raw bytes.
    if (this[kMode] === MODE_HTTP) Readable.prototype.on.call(this, 'data', socketOnData);
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

  _write(chunk, encoding, cb) {
    const w = this[kRawWrites];
    if (w === null) return this._send(chunk, encoding, cb, false, false);
    const coalesce = w.next;
    w.next = false;
    this._send(chunk, encoding, cb, false, coalesce);
  }

  _writev(chunks, cb) {
    // A corked batch goes out with one write: hold all but the last chunk. The batch as a
    // whole may wait for the end of the task when each of its writes could (ws sends every
    // frame as a corked header + payload pair).
    const w = this[kRawWrites];
    const coalesce = w !== null && w.batch;
    if (w !== null) w.batch = true;
    const last = chunks.length - 1;
    for (let i = 0; i < last; i++) {
      this._send(chunks[i].chunk, chunks[i].encoding, null, true, false);
    }
    this._send(chunks[last].chunk, chunks[last].encoding, cb, false, coalesce);
  }

  /**
   * Write coalescing on upgraded sockets (after Bun's): the first write of a JS task goes
   * to the kernel at once; later callback-less Buffer writes of at most 16 KB in the same
   * task wait in the addon and go out together once the task's microtasks have run. Any
   * other write (callback, string, larger), end() or destroy() sends what is held first,
   * so order, write() results, callbacks, 'finish' and bytesWritten do not change.
   */
  write(chunk, encoding, cb) {
    const w = this[kRawWrites];
    if (w !== null) {
      const small = typeof encoding !== 'function' && typeof cb !== 'function' &&
        isUint8Array(chunk) && chunk.byteLength <= COALESCE_MAX_WRITE;
      // Upgraded sockets always have their states (toRaw): read them directly, not through
      // the getters that answer for sockets without states.
      const ws = this._writableState;
      if (small && !this[kClosed] && !w.refused && ws.length === 0 && ws.corked === 0 &&
          !ws.ending && !ws.destroyed) {
        // A callback-less write to an idle Writable completes at once and leaves nothing
        // buffered, so skipping the Writable bookkeeping changes nothing visible. The first
        // one of a task is sent now, the next ones are held for the end of the task.
        const hold = w.inTask;
        if (hold) {
          w.held = true;
        } else {
          this._startTask();
        }
        const hwm = ws.highWaterMark;
        const left = binding.raw(this[kId], -1, chunk, false, hwm, hold);
        if (left < hwm) return true;
        // The batch went out and the kernel refused part of it: backpressure, and 'drain'
        // once it is taken (onDrain).
        w.refused = true;
        return false;
      }
      if (ws.corked !== 0) w.batch &&= small;
      else w.next = small;
    }
    return Duplex.prototype.write.call(this, chunk, encoding, cb);
  }

  /**
   * Hands bytes to the addon; the callback waits while its queue is past highWaterMark.
   * `hold`: part of a batch whose last write follows; `coalesce`: may wait for the task end.
   */
  _send(chunk, encoding, cb, hold, coalesce) {
    let latin1 = false;
    if (typeof chunk === 'string') {
      if (isLatin1(encoding)) latin1 = true;
      else if (encoding && encoding !== 'utf8' && encoding !== 'utf-8' && encoding !== 'buffer') {
        chunk = Buffer.from(chunk, encoding);
      }
    }
    const hwm = this.writableHighWaterMark;
    let defer = hold;
    const w = this[kRawWrites];
    if (w !== null) {
      defer = hold || (coalesce && w.inTask);
      if (defer) w.held = true;
      if (!w.inTask) this._startTask();
    }
    // Held bytes have not been offered to the kernel yet, so they are no backpressure.
    const queued = binding.raw(this[kId], -1, chunk, latin1, defer ? Infinity : hwm, defer);
    if (cb === null) return;
    if (!defer && queued >= hwm) {
      const held = this[kPendingWrites];
      this[kPendingWrites] = held === null ? cb : [].concat(held, cb);
    } else {
      cb();
    }
  }

  /** net.Socket ends with a shutdown request: 'finish' once FIN follows every queued byte. */
  _final(cb) {
    if (this[kClosed]) {
      cb();
      return;
    }
    this[kFinalCallback] = cb;
    binding.shutdown(this[kId]);
  }

  /** FIN went out after every queued byte (the shutdown request completed). */
  _onShutdown() {
    const cb = this[kFinalCallback];
    if (cb !== null) {
      this[kFinalCallback] = null;
      cb();
    }
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
    // The id stays in `sockets` until the addon reports the close: bytes it read before
    // still reach 'data' listeners, as every listener of net.Socket's emit gets them.
    if (!this[kClosed]) {
      this[kClosed] = true;
      this._saveStats();
      binding.destroy(this[kId], false);
    }
    this._releaseWrites(err);
    cb(err);
    // net.Socket emits 'close' from the handle's close callback, a loop phase later.
    setImmediate(emitCloseNT, this, !!err);
  }

  _saveStats() {
    const s = binding.ioStats(this[kId]);
    if (s !== undefined) {
      this._bytesRead = s[0];
      // Like net.Socket, count what was handed over, written to the kernel yet or not.
      this._bytesWritten = s[1] + s[2];
    }
  }

  _releaseWrites(err) {
    const held = this[kPendingWrites];
    if (held === null) return;
    this[kPendingWrites] = null;
    if (typeof held === 'function') held(err);
    else for (const cb of held) cb(err);
  }

  /** Marks the current JS task as one this socket wrote in; its end flushes held writes. */
  _startTask() {
    const w = this[kRawWrites];
    w.inTask = true;
    queueMicrotask(w.endTask);
  }

  /** The addon wrote everything queued: release held write callbacks. */
  _onDrain() {
    this._releaseWrites();
    const w = this[kRawWrites];
    if (w !== null && w.refused) {
      w.refused = false;
      this.emit('drain');
    }
  }

  /** The addon closed the connection (peer reset, end, or a native decision). */
  _onClose(errno) {
    this[kClosed] = true;
    sockets.delete(this[kId]);
    if (!this.destroyed) {
      const err = errno < 0 ? errors.connReset(`read ${errnoName(errno)}`) : null;
      if (err) err.errno = errno;
      if (err) err.syscall = 'read';
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

  pause() {
    if (!this[kClosed] && !this[kReadPaused]) {
      this[kReadPaused] = true;
      binding.pause(this[kId], true);
    }
    return Duplex.prototype.pause.call(this);
  }

  resume() {
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
    if (!this[kClosed]) binding.setNoDelay(this[kId], enable === undefined ? true : !!enable);
    return this;
  }

  setKeepAlive(enable, initialDelay) {
    if (!this[kClosed]) {
      binding.setKeepAlive(this[kId], !!enable, Math.floor((Number(initialDelay) || 0) / 1000));
    }
    return this;
  }

  ref() {
    if (!this[kClosed]) binding.connRef(this[kId], true);
    return this;
  }

  unref() {
    if (!this[kClosed]) binding.connRef(this[kId], false);
    return this;
  }

  resetAndDestroy() {
    if (!this[kClosed]) {
      this[kClosed] = true;
      this._saveStats();
      binding.destroy(this[kId], true);
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
    const a = this._info();
    if (a[3] === undefined) return {};
    return { address: a[3], family: a[2], port: a[4] };
  }

  get remoteAddress() { return this._info()[0]; }
  get remotePort() { return this._info()[1]; }
  get remoteFamily() { return this._info()[2]; }
  get localAddress() { return this._info()[3]; }
  get localPort() { return this._info()[4]; }
  get localFamily() { return this._info()[2]; }

  get bytesRead() {
    if (!this[kClosed]) this._saveStats();
    return this._bytesRead;
  }

  get bytesWritten() {
    if (!this[kClosed]) this._saveStats();
    // Like net.Socket, bytes still buffered in the stream count as written.
    return this._bytesWritten + this.writableLength;
  }

  get bufferSize() {
    return this.writableLength;
  }

  get pending() {
    return false;
  }

  get readyState() {
    if (this.readable && this.writable) return 'open';
    if (this.readable && !this.writable) return 'readOnly';
    if (!this.readable && this.writable) return 'writeOnly';
    return 'closed';
  }

  // No libuv stream handle: code that would take one over (tls.TLSSocket, http2) wraps the
  // socket as a plain Duplex instead.
  get _handle() {
    return null;
  }
}

// Fields most sockets never change live on the prototype until they do (an idle keep-alive
// connection's socket is kept for as long as the connection).
Object.assign(FastSocket.prototype, {
  [kPendingWrites]: null,
  [kFinalCallback]: null,
  [kAddress]: null,
  [kReadPaused]: false,
  [kTapping]: false,
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
    this.maxHeaderPairs = 2000;
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

/** Write-coalescing state of an upgraded socket (see FastSocket#write). */
class RawWrites {
  constructor(socket) {
    this.socket = socket;
    /** The Writable's next _write may wait for the end of the task. */
    this.next = false;
    /** Every write of the corked batch being built may wait. */
    this.batch = true;
    /** This JS task has written: later writes of it are held. */
    this.inTask = false;
    /** Bytes are held in the addon until the end of the task. */
    this.held = false;
    /** The kernel refused part of a write: 'drain' is owed. */
    this.refused = false;
    this.endTask = endTask.bind(null, this);
  }
}

function endTask(w) {
  w.inTask = false;
  if (w.held && !w.socket[kClosed]) binding.flush(w.socket[kId]);
  w.held = false;
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

/** net.Socket's: a socket that may not stay half-open stops writing after the peer's FIN. */
function onReadableStreamEnd() {
  if (!this.allowHalfOpen) this.end();
}

function emitCloseNT(socket, hadError) {
  socket.emit('close', hadError);
}

function errnoName(errno) {
  try {
    return require('node:util').getSystemErrorName(errno);
  } catch {
    return 'ECONNRESET';
  }
}

/** Switches a socket to raw mode (after 'upgrade' / 'connect'). */
function toRaw(socket) {
  materialize(socket);
  socket[kMode] = MODE_RAW;
  socket[kRawWrites] = new RawWrites(socket);
  socket.parser = null;
  socket[kIncoming] = null;
  socket.removeListener('data', socketOnData);
  socket.removeListener('newListener', onSocketNewListener);
}

module.exports = { FastSocket, toRaw, MODE_HTTP, MODE_RAW, kLazy };
