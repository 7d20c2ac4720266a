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
  kProgress: Symbol('fast-http.responseProgress'),
  kMode: Symbol('fast-http.socketMode'),
  kPendingWrites: Symbol('fast-http.pendingWrites'),
  kAddress: Symbol('fast-http.address'),
  kClosed: Symbol('fast-http.closed'),
  kReadPaused: Symbol('fast-http.readPaused'),
  kTapping: Symbol('fast-http.tapping'),
  kBodyReq: Symbol('fast-http.bodyRequest'),
  kShadow: Symbol('fast-http.shadowServer'),
  /** A server's maker of its hidden node server (https: one with the same TLS options). */
  kMakeShadow: Symbol('fast-http.makeShadow'),
  kFallbackSockets: Symbol('fast-http.fallbackSockets'),
  kListening: Symbol('fast-http.listening'),
  kEagerHeaders: Symbol('fast-http.eagerHeaders'),
  kParser: Symbol('fast-http.parser'),
  kIncoming: Symbol('fast-http.incoming'),
  kHead: Symbol('fast-http.decidedHead'),
  kUpgradeCallback: Symbol('fast-http.shouldUpgradeCallback'),
  kAsking: Symbol('fast-http.askingUpgrade'),
  // (socket, servername, protocols) => void: a TLS server's SNICallback / ALPNCallback,
  // answered with tlsSniAnswer.
  kSniRequest: Symbol('fast-http.sniRequest'),
  kHandOff: Symbol('fast-http.handOff'),
  kTlsSocket: Symbol('fast-http.tlsSocket'),
  kTlsToNode: Symbol('fast-http.tlsToNode'),
  // node's TLSSocket tells 'tlsClientError' once (kErrorEmitted in _tls_wrap).
  kTlsErrorEmitted: Symbol('fast-http.tlsErrorEmitted'),
  kUpgradeReq: Symbol('fast-http.upgradeRequest'),
  kUpgradeStream: Symbol('fast-http.upgradeStream'),
  kSocket: Symbol('fast-http.socket'),
  /**
   * A response's connection (its socket facade), from the request's arrival on: node's
   * resOnFinish and updateOutgoingData hold it in their closures, since `req.socket` is null
   * once stream.pipeline's destroyer (or an app) detached it, and `res.socket` while waiting.
   */
  kConn: Symbol('fast-http.connection'),
  kRequest: Symbol('fast-http.request'),
  kTlsSession: Symbol('fast-http.tlsSession'),
  kTlsServer: Symbol('fast-http.tlsServer'),
  /** An https server's method that gives a connection its TLSSocket surface. */
  kSecureSocket: Symbol('fast-http.secureSocket'),
  /** The server's `emit` when its always-emitted events were last decided (server.js). */
  kEmitSeen: Symbol('fast-http.emitSeen'),
  /**
   * A server's method its sockets call when destroyed (net.Socket's _destroy calls the
   * server's _emitCloseIfDrained): a closing server's 'close' is due a tick later.
   */
  kConnectionGone: Symbol('fast-http.connectionGone'),
  /** A listening server's stand-in for node's TCP handle (lib/http/open-handles.js). */
  kHandleResource: Symbol('fast-http.handleResource'),
  /** A connection's async resource has the ids of the addon's context for it. */
  kAdopted: Symbol('fast-http.adopted'),
  /** A connection's async resource's own id: its TCPWRAP's (0 once destroyed). */
  kHandleId: Symbol('fast-http.handleId'),
  /** A server's method that re-decides them when `emit` changed. */
  kWatchEmit: Symbol('fast-http.watchEmit'),
  /** The prototypes a server's requests and responses are born with (born-with.js). */
  kBornWith: Symbol('fast-http.bornWith'),
};
