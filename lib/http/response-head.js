'use strict';
// The decisions node's ServerResponse#writeHead(this.statusCode) + _storeHeader make for an
// implicit head (lib/_http_outgoing.js, lib/_http_server.js), ported so the addon can write
// the head: the user's header lines come back as one string, and what node would append
// (Date, Connection, Keep-Alive, Content-Length, Transfer-Encoding) as flag bits.
const { Date } = require('../internal/scheduling');
const {
  R_DATE, R_CONN_KEEP_ALIVE, R_CONN_CLOSE, R_CONTENT_LENGTH,
  R_CHUNKED, R_NO_BODY, R_KA_TIMEOUT,
  R_FRAME,
} = require('../internal/native').flags;
const {
  STATUS_CODES, kOutHeaders, kUniqueHeaders, validateHeaderName, validateHeaderValue,
} = require('../internal/node-internals');
const errors = require('../internal/errors');

const RE_CONN_CLOSE = /(?:^|\W)close(?:$|\W)/i;
const RE_TE_CHUNKED = /(?:^|\W)chunked(?:$|\W)/i;
const headerCharRegex = /[^\t\x20-\x7e\x80-\xff]/;

/** Why the native head cannot be used; the caller takes node's path instead. */
const NEEDS_NODE = null;

/** node's matchHeader, noting into `d`. */
function matchHeader(d, field, value) {
  // Only names as long as one of the fields below can be one: most names skip the
  // lower-casing (node's outgoing path does the same).
  switch (field.length) {
    case 4: case 6: case 7: case 10: case 14: case 17: break;
    default: return;
  }
  field = field.toLowerCase();
  switch (field) {
    case 'connection':
      d.seen |= SEEN_CONNECTION;
      d.removedConnection = false;
      if (RE_CONN_CLOSE.test(value)) d.last = true;
      else d.keepAlive = true;
      break;
    case 'transfer-encoding':
      d.seen |= SEEN_TE;
      d.removedTE = false;
      if (RE_TE_CHUNKED.test(value)) d.chunked = true;
      break;
    case 'content-length':
      d.seen |= SEEN_CONT_LEN;
      d.contentLength = +value;
      d.removedContLen = false;
      break;
    case 'date':
      d.seen |= SEEN_DATE;
      break;
    case 'expect':
      d.seen |= SEEN_EXPECT;
      break;
    case 'trailer':
      d.seen |= SEEN_TRAILER;
      break;
    case 'keep-alive':
      d.defaultKeepAlive = false;
      break;
  }
}

/**
 * The last line built per header name: apps send the same name and value on most responses,
 * and a line built once is a flat string the addon copies as it is (a new one was three
 * concatenations, flattened again in every respond()).
 */
const lines = new Map();
const LINES_MAX = 512;

function storeHeader(d, key, value, validate) {
  if (validate) checkValue(key, value);
  const cached = lines.get(key);
  let line;
  if (cached !== undefined && cached.value === value) {
    line = cached.line;
  } else {
    line = key + ': ' + value + '\r\n';
    if (typeof value === 'string' && value.length <= VALID_VALUE_LENGTH_MAX &&
        (cached !== undefined || lines.size < LINES_MAX)) {
      lines.set(key, { value, line });
    }
  }
  d.lines = d.lines === '' ? line : d.lines + line;
  matchHeader(d, key, value);
}

/**
 * Header names writeHead() objects used before and that passed node's token check: apps
 * send the same few names on every response, and a Set lookup is cheaper than the regex.
 */
const validNames = new Set();
const VALID_NAMES_MAX = 512;

function checkName(key) {
  if (validNames.has(key)) return;
  validateHeaderName(key);
  if (validNames.size < VALID_NAMES_MAX) validNames.add(key);
}

/**
 * Header names lower-cased, by name: setHeader() and getHeader() lower-case the same few names
 * on every response, and a new lower-case string is also a new property key to look up
 * (4 setHeader() calls: 720 against 240 ns; the cached string is the same value).
 */
const lowerNames = new Map();
const LOWER_NAMES_MAX = 512;

function lowerName(name) {
  let lower = lowerNames.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowerNames.size < LOWER_NAMES_MAX) lowerNames.set(name, lower);
  }
  return lower;
}

/** Header values known to pass node's character check (the same few, response after response). */
const validValues = new Set();
const VALID_VALUES_MAX = 512;
const VALID_VALUE_LENGTH_MAX = 128;

function checkValue(key, value) {
  // A number's text is digits, '.', 'e', '+', '-', 'Infinity' or 'NaN': always valid.
  if (typeof value === 'number' || validValues.has(value)) return;
  validateHeaderValue(key, value);
  if (typeof value === 'string' && value.length <= VALID_VALUE_LENGTH_MAX &&
      validValues.size < VALID_VALUES_MAX) {
    validValues.add(value);
  }
}

/** Returns false when node's own path must take over. `validate`: writeHead()'s object. */
function processHeader(d, res, key, value, validate) {
  if (validate) checkName(key);
  if (key.length === 19 && d.contentLength && key.toLowerCase() === 'content-disposition') {
    return false;
  }
  if (Array.isArray(value)) {
    if ((value.length < 2 || !(key.length === 6 && key.toLowerCase() === 'cookie')) &&
        (!res[kUniqueHeaders] || !res[kUniqueHeaders].has(key.toLowerCase()))) {
      for (let i = 0; i < value.length; i++) storeHeader(d, key, value[i], validate);
      return true;
    }
    value = value.join('; ');
  }
  storeHeader(d, key, value, validate);
  return true;
}

/** Header names node's _storeHeader notes on the way (its `state`): bits of `seen`. */
const SEEN_CONNECTION = 1;
const SEEN_CONT_LEN = 2;
const SEEN_TE = 4;
const SEEN_DATE = 8;
const SEEN_EXPECT = 16;
const SEEN_TRAILER = 32;

/**
 * What node's writeHead + _storeHeader decide for one head: the status line, the user's
 * header lines, flag bits for what node would append, and the response fields node sets on
 * the way. It starts as a copy of those fields, so applying it unfinished (after a throw)
 * leaves the response as node's half-run writeHead would. One shape for every response.
 */
class HeadDecision {
  constructor(res) {
    this.reset(res);
  }

  reset(res) {
    this.statusCode = res.statusCode;
    this.statusMessage = res.statusMessage;
    /** The reason phrase for the addon, or null for the code's default text. */
    this.reason = null;
    this.lines = '';
    this.flags = 0;
    this.seen = 0;
    this.hasBody = res._hasBody;
    this.keepAlive = res.shouldKeepAlive;
    this.last = res._last;
    this.chunked = res.chunkedEncoding;
    this.contentLength = res._contentLength;
    this.removedConnection = res._removedConnection;
    this.removedTE = res._removedTE;
    this.removedContLen = res._removedContLen;
    this.defaultKeepAlive = res._defaultKeepAlive;
  }
}

/**
 * A head as end() sends it: the reason phrase for the addon (null: the code's default text),
 * the user's header lines and the `R_*` flags. What writeHead() keeps until end().
 */
class DecidedHead {
  constructor(reason, lines, flags) {
    this.reason = reason;
    this.lines = lines;
    this.flags = flags;
  }
}

/**
 * The one decision in the making, reused: a HeadDecision per response was 144 B of the
 * 2.2 KB of JS heap a hello response allocated. A header value's toString() may decide
 * another response's head meanwhile; that one gets a fresh decision (`deciding`).
 */
const scratch = new HeadDecision({});
let deciding = false;

/** Sets on `res` what node's writeHead would have set. */
function applyHead(res, d) {
  res.statusCode = d.statusCode;
  res.statusMessage = d.statusMessage;
  res._hasBody = d.hasBody;
  res.shouldKeepAlive = d.keepAlive;
  res._last = d.last;
  res.chunkedEncoding = d.chunked;
  res._contentLength = d.contentLength;
  res._removedConnection = d.removedConnection;
  res._removedTE = d.removedTE;
  res._removedContLen = d.removedContLen;
  res._defaultKeepAlive = d.defaultKeepAlive;
}

/**
 * The decision for `res`'s head, applied to `res`, or NEEDS_NODE (`res` untouched: node's
 * writeHead makes the same changes itself). A throw leaves what node's would have set.
 * `keep`: the head is kept (writeHead) rather than sent at once (end()), which may use the
 * decision itself.
 */
function head(res, headers, fromObject, reasonGiven, keep) {
  const shared = !deciding;
  const d = shared ? scratch : new HeadDecision(res);
  if (shared) {
    d.reset(res);
    deciding = true;
  }
  try {
    if (!decideHead(d, res, headers, fromObject, reasonGiven)) return NEEDS_NODE;
  } catch (err) {
    applyHead(res, d);
    throw err;
  } finally {
    if (shared) deciding = false;
  }
  applyHead(res, d);
  return keep || !shared ? new DecidedHead(d.reason, d.lines, d.flags) : d;
}

/**
 * For `res.end()` before any head was written: validates and updates `res` exactly as node's
 * implicit writeHead would, and returns the decision, or NEEDS_NODE.
 */
function implicitHead(res, reasonGiven = false, keep = false) {
  return head(res, res[kOutHeaders], false, reasonGiven, keep);
}

/**
 * node's writeHead(status, [reason], headers) once `status` and `reason` are applied to
 * `res`, for `headers` given as a plain object (each name and value validated as node does)
 * and no headers set before.
 */
function explicitHead(res, headers, reasonGiven) {
  return head(res, headers, true, reasonGiven, true);
}

/**
 * node's head decisions, writing only `d`: `res` is read for its settings (sendDate,
 * useChunkedEncodingByDefault, keep-alive timeout, ...) and nothing else. Returns false
 * when node's own path must take over. `reasonGiven`: writeHead() got a string reason,
 * which node sends as it is, even ''; any other falsy statusMessage becomes the code's
 * default text.
 */
function decideHead(d, res, headers, fromObject, reasonGiven) {
  decideStatus(d, res, reasonGiven);
  if (!collectHeaders(d, res, headers, fromObject)) return false;
  // An Expect header makes node send the head at once; rare, leave it to node.
  if (d.seen & SEEN_EXPECT) return false;
  if (res.sendDate && !(d.seen & SEEN_DATE)) d.flags |= R_DATE;
  decideConnection(d, res);
  decideFraming(d, res);
  if (d.chunked !== true && (d.seen & SEEN_TRAILER)) throw errors.ERR_HTTP_TRAILER_INVALID();
  d.flags |= framingFlags(d.hasBody, d.chunked);
  return true;
}

/** The last status message that passed node's character check (most responses repeat it). */
let lastValidMessage = 'OK';

/** node's writeHead before _storeHeader: the status line and what the status implies. */
function decideStatus(d, res, reasonGiven) {
  const original = d.statusCode;
  const statusCode = original | 0;
  if (statusCode < 100 || statusCode > 999) {
    throw errors.ERR_HTTP_INVALID_STATUS_CODE(original);
  }
  if (!reasonGiven && !d.statusMessage) {
    d.statusMessage = STATUS_CODES[statusCode] || 'unknown';
  } else {
    d.reason = d.statusMessage;
  }
  d.statusCode = statusCode;
  const message = d.statusMessage;
  if (message !== lastValidMessage) {
    if (headerCharRegex.test(message)) throw errors.ERR_INVALID_CHAR('statusMessage');
    // node builds the status line with a template literal: a number, a boolean or an
    // object with toString() is sent as its string form (the addon takes strings only).
    if (typeof message !== 'string') d.reason = `${message}`;
    else lastValidMessage = message;
  }
  if (statusCode === 204 || statusCode === 304 || (statusCode >= 100 && statusCode <= 199)) {
    d.hasBody = false;
  }
  if (res._expect_continue && !res._sent100) d.keepAlive = false;
}

/** _storeHeader's loop: writeHead()'s object (validated) or setHeader()'s store. */
function collectHeaders(d, res, headers, fromObject) {
  if (headers && fromObject) {
    for (const key in headers) {
      if (Object.hasOwn(headers, key) && !processHeader(d, res, key, headers[key], true)) {
        return false;
      }
    }
  } else if (headers) {
    for (const key in headers) {
      const entry = headers[key];
      if (!processHeader(d, res, entry[0], entry[1], false)) return false;
    }
  }
  return true;
}

/** _storeHeader's Connection / Keep-Alive decision, when the user sent no Connection. */
function decideConnection(d, res) {
  if (d.chunked && (d.statusCode === 204 || d.statusCode === 304)) {
    d.chunked = false;
    d.keepAlive = false;
  }
  if (d.removedConnection) {
    d.last = !d.keepAlive;
    return;
  }
  if (d.seen & SEEN_CONNECTION) return;
  const shouldSendKeepAlive = d.keepAlive &&
    ((d.seen & SEEN_CONT_LEN) !== 0 || res.useChunkedEncodingByDefault || res.agent);
  if (shouldSendKeepAlive && res.maxRequestsOnConnectionReached) {
    d.flags |= R_CONN_CLOSE;
  } else if (shouldSendKeepAlive) {
    d.flags |= R_CONN_KEEP_ALIVE;
    if (res._keepAliveTimeout && d.defaultKeepAlive) d.flags |= R_KA_TIMEOUT;
  } else {
    d.last = true;
    d.flags |= R_CONN_CLOSE;
  }
}

/** _storeHeader's Content-Length / Transfer-Encoding decision, when the user sent neither. */
function decideFraming(d, res) {
  if ((d.seen & (SEEN_CONT_LEN | SEEN_TE)) !== 0) return;
  if (!d.hasBody) {
    d.chunked = false;
  } else if (!res.useChunkedEncodingByDefault) {
    d.last = true;
  } else if (!(d.seen & SEEN_TRAILER) && !d.removedContLen &&
      typeof d.contentLength === 'number') {
    d.flags |= R_CONTENT_LENGTH;
  } else if (!d.removedTE) {
    d.flags |= R_CHUNKED;
    d.chunked = true;
  } else {
    d.last = true;
  }
}

function framingFlags(hasBody, chunked) {
  if (!hasBody) return R_NO_BODY;
  return chunked ? R_FRAME : 0;
}

/** Body framing flags of a response whose head is decided. */
function bodyFlags(res) {
  return framingFlags(res._hasBody, res.chunkedEncoding);
}

/**
 * The head node's _storeHeader would have built for a decided head: for a response that
 * leaves the one-call path after writeHead() (write(), flushHeaders(), ...).
 */
function headText(res, head) {
  const flags = head.flags;
  let text = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n${head.lines}`;
  if (flags & R_DATE) text += `Date: ${new Date().toUTCString()}\r\n`;
  if (flags & R_CONN_KEEP_ALIVE) {
    text += 'Connection: keep-alive\r\n';
    if (flags & R_KA_TIMEOUT) text += keepAliveLine(res);
  } else if (flags & R_CONN_CLOSE) {
    text += 'Connection: close\r\n';
  }
  if (flags & R_CONTENT_LENGTH) text += `Content-Length: ${res._contentLength}\r\n`;
  else if (flags & R_CHUNKED) text += 'Transfer-Encoding: chunked\r\n';
  return text + '\r\n';
}

/** The server's Keep-Alive line, as headText writes it. */
function keepAliveLine(res) {
  const max = ~~res._maxRequestsPerSocket > 0 ? `, max=${res._maxRequestsPerSocket}` : '';
  return `Keep-Alive: timeout=${Math.floor(res._keepAliveTimeout / 1000)}${max}\r\n`;
}

let lastKeepAlive = { timeout: -1, max: -1, length: 0 };

/** Its length, kept for the settings last asked about (most servers have one). */
function keepAliveLength(res) {
  const k = lastKeepAlive;
  if (k.timeout !== res._keepAliveTimeout || k.max !== res._maxRequestsPerSocket) {
    lastKeepAlive = {
      timeout: res._keepAliveTimeout,
      max: res._maxRequestsPerSocket,
      length: keepAliveLine(res).length,
    };
  }
  return lastKeepAlive.length;
}

/** Length of a decimal's text (a non-negative integer, as node writes Content-Length). */
function decimalLength(n) {
  let length = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    length++;
  }
  return length;
}

/**
 * `headText(res, head).length` without making the text (a pipelined response that waits
 * counts its head as node's outputData does; a Date string per response was a quarter of a
 * pipelined request's CPU). The Date line is 37 characters ("Date: " + toUTCString()'s 29).
 */
function headLength(res, head) {
  const flags = head.flags;
  let n = 9 + decimalLength(res.statusCode) + 1 + String(res.statusMessage).length + 2 +
    head.lines.length;
  if (flags & R_DATE) n += 37;
  if (flags & R_CONN_KEEP_ALIVE) {
    n += 24;
    if (flags & R_KA_TIMEOUT) n += keepAliveLength(res);
  } else if (flags & R_CONN_CLOSE) {
    n += 19;
  }
  if (flags & R_CONTENT_LENGTH) n += 16 + decimalLength(res._contentLength) + 2;
  else if (flags & R_CHUNKED) n += 28;
  return n + 2;
}

module.exports = {
  implicitHead, explicitHead, headText, headLength, bodyFlags, checkName, checkValue, lowerName,
};
