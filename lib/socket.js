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
/** Buffers under this size are copied into one when sent together (the addon keeps larger
 * ones by reference; see src/binding/socket.rs PIN_MIN). */
const COALESCE_RUN_PIECE = 16 * 1024;
const kRawWrites = Symbol('fast-http.rawWrites');
const kFinalCallback = Symbol('fast-http.finalCallback');
const kBacklog = Symbol('fast-http.writeBacklog');

const kOnTimeout = HTTPParser.kOnTimeout | 0;

const MODE_HTTP = 0;
const MODE_RAW = 1;

function isLatin1(encoding) {
  return encoding === 'latin1' || encoding === 'binary' || encoding === 'ascii';
}

/** Encodings the addon writes strings in itself (UTF-8 or latin1). */
function isNative(encoding) {
  return encoding === undefined || encoding === 'utf8' || encoding === 'utf-8' ||
    encoding === 'buffer' || isLatin1(encoding);
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

  /**
   * Write coalescing on upgraded sockets (after Bun's): the first write of a JS task goes
   * to the kernel at once; a later callback-less Buffer write of at most 16 KB in the same
   * task waits (its Writable callback held), so the Writable keeps what follows in its own
   * buffer, and all of it goes out together once the task's microtasks have run. Held bytes
   * count in writableLength like any pending write; write() turns false past the high-water
   * mark and 'drain' follows, as on net.Socket.
   */
  write(chunk, encoding, cb) {
    const w = this[kRawWrites];
    if (w !== null) {
      const small = typeof encoding !== 'function' && typeof cb !== 'function' &&
        isUint8Array(chunk) && chunk.byteLength <= COALESCE_MAX_WRITE;
      if (this._writableState.corked !== 0) w.batch &&= small;
      else w.next = small;
    }
    return Duplex.prototype.write.call(this, chunk, encoding, cb);
  }

  _write(chunk, encoding, cb) {
    const w = this[kRawWrites];
    let defer = false;
    if (w !== null) {
      const coalesce = w.next;
      w.next = false;
      if (coalesce && w.inTask && !this[kClosed]) {
        w.hold([{ chunk, encoding }], cb);
        return;
      }
      defer = w.flushing;
      if (!w.inTask && !defer) this._startTask();
    }
    if (typeof chunk === 'string' && !isNative(encoding)) chunk = Buffer.from(chunk, encoding);
    const hwm = this.writableHighWaterMark;
    const queued = binding.raw(this[kId], chunk, isLatin1(encoding), hwm, defer);
    if (defer && queued < hwm) w.settling = cb;
    else this._settle(queued, hwm, cb);
  }

  _writev(chunks, cb) {
    // ws sends every frame as a corked header + payload pair: a batch of small Buffers waits
    // for the end of the task (with the frames that follow it in the same task).
    const w = this[kRawWrites];
    if (w !== null) {
      const coalesce = w.batch;
      w.batch = true;
      if (coalesce && !w.flushing && !this[kClosed]) {
        if (!w.inTask) this._startTask();
        w.hold(chunks, cb);
        return;
      }
      if (!w.inTask && !w.flushing) this._startTask();
    }
    this._sendChunks(chunks, 0, cb, w !== null && w.flushing);
  }

  /**
   * Hands chunks[from..] to the addon, which stops taking them once its queue passes the
   * high-water mark: the rest wait here, as references (node's Writable keeps an app's
   * backlog the same way), until the addon drains. `defer`: the end of the task flushes.
   */
  _sendChunks(chunks, from, cb, defer) {
    const hwm = this.writableHighWaterMark;
    const [next, queued] = pushChunks(this[kId], chunks, from, hwm, defer);
    if (queued < 0) {
      // The connection is gone: what was written is dropped, as with a destroyed net.Socket.
      cb();
    } else if (next < chunks.length) {
      this[kBacklog] = { chunks, next, cb };
    } else if (defer && queued < hwm) {
      this[kRawWrites].settling = cb;
    } else {
      this._settle(queued, hwm, cb);
    }
  }

  /** A write is complete when what the addon holds is under the high-water mark. */
  _settle(queued, hwm, cb) {
    if (queued < hwm) {
      cb();
      return;
    }
    const held = this[kPendingWrites];
    this[kPendingWrites] = held === null ? cb : [].concat(held, cb);
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
    // Writes held for the end of the task were, for net.Socket, in the kernel already.
    const w = this[kRawWrites];
    if (w !== null && !this[kClosed]) w.sendHeld();
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
    const backlog = this[kBacklog];
    if (backlog !== null) {
      this[kBacklog] = null;
      if (err !== undefined || this[kClosed]) {
        backlog.cb(err);
      } else {
        this._sendChunks(backlog.chunks, backlog.next, backlog.cb, false);
      }
    }
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

  /** The addon wrote what it held past the high-water mark: pending writes complete. */
  _onDrain() {
    this._releaseWrites();
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

  /**
   * Readable's pause first: on a socket without stream states it makes them, and the 'data'
   * listener node's http server keeps (replayed then) would resume it again. While the
   * socket speaks HTTP its bytes go to the parser, which stops; an upgraded socket keeps
   * reading, as net.Socket does, until its buffer passes the high-water mark (push() turns
   * false), so it still notices the peer's FIN.
   */
  pause() {
    Duplex.prototype.pause.call(this);
    if (this[kMode] === MODE_HTTP && !this[kClosed] && !this[kReadPaused]) {
      this[kReadPaused] = true;
      binding.pause(this[kId], true);
    }
    return this;
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
  [kBacklog]: null,
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
    /** This JS task has written: a later coalescible write waits for its end. */
    this.inTask = false;
    /** The write waiting for the end of the task: [chunk, encoding] pairs and its callback. */
    this.heldChunks = null;
    this.heldCb = null;
    /** The end of the task is sending: writes the Writable hands over join the flush. */
    this.flushing = false;
    /** The callback of a write that joined the flush, settled by its result. */
    this.settling = null;
    this.endTask = endTask.bind(null, this);
  }

  /** Holds a write (a chunk, or the Writable's [{ chunk, encoding }] list) until the end. */
  hold(chunks, cb) {
    this.heldChunks = chunks;
    this.heldCb = cb;
  }

  /** Hands the held write to the addon without writing; returns its callback. */
  take() {
    const chunks = this.heldChunks;
    const cb = this.heldCb;
    this.heldChunks = null;
    this.heldCb = null;
    pushChunks(this.socket[kId], chunks, 0, Infinity, true);
    return cb;
  }

  /**
   * destroy(): the held write and what the Writable buffered behind it would have been in
   * the kernel on net.Socket (each write goes to it at once there): they are sent now.
   */
  sendHeld() {
    if (this.heldCb === null) return;
    const socket = this.socket;
    const cb = this.take();
    const state = socket._writableState;
    if (Array.isArray(state.buffered) && state.bufferedIndex < state.buffered.length) {
      pushChunks(socket[kId], state.buffered, state.bufferedIndex, Infinity, true);
    }
    binding.flush(socket[kId], Infinity);
    cb();
  }
}

/**
 * The end of a task that wrote: the held write completes, which lets the Writable hand over
 * what it buffered behind it (joining the same flush), and everything goes out with one write.
 */
function endTask(w) {
  w.inTask = false;
  if (w.heldCb === null) return;
  const socket = w.socket;
  if (socket[kClosed]) return;
  const cb = w.take();
  w.flushing = true;
  try {
    cb();
  } finally {
    w.flushing = false;
  }
  if (socket[kClosed]) return;
  const hwm = socket.writableHighWaterMark;
  const queued = binding.flush(socket[kId], hwm);
  const settling = w.settling;
  if (settling !== null) {
    w.settling = null;
    socket._settle(queued, hwm, settling);
  }
}

/** Small Buffers in a row are handed to the addon as one (a crossing per chunk cost more). */
const RUN_MAX = 64 * 1024;

/**
 * Hands the Writable's chunks[from..] to the addon: runs of small Buffers concatenated,
 * large ones by reference, strings in the encoding they came with. Stops once what the addon
 * has not written passes `hwm`. Returns [next, queued]; queued -1 when the connection is gone.
 */
function pushChunks(id, chunks, from, hwm, defer) {
  const n = chunks.length;
  let i = from;
  let queued = 0;
  while (i < n) {
    let { chunk, encoding } = chunks[i];
    let j = i + 1;
    if (isUint8Array(chunk) && chunk.byteLength < COALESCE_RUN_PIECE) {
      let bytes = chunk.byteLength;
      while (j < n && isUint8Array(chunks[j].chunk) &&
             chunks[j].chunk.byteLength < COALESCE_RUN_PIECE &&
             bytes + chunks[j].chunk.byteLength <= RUN_MAX) {
        bytes += chunks[j].chunk.byteLength;
        j++;
      }
      if (j > i + 1) {
        const run = new Array(j - i);
        for (let k = i; k < j; k++) run[k - i] = chunks[k].chunk;
        chunk = Buffer.concat(run, bytes);
      }
    } else if (typeof chunk === 'string' && !isNative(encoding)) {
      chunk = Buffer.from(chunk, encoding);
      encoding = 'buffer';
    }
    i = j;
    queued = binding.raw(id, chunk, isLatin1(encoding), hwm, defer || i < n);
    if (queued < 0 || queued >= hwm) break;
  }
  return [i, queued];
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
