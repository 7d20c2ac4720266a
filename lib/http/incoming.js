'use strict';
// IncomingMessage: node's own class, with the header lines kept as the one latin1 string the
// addon produced until someone reads rawHeaders / headers / headersDistinct (or the trailer
// equivalents). Every other behaviour is node's.
const {
  NodeIncomingMessage, kHeaders, kHeadersCount, kTrailers, kTrailersCount, sameInstances,
  headerCountLimit,
} = require('../internal/node-internals');
const { kHeaderBlock, kRawHeaders, kTrailerBlock, kRawTrailers } = require('../internal/symbols');
const {
  lazyOf, materialize, defineLazyGetters, lazyStateFor,
} = require('../internal/lazy-request-stream');

/** node's default parser.maxHeaderPairs: entries (names and values) kept per message. */
const MAX_HEADER_ENTRIES = require('../internal/native').defaults.maxHeaderPairs;

/**
 * Splits `Name: value\r\n` lines (already validated natively) into node's rawHeaders form,
 * trimming optional whitespace around values (RFC 9110 §5.5).
 */
function parseHeaderBlock(block) {
  const out = [];
  const len = block.length;
  let i = 0;
  while (i < len) {
    let eol = block.indexOf('\r\n', i);
    if (eol === -1) eol = len;
    const colon = block.indexOf(':', i);
    out.push(block.slice(i, colon));
    let s = colon + 1;
    let e = eol;
    while (s < e && (block.charCodeAt(s) === 32 || block.charCodeAt(s) === 9)) s++;
    while (e > s && (block.charCodeAt(e - 1) === 32 || block.charCodeAt(e - 1) === 9)) e--;
    out.push(block.slice(s, e));
    i = eol + 2;
  }
  return out;
}

/**
 * How many rawHeaders entries make `headers` (node's parser.maxHeaderPairs: the server's
 * maxHeadersCount, 0 for no limit).
 */
function entryLimit(msg) {
  const n = msg.socket?.server?.maxHeadersCount;
  if (typeof n !== 'number') return MAX_HEADER_ENTRIES;
  return n > 0 ? n << 1 : Infinity;
}

function keep(lines, limit) {
  const n = rawEntries(lines.length, limit);
  return n === lines.length ? lines : lines.slice(0, n);
}

/**
 * Fields node's C++ parser hands to JS at a time: it flushes when the 32nd field
 * (kMaxHeaderFieldsCount) starts, so each piece holds 31.
 */
const FIELDS_PER_FLUSH = 31;

/**
 * How many entries rawHeaders keeps of `total`, as node's parserOnHeaders collects them:
 * all when they came in one piece; past maxHeaderPairs, Node 20 keeps whole pieces while it
 * is under the limit, newer Nodes cut at the limit.
 */
function rawEntries(total, limit) {
  if (total <= limit) return total;
  if (headerCountLimit) return limit;
  let kept = 0;
  while (kept < total && kept < limit) kept += FIELDS_PER_FLUSH * 2;
  return Math.min(kept, total);
}

/**
 * node's IncomingMessage, its header lines kept as one string until read. A plain function,
 * as node's is: subclasses call it with `IncomingMessage.call(this, socket)`.
 */
function IncomingMessage(socket) {
  NodeIncomingMessage.call(this, socket);
  this[kHeaderBlock] = '';
  this[kTrailerBlock] = '';
}
Object.setPrototypeOf(IncomingMessage.prototype, NodeIncomingMessage.prototype);
Object.setPrototypeOf(IncomingMessage, NodeIncomingMessage);
sameInstances(IncomingMessage, NodeIncomingMessage);

const nodeRead = NodeIncomingMessage.prototype.read;
const nodeOn = NodeIncomingMessage.prototype.on;
const nodePrependListener = NodeIncomingMessage.prototype.prependListener;

// node marks a request as being consumed in _read(); a body that arrived with the head is
// read without _read() ever running, so mark it on read() too (resOnFinish must not dump a
// request the app is reading). Not on read(0), which reads nothing: resume() calls it on
// the next tick, and node then calls _read() (and so consumes) only when the buffer is
// below its high-water mark; a paused request whose buffer is full is dumped. Nor once
// dumped: the dump's own reads are not the app's (node's _read alone marks those).
IncomingMessage.prototype.read = function read(n) {
  if (n !== 0 && !this._dumped) this._consuming = true;
  return nodeRead.call(this, n);
};

// A listener must not miss events of a lifecycle that is only being recorded
// (lazy-request-stream.js): the state becomes real first.
IncomingMessage.prototype.on = function on(ev, fn) {
  const lazy = lazyOf(this);
  if (lazy !== null) materialize(lazy);
  return nodeOn.call(this, ev, fn);
};

IncomingMessage.prototype.addListener = function addListener(ev, fn) {
  return this.on(ev, fn);
};

IncomingMessage.prototype.prependListener = function prependListener(ev, fn) {
  const lazy = lazyOf(this);
  if (lazy !== null) materialize(lazy);
  return nodePrependListener.call(this, ev, fn);
};

/** Whether `req` is one of fast-http's requests (its own prototype chain, not instanceof). */
function isFastRequest(req) {
  return Object.prototype.isPrototypeOf.call(IncomingMessage.prototype, req);
}

defineLazyGetters(IncomingMessage.prototype);

/** rawHeaders / rawTrailers: parsed from the addon's block on first read. */
function lazyLines(name, kBlock, kLines, kCount) {
  Object.defineProperty(IncomingMessage.prototype, name, {
    __proto__: null,
    configurable: true,
    enumerable: true,
    get() {
      let v = this[kLines];
      if (v === null) {
        const limit = entryLimit(this);
        v = this[kLines] = keep(parseHeaderBlock(this[kBlock]), limit);
        this[kCount] = Math.min(v.length, limit);
        this[kBlock] = '';
      }
      return v;
    },
    set(v) {
      this[kLines] = v;
    },
  });
}

lazyLines('rawHeaders', kHeaderBlock, kRawHeaders, kHeadersCount);
lazyLines('rawTrailers', kTrailerBlock, kRawTrailers, kTrailersCount);

// A body-less request is made without node's constructor: the same fields in the same order
// (what `new IncomingMessage(socket)` sets, checked against it when this file loads), with its
// stream state a stand-in whose real state is made only if something needs it. node's
// constructor made a ReadableState, ran Readable's, Stream's and EventEmitter's constructors
// and stored header arrays that were replaced at once.
const probeSymbols = Object.create(null);
for (const sym of Object.getOwnPropertySymbols(new NodeIncomingMessage(null))) {
  probeSymbols[sym.description] = sym;
}
const kShapeMode = probeSymbols.shapeMode;
const kCapture = probeSymbols.kCapture;
const kAbortController = probeSymbols.kAbortController;
const kAbortSignalSocket = probeSymbols.kAbortSignalSocket;
const kAbortSignalListener = probeSymbols.kAbortSignalListener;
const kAbortSignalDetached = probeSymbols.kAbortSignalDetached;
const nodeSymbols = [
  kShapeMode, kCapture, kHeaders, kHeadersCount, kTrailers, kTrailersCount,
  kAbortController, kAbortSignalSocket, kAbortSignalListener, kAbortSignalDetached,
].filter((sym) => sym !== undefined);

function BodylessRequest(socket) {
  this._events = {
    close: undefined, error: undefined, data: undefined, end: undefined, readable: undefined,
  };
  this._readableState = lazyStateFor(this);
  this._maxListeners = undefined;
  this.socket = socket;
  this.httpVersionMajor = null;
  this.httpVersionMinor = null;
  this.httpVersion = null;
  this.complete = false;
  this.joinDuplicateHeaders = false;
  this.aborted = false;
  this.upgrade = null;
  this.url = '';
  this.method = null;
  this.statusCode = null;
  this.statusMessage = null;
  this.client = socket;
  this._consuming = false;
  this._dumped = false;
  if (kShapeMode !== undefined) this[kShapeMode] = true;
  this[kCapture] = false;
  this[kHeaders] = null;
  this[kHeadersCount] = 0;
  this[kTrailers] = null;
  this[kTrailersCount] = 0;
  if (kAbortController !== undefined) {
    this[kAbortController] = null;
    this[kAbortSignalSocket] = null;
    this[kAbortSignalListener] = null;
    this[kAbortSignalDetached] = false;
  }
  this[kHeaderBlock] = '';
  this[kRawHeaders] = null;
  this[kTrailerBlock] = '';
  this[kRawTrailers] = null;
}
BodylessRequest.prototype = IncomingMessage.prototype;

function sameValue(a, b) {
  if (a === null || typeof a !== 'object') return Object.is(a, b);
  if (b === null || typeof b !== 'object') return false;
  const ka = Reflect.ownKeys(a);
  const kb = Reflect.ownKeys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && Object.is(a[k], b[k]));
}

/** Whether BodylessRequest makes what node's constructor makes, on this Node. */
function bodylessMatchesNode() {
  try {
    const socket = new (require('node:net').Socket)();
    const ref = new IncomingMessage(socket);
    const req = new BodylessRequest(socket);
    const refKeys = Object.keys(ref);
    const keys = Object.keys(req);
    if (refKeys.join() !== keys.join()) return false;
    for (const k of refKeys) {
      if (k !== '_readableState' && !sameValue(ref[k], req[k])) return false;
    }
    const refSyms = Object.getOwnPropertySymbols(ref);
    const syms = new Set(Object.getOwnPropertySymbols(req));
    if (refSyms.length !== syms.size) return false;
    for (const sym of refSyms) {
      if (!syms.has(sym)) return false;
      if (sym !== kRawHeaders && sym !== kRawTrailers && !sameValue(ref[sym], req[sym])) {
        return false;
      }
    }
    for (const name of ['rawHeaders', 'rawTrailers']) {
      if (!sameValue(ref[name], req[name])) return false;
    }
    if (!nodeSymbols.every((sym) => syms.has(sym))) return false;
    // The state made on demand: the same fields, the same values where they are not objects.
    const state = materialize(req._readableState);
    const refState = ref._readableState;
    const stateKeys = Reflect.ownKeys(state);
    return stateKeys.map(String).join() === Reflect.ownKeys(refState).map(String).join() &&
      stateKeys.every((k) => typeof state[k] === 'object' || Object.is(state[k], refState[k]));
  } catch {
    return false;
  }
}

const BODYLESS = bodylessMatchesNode();

/**
 * A request for a body-less message on `socket`, as `new IncomingMessage(socket)` makes it
 * (with `Born`, a constructor born-with.js made around BodylessRequest, when given).
 */
function newBodylessRequest(socket, Born) {
  if (!BODYLESS) return null;
  return Born === null ? new BodylessRequest(socket) : new Born(socket);
}

const HEADERS = { name: 'rawHeaders', kBlock: kHeaderBlock, kLines: kRawHeaders, kCount: kHeadersCount };
const TRAILERS = { name: 'rawTrailers', kBlock: kTrailerBlock, kLines: kRawTrailers, kCount: kTrailersCount };

/**
 * Gives `req` its header (or trailer) lines: lazily on fast-http's class, eagerly (node's
 * way) on a user-supplied IncomingMessage class or when the app is known to swap prototypes.
 * Trailers must be set after `req.complete` is true (node's _addHeaderLines files them by it).
 */
function setLines(req, block, eager, which) {
  if (!eager && isFastRequest(req)) {
    req[which.kBlock] = block;
    req[which.kLines] = null;
    return;
  }
  const limit = entryLimit(req);
  const lines = keep(parseHeaderBlock(block), limit);
  const count = Math.min(lines.length, limit);
  if (isFastRequest(req)) {
    req[which.kLines] = lines;
    req[which.kCount] = count;
    Object.defineProperty(req, which.name, {
      __proto__: null, value: lines, writable: true, enumerable: true, configurable: true,
    });
  } else {
    req._addHeaderLines(lines, count);
  }
}

function setHeaderBlock(req, block, eager) {
  setLines(req, block, eager, HEADERS);
}

function setTrailerBlock(req, block) {
  // Eager headers (an app that swaps prototypes) mean eager trailers too.
  setLines(req, block, Object.getOwnPropertyDescriptor(req, 'rawHeaders') !== undefined, TRAILERS);
}

module.exports = {
  IncomingMessage, BodylessRequest, isFastRequest, newBodylessRequest, parseHeaderBlock,
  setHeaderBlock, setTrailerBlock,
};
