'use strict';
// ServerResponse: node's own class and state. One fast path: `end()` of a response that has
// not written anything yet goes to the addon in a single call (head + body + framing), then
// node's own end() does the bookkeeping ('prefinish', 'finish', callbacks); writeHead() with
// a headers object only decides the head for that call, and setHeader() keeps node's checks
// with a faster store. Everything else (write(), streaming, trailers, cork, ...) is node's
// code writing through the socket.
const { isUint8Array } = require('node:util/types');
const { FastSocket, kLazy } = require('./socket');
const {
  NodeServerResponse, nodeEnd, kCorked, kOutHeaders, sameInstances,
} = require('../internal/node-internals');
const { binding } = require('../internal/native');
const { kId, kSeq, kProgress, kMode, kState, kHead, kConn } = require('../internal/symbols');
const {
  implicitHead, explicitHead, headText, headLength, bodyFlags, checkName, checkValue, lowerName,
} = require('./response-head');
const {
  R_NO_BODY, R_FRAME, R_UTF8_HEAD, L_CLOSE_AFTER, L_TENTATIVE,
} = require('../internal/native').flags;

/**
 * node writes the head together with the first body chunk when that chunk is a string
 * (`_send`: `this._header + data` in the chunk's encoding), so non-ASCII header text goes
 * out UTF-8 encoded then; with a Buffer body, no body, or chunked framing it goes out latin1.
 */
function headEncoding(res, body) {
  return typeof body === 'string' && res._hasBody && !res.chunkedEncoding ? R_UTF8_HEAD : 0;
}

/** A socket whose write() the app replaced sees node's writes through it. */
const socketWrite = FastSocket.prototype.write;

/**
 * How far fast-http took a response, in one small integer (kProgress): node's fields keep
 * the values node's own would have (`_header` a truthy text once a head exists, `headersSent`,
 * `finished`, `writableEnded`), and nothing of ours is read back from them.
 *
 * HEAD_NONE: fast-http holds no head; `_header`, when set, is node's own head text.
 * HEAD_DECIDED: writeHead() decided the head (kHead) without writing it; the one-call end()
 *   sends it with the body, anything else that sends first turns it into node's text.
 * HEAD_NATIVE: the addon wrote the head it was given as a decision.
 * ENDED_NATIVE (a flag on HEAD_NONE or HEAD_NATIVE): the addon took the whole response in
 *   one call; node's path wrote nothing of it, so it owes the addon no finish().
 */
const HEAD_NONE = 0;
const HEAD_DECIDED = 1;
const HEAD_NATIVE = 2;
const ENDED_NATIVE = 4;

/** `_header` once the addon wrote the head: truthy as node's text would be, never sent. */
const NATIVE_HEAD = 'HTTP/1.1 (written by fast-http)\r\n\r\n';

/** `_header` while the head is only decided (HEAD_DECIDED). */
const DECIDED_HEAD = 'HTTP/1.1 (decided by fast-http)\r\n\r\n';

/** Whether the addon took the whole response in end()'s one call (see ENDED_NATIVE). */
function endedNatively(res) {
  return (res[kProgress] & ENDED_NATIVE) !== 0;
}

const NodeResponseProto = NodeServerResponse.prototype;
const nodeWriteHead = NodeResponseProto.writeHead;
const nodeSetHeader = NodeResponseProto.setHeader;
const nodeGetHeader = NodeResponseProto.getHeader;
const nodeHasHeader = NodeResponseProto.hasHeader;
const nodeSend = NodeResponseProto._send;

// APM agents and spies wrap node's ServerResponse.prototype.writeHead / end and
// OutgoingMessage.prototype's setHeader / end (shimmer puts the wrapper on the prototype where
// it looks the method up). node's responses then run the wrapper; ours have their own methods
// in front of node's, which hand the call to what node's prototype has now when it is not
// node's method: the wrapper runs once per call, as on node:http, and the node method it
// calls does the work (node's path, no one-call end).

/**
 * A store without Object.prototype (a lookup of 'constructor' or 'toString' finds nothing, as
 * node relies on) that V8 keeps in fast mode. node makes its stores `{ __proto__: null }`,
 * which V8 keeps in dictionary mode: the first store of a response went through the runtime
 * (14 % of a setHeader + end request's CPU), iterating one built a key list, and every emit
 * looked its listeners up in a dictionary. Used for setHeader()'s kOutHeaders and for the
 * listener store (`_events`) of every response, as node's Readable and Writable preset theirs.
 */
function Store() {}
Store.prototype = Object.create(null);

/** Node 24's lenient header checks (httpValidation, --insecure-http-parser): node's path. */
function lenient(res) {
  return res._isLenientHeaderValidation !== undefined && res._isLenientHeaderValidation();
}

/**
 * node's ServerResponse, with the fast listener store preset (EventEmitter keeps it). A plain
 * function, as node's is: subclasses call it with `ServerResponse.call(this, req)`
 * (util.inherits, light-my-request).
 */
function ServerResponse(req, options) {
  this._events = new Store();
  this._eventsCount = 0;
  NodeServerResponse.call(this, req, options);
  this[kSeq] = -1;
  this[kConn] = null;
  this[kProgress] = HEAD_NONE;
  this[kHead] = null;
}
Object.setPrototypeOf(ServerResponse.prototype, NodeServerResponse.prototype);
Object.setPrototypeOf(ServerResponse, NodeServerResponse);
sameInstances(ServerResponse, NodeServerResponse);

/**
 * node's writeHead() for the common calls, `writeHead(status, [reason], [{headers}])` with no
 * headers object when headers were set before: the same checks and decisions, but the head
 * stays a decision until end() writes it with the body in one crossing (Bun fuses writeHead +
 * end the same way).
 */
ServerResponse.prototype.writeHead = function writeHead(statusCode, reason, obj) {
  const current = NodeResponseProto.writeHead;
  if (current !== nodeWriteHead) return current.apply(this, arguments);
  const headers = typeof reason === 'string' ? obj : (obj ?? reason);
  // Only a response fast-http's server made (kSeq) can leave its head undecided: others (a
  // subclass's response on another socket, light-my-request's) write node's head text.
  if (this[kSeq] < 0 || this._header || (this[kOutHeaders] && headers != null) ||
      Array.isArray(headers) ||
      (headers != null && typeof headers !== 'object') || lenient(this)) {
    return nodeWriteHead.apply(this, arguments);
  }
  const code = statusCode | 0;
  // node's own writeHead throws its own error.
  if (code < 100 || code > 999) return nodeWriteHead.apply(this, arguments);
  const reasonGiven = typeof reason === 'string';
  if (reasonGiven) this.statusMessage = reason;
  this.statusCode = code;
  const head = headers == null ? implicitHead(this, reasonGiven, true) :
    explicitHead(this, headers, reasonGiven);
  if (head === null) return nodeWriteHead.apply(this, arguments);
  this[kHead] = head;
  this[kProgress] = HEAD_DECIDED;
  this._header = DECIDED_HEAD;
  this._headerSent = false;
  return this;
};

const fastWriteHead = ServerResponse.prototype.writeHead;
const nodeImplicitHeader = NodeServerResponse.prototype._implicitHeader;

/**
 * Whether node's end() would run code the app put in place of writeHead (on the instance,
 * as `on-headers` does for express-session, morgan, compression...) or of _implicitHeader.
 */
function hooked(res) {
  return res.writeHead !== fastWriteHead || res._implicitHeader !== nodeImplicitHeader ||
    NodeResponseProto.writeHead !== nodeWriteHead;
}

/** node's setHeader, with the name and value checks remembered (see response-head.js). */
ServerResponse.prototype.setHeader = function setHeader(name, value) {
  const current = NodeResponseProto.setHeader;
  if (current !== nodeSetHeader) return current.call(this, name, value);
  if (this._header || typeof name !== 'string' || lenient(this)) {
    return nodeSetHeader.call(this, name, value);
  }
  checkName(name);
  checkValue(name, value);
  let headers = this[kOutHeaders];
  if (headers === null) this[kOutHeaders] = headers = new Store();
  headers[lowerName(name)] = [name, value];
  return this;
};

/** node's getHeader, with the name's lower case remembered. */
ServerResponse.prototype.getHeader = function getHeader(name) {
  const current = NodeResponseProto.getHeader;
  if (current !== nodeGetHeader || typeof name !== 'string') return current.call(this, name);
  const headers = this[kOutHeaders];
  if (headers === null) return undefined;
  return headers[lowerName(name)]?.[1];
};

/** node's hasHeader, with the name's lower case remembered. */
ServerResponse.prototype.hasHeader = function hasHeader(name) {
  const current = NodeResponseProto.hasHeader;
  if (current !== nodeHasHeader || typeof name !== 'string') return current.call(this, name);
  const headers = this[kOutHeaders];
  return headers !== null && !!headers[lowerName(name)];
};

ServerResponse.prototype._send = function _send(data, encoding, callback, byteLength) {
  if (this[kProgress] === HEAD_DECIDED) {
    this[kProgress] = HEAD_NONE;
    this._header = headText(this, this[kHead]);
  }
  return nodeSend.call(this, data, encoding, callback, byteLength);
};

/**
 * An encoding the one-call path takes as node's socket would. Any other ('buffer', an unknown
 * one) goes through node's end(), which writes the head before the socket's write() throws
 * ERR_UNKNOWN_ENCODING for an unknown one: headersSent is true then, and the head waits in
 * the corked socket for what the app does next.
 */
function plainEncoding(encoding) {
  return !encoding || encoding === 'utf8' || encoding === 'utf-8' || encoding === 'latin1' ||
    Buffer.isEncoding(encoding);
}

/**
 * Whether end() can hand the whole response to the addon in one call (head, body and
 * framing) instead of running node's end(): a response of fast-http's server whose socket is
 * its own, or that waits its turn on it, still speaking HTTP; nothing written or queued yet;
 * and nothing node's path would do differently (strictContentLength's check, a cork, an
 * app's socket.write, a chunk type or encoding only node's path handles or reports).
 */
function oneCallEnd(res, socket, waiting, chunk, encoding) {
  return !res.finished && !res._headerSent && socket !== null &&
    (socket._httpMessage === res || waiting) && socket[kMode] === 0 && !socket.destroyed &&
    (socket[kLazy] || !socket.writableEnded) &&
    res.outputData.length === 0 && !res.strictContentLength && !(res[kCorked] > 0) &&
    socket.write === socketWrite &&
    (!chunk || ((typeof chunk === 'string' || isUint8Array(chunk)) && plainEncoding(encoding)));
}

ServerResponse.prototype.end = function end(chunk, encoding, callback) {
  const current = NodeResponseProto.end;
  if (current !== nodeEnd) return current.apply(this, arguments);
  if (typeof chunk === 'function') {
    callback = chunk;
    chunk = null;
    encoding = null;
  } else if (typeof encoding === 'function') {
    callback = encoding;
    encoding = null;
  }
  // The response owns the socket, or waits its turn behind earlier pipelined ones: the
  // addon keeps responses in request order, so a waiting one can be written now too.
  let socket = this.socket;
  let waiting = false;
  if (socket === null) {
    socket = this[kConn] ?? this.req?.socket ?? null;
    waiting = socket !== null && socket[kState] != null && socket[kState].isWaiting(this);
  }
  if (!oneCallEnd(this, socket, waiting, chunk, encoding)) {
    return nodeEnd.call(this, chunk, encoding, callback);
  }
  let body;
  let len = 0;
  if (chunk) {
    if (typeof chunk !== 'string') {
      body = chunk;
      len = chunk.byteLength;
    } else if (encoding && encoding !== 'utf8' && encoding !== 'utf-8') {
      body = Buffer.from(chunk, encoding);
      len = body.length;
    } else {
      body = chunk;
      len = this._header ? 0 : Buffer.byteLength(chunk);
    }
  }
  const head = endHead(this, len);
  if (head === false) return nodeEnd.call(this, chunk, encoding, callback);
  const flags = writeNative(this, socket[kId], head, body, waiting);
  if (waiting) holdWaiting(this, head, chunk, encoding, flags);
  return endAfterNative(this, socket, waiting, callback);
};

/**
 * The head end()'s one call sends: writeHead()'s decision, or one made now as node's implicit
 * writeHead would; null when `_header` is node's own head text; false when node's end() must
 * run instead. `len`: the body's length, for a head decided now.
 */
function endHead(res, len) {
  if (res._header) return res[kProgress] === HEAD_DECIDED ? res[kHead] : null;
  res._contentLength = len;
  if (!hooked(res)) return implicitHead(res) ?? false;
  // node's end() goes through this._implicitHeader() → this.writeHead(statusCode).
  res._implicitHeader();
  if (res._headerSent || res.finished) return false;
  return res[kProgress] === HEAD_DECIDED ? res[kHead] : null;
}

/**
 * The one call: the decided head (or node's head text) with the body, framed. Nothing comes
 * back (a connection gone meanwhile reports itself with its close, as node's socket does):
 * returns the `R_*` flags sent.
 */
function writeNative(res, id, head, body, waiting) {
  const life = (res._last ? L_CLOSE_AFTER : 0) | (waiting ? L_TENTATIVE : 0);
  let flags;
  if (head !== null) {
    flags = head.flags | bodyFlags(res) | headEncoding(res, body);
    binding.respond(id, res[kSeq], res.statusCode, head.reason, head.lines,
      (flags & R_NO_BODY) ? undefined : body, flags, res._trailer, life);
    res._header = NATIVE_HEAD;
    res[kProgress] = HEAD_NATIVE | ENDED_NATIVE;
  } else {
    flags = bodyFlags(res) | headEncoding(res, body);
    binding.send(id, res[kSeq], res._header, (flags & R_NO_BODY) ? undefined : body, flags,
      res._trailer, life);
    res[kProgress] = ENDED_NATIVE;
  }
  res._headerSent = true;
  // The addon framed the body already: node's end() must not write the last chunk again.
  res.chunkedEncoding = false;
  return flags;
}

/**
 * Until its turn, node keeps a waiting response's bytes in outputData and its 'finish' behind
 * them: count them the same way, so node's end() queues 'finish' there and _flush() on
 * assignment releases it. They count toward the connection's pending output too (node's flood
 * protection pauses reading). node counts each piece's `.length` (a string's UTF-16 units):
 * the head text, and the body as end() writes it (one chunk and the last chunk when framed).
 */
function holdWaiting(res, head, chunk, encoding, flags) {
  let size = head === null ? res._header.length : headLength(res, head);
  const len = chunk ? chunk.length : 0;
  if (flags & R_NO_BODY) {
    // node's write_ drops a body the response must not have.
  } else if (flags & R_FRAME) {
    if (len > 0) {
      const bytes = typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding || 'utf8') :
        chunk.byteLength;
      size += bytes.toString(16).length + 2 + len + 2;
    }
    size += 5 + res._trailer.length;
  } else {
    size += len;
  }
  res.outputSize = size;
  res._onPendingData(size);
}

/** node's end() for the bookkeeping ('prefinish', 'finish', callbacks), with nothing to write. */
function endAfterNative(res, socket, waiting, callback) {
  if (waiting || !socket[kLazy]) return nodeEnd.call(res, null, null, callback);
  // node's end() fully uncorks the socket through its WritableState; a socket without
  // states was never corked, so end() runs detached from it (making no states), and the
  // step it skipped for want of a socket follows.
  res.socket = null;
  try {
    nodeEnd.call(res, null, null, callback);
  } finally {
    res.socket = socket;
  }
  if (res.outputData.length === 0 && socket._httpMessage === res) res._finish();
  return res;
}

module.exports = { ServerResponse, NATIVE_HEAD, endedNatively };
