'use strict';
// ServerResponse: node's own class and state. One fast path: `end()` of a response that has
// not written anything yet goes to the addon in a single call (head + body + framing), then
// node's own end() does the bookkeeping ('prefinish', 'finish', callbacks). Everything else
// (write(), streaming, trailers, cork, ...) is node's code writing through the socket.
const { isUint8Array } = require('node:util/types');
const { FastSocket } = require('./socket');
const {
  NodeServerResponse, nodeEnd, kCorked,
} = require('./node-internals');
const { binding } = require('./native');
const { kId, kSeq, kNativeDone, kMode, kState } = require('./symbols');
const { implicitHead, bodyFlags } = require('./response-head');
const { R_NO_BODY, R_TENTATIVE, R_UTF8_HEAD } = require('./flags');

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

/** Marks a head the addon wrote: `headersSent` is true, node's code must not send it again. */
const NATIVE_HEAD = 'HTTP/1.1 (written by fast-http)\r\n\r\n';

class ServerResponse extends NodeServerResponse {
  constructor(req, options) {
    super(req, options);
    this[kSeq] = -1;
    this[kNativeDone] = false;
  }

  end(chunk, encoding, callback) {
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
      socket = this.req?.socket ?? null;
      waiting = socket !== null && socket[kState] != null &&
        socket[kState].outgoing.includes(this);
    }
    if (this.finished || this._headerSent || socket === null ||
        (socket._httpMessage !== this && !waiting) || socket[kMode] !== 0 ||
        socket.destroyed || this.outputData.length !== 0 || this.strictContentLength ||
        this[kCorked] > 0 || socket.write !== socketWrite) {
      return nodeEnd.call(this, chunk, encoding, callback);
    }
    let body;
    let len = 0;
    if (chunk) {
      if (typeof chunk === 'string') {
        if (encoding && encoding !== 'utf8' && encoding !== 'utf-8') {
          body = Buffer.from(chunk, encoding);
          len = body.length;
        } else {
          body = chunk;
          len = this._header ? 0 : Buffer.byteLength(chunk);
        }
      } else if (isUint8Array(chunk)) {
        body = chunk;
        len = chunk.byteLength;
      } else {
        return nodeEnd.call(this, chunk, encoding, callback);
      }
    }
    const id = socket[kId];
    const seq = this[kSeq];
    let written;
    if (!this._header) {
      this._contentLength = len;
      const head = implicitHead(this);
      if (head === null) return nodeEnd.call(this, chunk, encoding, callback);
      const flags = head.flags | headEncoding(this, body) | (waiting ? R_TENTATIVE : 0);
      written = binding.respond(id, seq, this.statusCode, head.reason, head.lines, body, flags,
        this._trailer);
      this._header = NATIVE_HEAD;
    } else {
      const flags = bodyFlags(this) | headEncoding(this, body) | (waiting ? R_TENTATIVE : 0);
      written = binding.send(id, seq, this._header, (flags & R_NO_BODY) ? undefined : body, flags,
        this._trailer);
    }
    this[kNativeDone] = written >= 0;
    this._headerSent = true;
    // The addon framed the body already: node's end() must not write the last chunk again.
    this.chunkedEncoding = false;
    if (waiting && written > 0) {
      // Until its turn, node keeps a waiting response's bytes in outputData and its
      // 'finish' behind them: count the bytes the addon holds for it the same way, so
      // node's end() queues 'finish' there and _flush() on assignment releases it.
      this.outputSize = written;
    }
    return nodeEnd.call(this, null, null, callback);
  }
}

module.exports = { ServerResponse, NATIVE_HEAD };
