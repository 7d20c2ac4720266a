'use strict';
// fast-http's private state, one symbol per field, all in one place.

module.exports = {
  kId: Symbol('fast-http.connId'),
  kSeq: Symbol('fast-http.seq'),
  kSid: Symbol('fast-http.serverId'),
  kState: Symbol('fast-http.connState'),
  kConfig: Symbol('fast-http.config'),
  kHeaderBlock: Symbol('fast-http.headerBlock'),
  kRawHeaders: Symbol('fast-http.rawHeaders'),
  kTrailerBlock: Symbol('fast-http.trailerBlock'),
  kRawTrailers: Symbol('fast-http.rawTrailers'),
  kNativeDone: Symbol('fast-http.nativeDone'),
  kMode: Symbol('fast-http.socketMode'),
  kPendingWrites: Symbol('fast-http.pendingWrites'),
  kAddress: Symbol('fast-http.address'),
  kClosed: Symbol('fast-http.closed'),
  kReadPaused: Symbol('fast-http.readPaused'),
  kTapping: Symbol('fast-http.tapping'),
  kBodyReq: Symbol('fast-http.bodyRequest'),
  kShadow: Symbol('fast-http.shadowServer'),
  kFallbackSockets: Symbol('fast-http.fallbackSockets'),
  kListening: Symbol('fast-http.listening'),
  kEagerHeaders: Symbol('fast-http.eagerHeaders'),
  kParser: Symbol('fast-http.parser'),
  kIncoming: Symbol('fast-http.incoming'),
  kHead: Symbol('fast-http.decidedHead'),
};
