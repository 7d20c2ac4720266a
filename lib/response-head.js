'use strict';
// The decisions node's ServerResponse#writeHead(this.statusCode) + _storeHeader make for an
// implicit head (lib/_http_outgoing.js, lib/_http_server.js), ported so the addon can write
// the head: the user's header lines come back as one string, and what node would append
// (Date, Connection, Keep-Alive, Content-Length, Transfer-Encoding) as flag bits.
const {
  R_DATE, R_CONN_KEEP_ALIVE, R_CONN_CLOSE, R_CONTENT_LENGTH,
  R_CHUNKED, R_NO_BODY, R_CLOSE_AFTER, R_KA_TIMEOUT,
  R_FRAME,
} = require('./flags');
const {
  STATUS_CODES, kOutHeaders, kUniqueHeaders,
} = require('./node-internals');
const errors = require('./errors');

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
  if (field.length < 4 || field.length > 17) return;
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

function storeHeader(res, key, value) {
  state.lines += key + ': ' + value + '\r\n';
  matchHeader(res, key, value);
}

/** Returns false when node's own path must take over. */
function processHeader(res, key, value) {
  if (key.length === 19 && res._contentLength && key.toLowerCase() === 'content-disposition') {
    return false;
  }
  if (Array.isArray(value)) {
    if ((value.length < 2 || !(key.length === 6 && key.toLowerCase() === 'cookie')) &&
        (!res[kUniqueHeaders] || !res[kUniqueHeaders].has(key.toLowerCase()))) {
      for (let i = 0; i < value.length; i++) storeHeader(res, key, value[i]);
      return true;
    }
    value = value.join('; ');
  }
  storeHeader(res, key, value);
  return true;
}

/**
 * For `res.end()` before any head was written: validates and updates `res` exactly as node's
 * implicit writeHead would, and returns `{ lines, flags, reason }`, or NEEDS_NODE.
 */
function implicitHead(res) {
  const original = res.statusCode;
  const statusCode = original | 0;
  if (statusCode < 100 || statusCode > 999) {
    throw errors.ERR_HTTP_INVALID_STATUS_CODE(original);
  }
  let reason = null;
  if (!res.statusMessage) {
    res.statusMessage = STATUS_CODES[statusCode] || 'unknown';
  } else {
    reason = res.statusMessage;
  }
  res.statusCode = statusCode;
  if (headerCharRegex.test(res.statusMessage)) throw errors.ERR_INVALID_CHAR('statusMessage');
  if (statusCode === 204 || statusCode === 304 || (statusCode >= 100 && statusCode <= 199)) {
    res._hasBody = false;
  }
  if (res._expect_continue && !res._sent100) res.shouldKeepAlive = false;

  state.connection = state.contLen = state.te = state.date = state.expect = state.trailer = false;
  state.lines = '';
  const headers = res[kOutHeaders];
  if (headers) {
    for (const key in headers) {
      const entry = headers[key];
      if (!processHeader(res, entry[0], entry[1])) return NEEDS_NODE;
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

module.exports = { implicitHead, bodyFlags };
