'use strict';
// The socket facade's writing side, the base class of FastSocket (socket.js): every write
// goes through node's Writable, so writableLength, write()'s result, 'drain' and 'finish'
// account as on net.Socket, and the addon queues what the kernel does not take yet.
//   - Coalescing on upgraded sockets (after Bun's): the first write of a JS task goes out
//     at once; a later small callback-less write holds its Writable callback until the end
//     of the task, so what follows waits in the Writable and all of it goes out together.
//   - An app's backlog stays in JS as references: the addon takes chunks only while its
//     queue is under the high-water mark, and asks for more when it drains.
const { queueMicrotask } = require('../internal/scheduling');
const net = require('node:net');
const { Duplex } = require('node:stream');
const { isUint8Array } = require('node:util/types');
const { LazyDuplex } = require('../internal/lazy-duplex');
const { binding } = require('../internal/native');
const { kId, kClosed, kPendingWrites } = require('../internal/symbols');

const NetSocketProto = net.Socket.prototype;
/** Stream's write: net.Socket has none of its own, so an own one there is a patch. */
const nodeWrite = Duplex.prototype.write;

/** Writes up to this size may be coalesced with others of the same task. */
const COALESCE_MAX_WRITE = 16 * 1024;
/** Buffers under this size are copied into one when sent together (the addon keeps larger
 * ones by reference; see src/binding/socket.rs PIN_MIN). */
const COALESCE_RUN_PIECE = 16 * 1024;
const kRawWrites = Symbol('fast-http.rawWrites');
const kFinalCallback = Symbol('fast-http.finalCallback');
const kBacklog = Symbol('fast-http.writeBacklog');

function isLatin1(encoding) {
  return encoding === 'latin1' || encoding === 'binary' || encoding === 'ascii';
}

/** Encodings the addon writes strings in itself (UTF-8 or latin1). */
function isNative(encoding) {
  return encoding === undefined || encoding === 'utf8' || encoding === 'utf-8' ||
    encoding === 'buffer' || isLatin1(encoding);
}

class WritingSocket extends LazyDuplex {
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
    // A patch of net.Socket.prototype.write runs as on node's sockets; node's write it
    // calls lands in _write / _writev below.
    const write = NetSocketProto.write;
    if (write !== nodeWrite) return Reflect.apply(write, this, arguments);
    return nodeWrite.call(this, chunk, encoding, cb);
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

  /**
   * The addon closed the connection cleanly (it closes only once its queue is written) while
   * end() waited for the FIN to go out: the writable side finished, as node's shutdown
   * completes before its handle closes. Returns whether end() was waiting.
   */
  _finalOnClose() {
    if (this[kFinalCallback] === null) return false;
    this._onShutdown();
    return true;
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
}

Object.assign(WritingSocket.prototype, {
  [kRawWrites]: null,
  [kPendingWrites]: null,
  [kFinalCallback]: null,
  [kBacklog]: null,
});

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
/** Starts coalescing a socket's writes (it was upgraded). */
function coalesceWrites(socket) {
  socket[kRawWrites] = new RawWrites(socket);
}

/** Sends what coalescing holds, before the socket is destroyed (see RawWrites#sendHeld). */
function sendHeldWrites(socket) {
  const w = socket[kRawWrites];
  if (w !== null && !socket[kClosed]) w.sendHeld();
}

module.exports = { WritingSocket, coalesceWrites, sendHeldWrites };
