'use strict';
// The decisions node's ServerResponse#writeHead(this.statusCode) + _storeHeader make for an
// implicit head (lib/_http_outgoing.js, lib/_http_server.js), ported so the addon can write
// the head: the user's header lines come back as one string, and what node would append
// (Date, Connection, Keep-Alive, Content-Length, Transfer-Encoding) as flag bits.
const {
  R_DATE, R_CONN_KEEP_ALIVE, R_CONN_CLOSE, R_CONTENT_LENGTH,
  R_CHUNKED, R_NO_BODY, R_CLOSE_AFTER, R_KA_TIMEOUT,
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

const state = {
  connection: false,
  contLen: false,
  te: false,
  date: false,
  expect: false,
  trailer: false,
  lines: '',
};

function matchHeader(res, field, value) {
  // Only names as long as one of the fields below can be one: most names skip the
  // lower-casing (node's outgoing path does the same).
  switch (field.length) {
    case 4: case 6: case 7: case 10: case 14: case 17: break;
    default: return;
  }
  field = field.toLowerCase();
  switch (field) {
    case 'connection':
      state.connection = true;
      res._removedConnection = false;
      if (RE_CONN_CLOSE.test(value)) res._last = true;
      else res.shouldKeepAlive = true;
      break;
    case 'transfer-encoding':
      state.te = true;
      res._removedTE = false;
      if (RE_TE_CHUNKED.test(value)) res.chunkedEncoding = true;
      break;
    case 'content-length':
      state.contLen = true;
      res._contentLength = +value;
      res._removedContLen = false;
      break;
    case 'date':
    case 'expect':
    case 'trailer':
      state[field] = true;
      break;
    case 'keep-alive':
      res._defaultKeepAlive = false;
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

function storeHeader(res, key, value, validate) {
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
  state.lines = state.lines === '' ? line : state.lines + line;
  matchHeader(res, key, value);
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
function processHeader(res, key, value, validate) {
  if (validate) checkName(key);
  if (key.length === 19 && res._contentLength && key.toLowerCase() === 'content-disposition') {
    return false;
  }
  if (Array.isArray(value)) {
    if ((value.length < 2 || !(key.length === 6 && key.toLowerCase() === 'cookie')) &&
        (!res[kUniqueHeaders] || !res[kUniqueHeaders].has(key.toLowerCase()))) {
      for (let i = 0; i < value.length; i++) storeHeader(res, key, value[i], validate);
      return true;
    }
    value = value.join('; ');
  }
  storeHeader(res, key, value, validate);
  return true;
}

/**
 * For `res.end()` before any head was written: validates and updates `res` exactly as node's
 * implicit writeHead would, and returns `{ lines, flags, reason }`, or NEEDS_NODE.
 */
function implicitHead(res, reasonGiven = false) {
  return decideHead(res, res[kOutHeaders], false, reasonGiven);
}

/**
 * node's writeHead(status, [reason], headers) once `status` and `reason` are applied to
 * `res`, for `headers` given as a plain object (each name and value validated as node does)
 * and no headers set before.
 */
function explicitHead(res, headers, reasonGiven) {
  return decideHead(res, headers, true, reasonGiven);
}

/** The last status message that passed node's character check (most responses repeat it). */
let lastValidMessage = 'OK';

/**
 * `reasonGiven`: writeHead() got a string reason, which node sends as it is, even ''; any
 * other falsy statusMessage becomes the code's default text.
 */
function decideHead(res, headers, fromObject, reasonGiven) {
  const original = res.statusCode;
  const statusCode = original | 0;
  if (statusCode < 100 || statusCode > 999) {
    throw errors.ERR_HTTP_INVALID_STATUS_CODE(original);
  }
  let reason = null;
  if (!reasonGiven && !res.statusMessage) {
    res.statusMessage = STATUS_CODES[statusCode] || 'unknown';
  } else {
    reason = res.statusMessage;
  }
  res.statusCode = statusCode;
  const message = res.statusMessage;
  if (message !== lastValidMessage) {
    if (headerCharRegex.test(message)) throw errors.ERR_INVALID_CHAR('statusMessage');
    // node builds the status line with a template literal: a number, a boolean or an
    // object with toString() is sent as its string form (the addon takes strings only).
    if (typeof message !== 'string') reason = `${message}`;
    else lastValidMessage = message;
  }
  if (statusCode === 204 || statusCode === 304 || (statusCode >= 100 && statusCode <= 199)) {
    res._hasBody = false;
  }
  if (res._expect_continue && !res._sent100) res.shouldKeepAlive = false;

  state.connection = state.contLen = state.te = state.date = state.expect = state.trailer = false;
  state.lines = '';
  if (headers && fromObject) {
    for (const key in headers) {
      if (Object.hasOwn(headers, key) && !processHeader(res, key, headers[key], true)) {
        return NEEDS_NODE;
      }
    }
  } else if (headers) {
    for (const key in headers) {
      const entry = headers[key];
      if (!processHeader(res, entry[0], entry[1], false)) return NEEDS_NODE;
    }
  }
  // An Expect header makes node send the head at once; rare, leave it to node.
  if (state.expect) return NEEDS_NODE;

  let flags = 0;
  if (res.sendDate && !state.date) flags |= R_DATE;
  if (res.chunkedEncoding && (statusCode === 204 || statusCode === 304)) {
    res.chunkedEncoding = false;
    res.shouldKeepAlive = false;
  }
  if (res._removedConnection) {
    res._last = !res.shouldKeepAlive;
  } else if (!state.connection) {
    const shouldSendKeepAlive = res.shouldKeepAlive &&
      (state.contLen || res.useChunkedEncodingByDefault || res.agent);
    if (shouldSendKeepAlive && res.maxRequestsOnConnectionReached) {
      flags |= R_CONN_CLOSE;
    } else if (shouldSendKeepAlive) {
      flags |= R_CONN_KEEP_ALIVE;
      if (res._keepAliveTimeout && res._defaultKeepAlive) flags |= R_KA_TIMEOUT;
    } else {
      res._last = true;
      flags |= R_CONN_CLOSE;
    }
  }
  if (!state.contLen && !state.te) {
    if (!res._hasBody) {
      res.chunkedEncoding = false;
    } else if (!res.useChunkedEncodingByDefault) {
      res._last = true;
    } else if (!state.trailer && !res._removedContLen && typeof res._contentLength === 'number') {
      flags |= R_CONTENT_LENGTH;
    } else if (!res._removedTE) {
      flags |= R_CHUNKED;
      res.chunkedEncoding = true;
    } else {
      res._last = true;
    }
  }
  if (res.chunkedEncoding !== true && state.trailer) throw errors.ERR_HTTP_TRAILER_INVALID();
  return { lines: state.lines, flags: flags | bodyFlags(res), reason };
}

/** Body framing and connection flags once the head is decided. */
function bodyFlags(res) {
  let flags = 0;
  if (!res._hasBody) flags |= R_NO_BODY;
  else if (res.chunkedEncoding) flags |= R_FRAME;
  if (res._last) flags |= R_CLOSE_AFTER;
  return flags;
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
    if (flags & R_KA_TIMEOUT) {
      const max = ~~res._maxRequestsPerSocket > 0 ? `, max=${res._maxRequestsPerSocket}` : '';
      text += `Keep-Alive: timeout=${Math.floor(res._keepAliveTimeout / 1000)}${max}\r\n`;
    }
  } else if (flags & R_CONN_CLOSE) {
    text += 'Connection: close\r\n';
  }
  if (flags & R_CONTENT_LENGTH) text += `Content-Length: ${res._contentLength}\r\n`;
  else if (flags & R_CHUNKED) text += 'Transfer-Encoding: chunked\r\n';
  return text + '\r\n';
}

module.exports = { implicitHead, explicitHead, headText, bodyFlags, checkName, checkValue };
