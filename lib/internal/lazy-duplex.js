'use strict';
// The base of the socket facade: a net.Socket without a handle (so `instanceof net.Socket`
// holds) whose two stream states are made on first use. Most of an idle keep-alive
// connection's JS memory was its socket's ReadableState and WritableState (with their
// buffers, bit-field accessors' backing stores and WritableState's bound onwrite); a socket
// that only carries requests answered in one native call never touches them. Until then:
//   - the getters node's HTTP code and apps read on every request (destroyed, writable,
//     writableLength, readableHighWaterMark, ...) answer what a fresh socket's states would,
//     taken from a real Duplex made the same way when this file loads;
//   - listeners for events other than 'data' and 'readable' go straight to EventEmitter
//     (Readable#on only looks at its state for those two);
//   - anything else that reads `_readableState` / `_writableState` makes them, with the
//     options the constructor was given, and from then on this is a plain Duplex.
const EventEmitter = require('node:events');
const net = require('node:net');
const Stream = require('node:stream');
const { findDescriptor, replaceGetter } = require('./descriptors');

const { Duplex, Readable, Writable } = Stream;
const { ReadableState } = Readable;
const { WritableState } = Writable;

const kLazy = Symbol('fast-http.lazyStreams');
const kOptions = Symbol('fast-http.streamOptions');

const NetSocketProto = net.Socket.prototype;
/** What net.Socket.prototype has while nothing patched it (Readable's, for these). */
const nodeOn = NetSocketProto.on;
const nodeAddListener = NetSocketProto.addListener;
const nodePrepend = NetSocketProto.prependListener;
const nodeRemove = NetSocketProto.removeListener;
const nodeOff = NetSocketProto.off;

function LazyDuplex(options) {
  // The same event slots Duplex's constructor presets (stable object shape), then the two
  // events every facade socket listens for from its first moment (lib/http/socket.js,
  // server-logic.js), in the order they are added: all ten fit in the object itself, with no
  // out-of-object property array (40 B less per idle connection).
  this._events = {
    close: undefined,
    error: undefined,
    prefinish: undefined,
    finish: undefined,
    drain: undefined,
    data: undefined,
    end: undefined,
    readable: undefined,
    newListener: undefined,
    timeout: undefined,
  };
  this.allowHalfOpen = options.allowHalfOpen !== false;
  Stream.call(this, options);
  this[kLazy] = true;
  this[kOptions] = options;
}
LazyDuplex.prototype = Object.create(net.Socket.prototype, {
  constructor: { __proto__: null, value: LazyDuplex, writable: true, configurable: true },
});

function own(obj, name, value) {
  Object.defineProperty(obj, name, {
    __proto__: null, value, writable: true, enumerable: true, configurable: true,
  });
}

/** Makes the stream states; `_onStreamStates()` lets the subclass replay its setup. */
function materialize(stream) {
  if (!stream[kLazy]) return;
  stream[kLazy] = false;
  const options = stream[kOptions];
  stream[kOptions] = null;
  own(stream, '_readableState', new ReadableState(options, stream, true));
  own(stream, '_writableState', new WritableState(options, stream, true));
  stream._onStreamStates();
}

LazyDuplex.prototype._onStreamStates = function _onStreamStates() {};

for (const name of ['_readableState', '_writableState']) {
  Object.defineProperty(LazyDuplex.prototype, name, {
    __proto__: null,
    configurable: true,
    get() {
      materialize(this);
      return this[name];
    },
    set(value) {
      // Both states exist before one is replaced (the other's getter must find its own).
      materialize(this);
      own(this, name, value);
    },
  });
}


// What a fresh socket's states say, read off a real Duplex built the same way (with the
// 'data' listener a subclass replays), so the answers follow the running Node version.
function freshValues(options, hasDataListener) {
  const probe = new Duplex(options);
  if (hasDataListener) probe.on('data', () => {});
  const values = Object.create(null);
  for (const name of STATE_GETTERS) {
    const d = findDescriptor(Duplex.prototype, name);
    if (d?.get === undefined) continue;
    const v = d.get.call(probe);
    if (v === null || typeof v !== 'object') values[name] = v;
  }
  probe.destroy();
  return values;
}

/** Getters answered without the states while they do not exist (the hot ones). */
const STATE_GETTERS = [
  'destroyed', 'closed', 'errored', 'readable', 'writable', 'readableEnded',
  'readableFlowing', 'readableLength', 'readableAborted', 'readableDidRead',
  'writableEnded', 'writableFinished', 'writableLength', 'writableNeedDrain',
  'writableCorked', 'writableAborted', 'readableObjectMode', 'writableObjectMode',
];

/**
 * Installs the state-free getters on `proto` (a LazyDuplex subclass's prototype whose
 * instances are built with `options`) plus the two high-water marks, which come from the
 * instance's own options.
 */
function defineLazyGetters(proto, options, hasDataListener) {
  const values = freshValues(options, hasDataListener);
  for (const name of Object.keys(values)) {
    const value = values[name];
    replaceGetter(proto, name, (get) => function getter() {
      return this[kLazy] ? value : get.call(this);
    }, Duplex.prototype);
  }
  const defaultHwm = Stream.getDefaultHighWaterMark ? Stream.getDefaultHighWaterMark(false) : 16384;
  for (const name of ['readableHighWaterMark', 'writableHighWaterMark']) {
    replaceGetter(proto, name, (get) => function getter() {
      return this[kLazy] ? (this[kOptions].highWaterMark ?? defaultHwm) : get.call(this);
    }, Duplex.prototype);
  }
}

function touchesState(ev) {
  return ev === 'data' || ev === 'readable';
}

// EventEmitter's methods are looked up when called, not captured: what an app or agent
// patches on EventEmitter.prototype (or on net.Socket.prototype) runs as on node's sockets.
// A patch of net.Socket.prototype's runs on the socket with its states made (node's
// method, which it calls, reads them).
LazyDuplex.prototype.on = function on(ev, fn) {
  const patched = NetSocketProto.on;
  if (patched !== nodeOn) return callWithStates(this, patched, arguments);
  if (this[kLazy]) {
    if (!touchesState(ev)) return EventEmitter.prototype.on.call(this, ev, fn);
    materialize(this);
  }
  return Readable.prototype.on.call(this, ev, fn);
};

LazyDuplex.prototype.addListener = function addListener(ev, fn) {
  const patched = NetSocketProto.addListener;
  if (patched !== nodeAddListener) return callWithStates(this, patched, arguments);
  return LazyDuplex.prototype.on.call(this, ev, fn);
};

LazyDuplex.prototype.prependListener = function prependListener(ev, fn) {
  const patched = NetSocketProto.prependListener;
  if (patched !== nodePrepend) return callWithStates(this, patched, arguments);
  if (this[kLazy] && touchesState(ev)) materialize(this);
  return EventEmitter.prototype.prependListener.call(this, ev, fn);
};

LazyDuplex.prototype.removeListener = function removeListener(ev, fn) {
  const patched = NetSocketProto.removeListener;
  if (patched !== nodeRemove) return callWithStates(this, patched, arguments);
  if (this[kLazy]) {
    if (!touchesState(ev)) return EventEmitter.prototype.removeListener.call(this, ev, fn);
    materialize(this);
  }
  return Readable.prototype.removeListener.call(this, ev, fn);
};

LazyDuplex.prototype.off = function off(ev, fn) {
  const patched = NetSocketProto.off;
  if (patched !== nodeOff) return callWithStates(this, patched, arguments);
  return LazyDuplex.prototype.removeListener.call(this, ev, fn);
};

LazyDuplex.prototype.removeAllListeners = function removeAllListeners(ev) {
  if (this[kLazy]) {
    if (ev !== undefined && !touchesState(ev)) {
      return EventEmitter.prototype.removeAllListeners.call(this, ev);
    }
    materialize(this);
  }
  return Readable.prototype.removeAllListeners.apply(this, arguments);
};

function callWithStates(stream, fn, args) {
  materialize(stream);
  return Reflect.apply(fn, stream, args);
}

// A subclass may register listeners only once its states exist (see _onStreamStates):
// these must count them as node's would.
for (const method of ['listenerCount', 'listeners', 'rawListeners', 'eventNames']) {
  const base = EventEmitter.prototype[method];
  LazyDuplex.prototype[method] = function (ev) {
    if (this[kLazy] && (ev === undefined || touchesState(ev))) materialize(this);
    return base.apply(this, arguments);
  };
}

module.exports = { LazyDuplex, defineLazyGetters, materialize, kLazy };
