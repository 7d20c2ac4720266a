'use strict';
// IncomingMessage: node's own class, with the header lines kept as the one latin1 string the
// addon produced until someone reads rawHeaders / headers / headersDistinct (or the trailer
// equivalents). Every other behaviour is node's.
const {
  NodeIncomingMessage, kHeadersCount, kTrailersCount,
} = require('./node-internals');
const { kHeaderBlock, kRawHeaders, kTrailerBlock, kRawTrailers } = require('./symbols');
const { lazyOf, materialize, defineLazyGetters } = require('./lazy-request-stream');

/** node's default parser.maxHeaderPairs: entries (names and values) kept per message. */
const MAX_HEADER_ENTRIES = 2000;

/**
 * Splits `Name: value\r\n` lines (already validated natively) into node's rawHeaders form,
 * trimming optional whitespace around values (RFC 9110 §5.5).
 */
function parseHeaderBlock(block, limit) {
  const out = [];
  const len = block.length;
  let i = 0;
  while (i < len && out.length < limit) {
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

function entryLimit(msg) {
  const n = msg.socket?.server?.maxHeadersCount;
  return typeof n === 'number' && n > 0 ? n << 1 : MAX_HEADER_ENTRIES;
}

class IncomingMessage extends NodeIncomingMessage {
  constructor(socket) {
    super(socket);
    this[kHeaderBlock] = '';
    this[kTrailerBlock] = '';
  }

  // node marks a request as being consumed in _read(); a body that arrived with the head
  // is read without _read() ever running, so mark it on read() too (resOnFinish must not
  // dump a request the app is reading).
  read(n) {
    this._consuming = true;
    return super.read(n);
  }

  // A listener must not miss events of a lifecycle that is only being recorded
  // (lazy-request-stream.js): the state becomes real first.
  on(ev, fn) {
    const lazy = lazyOf(this);
    if (lazy !== null) materialize(lazy);
    return super.on(ev, fn);
  }

  addListener(ev, fn) {
    return this.on(ev, fn);
  }

  prependListener(ev, fn) {
    const lazy = lazyOf(this);
    if (lazy !== null) materialize(lazy);
    return super.prependListener(ev, fn);
  }
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
        v = this[kLines] = parseHeaderBlock(this[kBlock], entryLimit(this));
        this[kCount] = v.length;
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

const HEADERS = { name: 'rawHeaders', kBlock: kHeaderBlock, kLines: kRawHeaders, kCount: kHeadersCount };
const TRAILERS = { name: 'rawTrailers', kBlock: kTrailerBlock, kLines: kRawTrailers, kCount: kTrailersCount };

/**
 * Gives `req` its header (or trailer) lines: lazily on fast-http's class, eagerly (node's
 * way) on a user-supplied IncomingMessage class or when the app is known to swap prototypes.
 * Trailers must be set after `req.complete` is true (node's _addHeaderLines files them by it).
 */
function setLines(req, block, eager, which) {
  if (!eager && req instanceof IncomingMessage) {
    req[which.kBlock] = block;
    req[which.kLines] = null;
    return;
  }
  const lines = parseHeaderBlock(block, entryLimit(req));
  if (req instanceof IncomingMessage) {
    req[which.kLines] = lines;
    req[which.kCount] = lines.length;
    Object.defineProperty(req, which.name, {
      __proto__: null, value: lines, writable: true, enumerable: true, configurable: true,
    });
  } else {
    req._addHeaderLines(lines, lines.length);
  }
}

function setHeaderBlock(req, block, eager) {
  setLines(req, block, eager, HEADERS);
}

function setTrailerBlock(req, block) {
  // Eager headers (an app that swaps prototypes) mean eager trailers too.
  setLines(req, block, Object.getOwnPropertyDescriptor(req, 'rawHeaders') !== undefined, TRAILERS);
}

module.exports = { IncomingMessage, parseHeaderBlock, setHeaderBlock, setTrailerBlock };
