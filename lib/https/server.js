'use strict';
// https.Server on the addon: fast-http's http Server (its own properties copied over) on node's
// https.Server prototype chain, so `instanceof https.Server` and `instanceof tls.Server` hold as
// for node's, with the TLS layer in the addon. Options the addon's TLS does not implement (see
// options.js) make createServer / `new Server` return node's own https.Server, which then
// serves everything as node does: the reason is printed once per process, shown as the
// server's `fastHttp.reason` and counted in the stats line (httpsFallbackServers, -Reasons).
const https = require('node:https');
const tls = require('node:tls');
const { createHash } = require('node:crypto');
const { binding } = require('../internal/native');
const {
  SNI_FAILED, SNI_SERVER_CONTEXT, ALPN_NOT_ASKED, ALPN_NONE,
} = require('../internal/native').constants;
const {
  Server: FastServer, initServer, serverArgs, fastPrototypes, tlsToNode,
} = require('../http/server');
const { shadowOf } = require('../http/fallback');
const { kNativeSid } = require('../http/listen');
const { sameInstances } = require('../internal/node-internals');
const errors = require('../internal/errors');
const {
  kSid, kTlsServer, kSecureSocket, kSniRequest, kId, kConfig, kMakeShadow, kShadow, kHandOff,
} = require('../internal/symbols');
const { S_SNI_CALLBACK, S_ALPN_CALLBACK } = require('../internal/native').flags;
const stats = require('../internal/stats');
const { nativeTls } = require('./options');
const { installTls, installPendingTls } = require('./tls-socket');
const { optionsOf } = require('./secure-contexts');
const { handOff } = require('./hand-off');

const NodeHttpsServer = https.Server;

// Secure contexts live in the addon until freed; a server has no close that ends its life (it
// can listen again), so its contexts go when the server is collected.
const contexts = new FinalizationRegistry((state) => {
  binding.tlsContextFree(state.ctx);
  for (const [, other] of state.added) binding.tlsContextFree(other);
  for (const other of state.sniContexts) binding.tlsContextFree(other);
});

/** node's own https server for options the native TLS lacks, told as `reason` says. */
function nodeServes(options, requestListener, reason) {
  // Made first: options node's constructor refuses make no server, and no line.
  const server = new NodeHttpsServer(options, requestListener);
  Object.defineProperty(server, 'fastHttp', {
    __proto__: null, configurable: true, writable: true,
    value: Object.freeze({ native: false, reason }),
  });
  // One line per distinct reason: an app making many such servers is told once.
  if (stats.httpsServerCreated(reason)) {
    process.stderr.write(`fast-http: an https server runs on node's own TLS (${reason}).\n`);
  }
  return server;
}

function Server(options, requestListener) {
  if (!(this instanceof Server)) return new Server(options, requestListener);
  [options, requestListener] = serverArgs(options, requestListener);
  const decided = nativeTls(options);
  // A constructor returning an object makes `new Server()` that object.
  if (typeof decided === 'string') return nodeServes(options, requestListener, decided);
  let ctx;
  try {
    ctx = binding.tlsContextCreate(decided.spec);
  } catch (err) {
    // Keys or certificates rustls does not take (e.g. DSA): node's server takes them.
    return nodeServes(options, requestListener, 'https option key / cert: fast-http\'s TLS ' +
      `(rustls) cannot use them (${err.message}; DSA keys, for one, it cannot sign with); ` +
      'with RSA or ECDSA keys the server is fast-http\'s');
  }
  stats.httpsServerCreated(null);
  const state = this[kTlsServer] = {
    ctx,
    // For the node https server that serves sockets handed over with emit('connection').
    options: { ...options },
    spec: decided.spec,
    // addContext's [servername, context]s, which a setSecureContext keeps.
    added: [],
    config: { handshakeTimeout: decided.handshakeTimeout },
    requestCert: decided.requestCert,
    ownCert: decided.ownCert,
    // SNICallback's contexts, made once per SecureContext it answers with.
    sni: new WeakMap(),
    sniContexts: [],
  };
  contexts.register(this, state);
  initServer.call(this, options, requestListener);
  // tls.Server's fields (its constructor's, then setSecureContext's), which code reads.
  this._contexts = [];
  this.requestCert = decided.requestCert;
  this.rejectUnauthorized = decided.rejectUnauthorized;
  if (typeof options.SNICallback === 'function') {
    this._SNICallback = options.SNICallback;
    this[kSniRequest] = sniRequest;
    this[kConfig].flags |= S_SNI_CALLBACK;
  }
  this.ALPNCallback = options.ALPNCallback;
  if (typeof options.ALPNCallback === 'function') {
    this[kSniRequest] = sniRequest;
    this[kConfig].flags |= S_ALPN_CALLBACK;
  }
  if (options.sessionTimeout) this.sessionTimeout = options.sessionTimeout;
  if (options.ticketKeys) this.ticketKeys = options.ticketKeys;
  // https.Server's default is spread under the options: an own ALPNProtocols, even
  // undefined, replaces it.
  const alpn = 'ALPNProtocols' in options || options.ALPNCallback ?
    options.ALPNProtocols : DEFAULT_ALPN;
  if (alpn) tls.convertALPNProtocols(alpn, this);
  setTlsFields(this, options);
  // tls.Server's 'secureConnection' listener (node's https server serves HTTP from it), so
  // the listener count is node's; the TLS surface is given before the event (kSecureSocket).
  this.on('secureConnection', onSecureConnection);
  // node's https.Server: a failed handshake is a 'clientError' where someone listens.
  this.on('tlsClientError', function addListener(err, conn) {
    if (!this.emit('clientError', err, conn)) conn.destroy();
  });
}

const DEFAULT_ALPN = ['http/1.1'];
let defaultSessionIdContext;

/** The fields tls.Server's setSecureContext sets from `options` (all but _sharedCreds). */
function setTlsFields(server, options) {
  server.pfx = options.pfx || undefined;
  server.key = options.key || undefined;
  server.passphrase = options.passphrase || undefined;
  server.cert = options.cert || undefined;
  server.clientCertEngine = options.clientCertEngine || undefined;
  server.ca = options.ca || undefined;
  server.minVersion = options.minVersion || undefined;
  server.maxVersion = options.maxVersion || undefined;
  server.secureProtocol = options.secureProtocol || undefined;
  server.crl = options.crl || undefined;
  server.sigalgs = options.sigalgs;
  server.ciphers = options.ciphers || undefined;
  server.ecdhCurve = options.ecdhCurve;
  server.dhparam = options.dhparam || undefined;
  server.honorCipherOrder = options.honorCipherOrder !== undefined ?
    !!options.honorCipherOrder : true;
  server.secureOptions = options.secureOptions || undefined;
  // node's default: the process's command line, hashed (set once per process).
  defaultSessionIdContext ??= createHash('sha1').update(process.argv.join(' ')).digest('hex')
    .slice(0, 32);
  server.sessionIdContext = options.sessionIdContext || defaultSessionIdContext;
  if (options.sessionTimeout) server.sessionTimeout = options.sessionTimeout;
  if (options.ticketKeys) server.ticketKeys = options.ticketKeys;
  server.privateKeyIdentifier = options.privateKeyIdentifier;
  server.privateKeyEngine = options.privateKeyEngine;
}

// Server.prototype's own properties (listen, close, the settings' accessors, ...) on node's
// https.Server chain, where node's https.Server has http.Server's.
for (const key of Reflect.ownKeys(FastServer.prototype)) {
  if (key === 'constructor') continue;
  Object.defineProperty(Server.prototype, key,
    Object.getOwnPropertyDescriptor(FastServer.prototype, key));
}
Object.setPrototypeOf(Server.prototype, NodeHttpsServer.prototype);
Object.setPrototypeOf(Server, NodeHttpsServer);
sameInstances(Server, NodeHttpsServer);
fastPrototypes.push(Server.prototype);

// The addon's half of the server is made when it listens: it gets the TLS context then.
Server.prototype[kNativeSid] = function nativeSid() {
  const fresh = this[kSid] < 0;
  const sid = FastServer.prototype[kNativeSid].call(this);
  if (fresh) {
    const t = this[kTlsServer];
    binding.serverSetTls(sid, t.ctx);
    binding.serverConfig(sid, t.config);
  }
  return sid;
};

/**
 * A context the addon makes from tls.createSecureContext options, for addContext and
 * setSecureContext; throws where it needs node's TLS (a SecureContext object, pfx, ciphers,
 * ...), which a server made without such options does not have.
 */
function contextFrom(method, options, spec) {
  const proto = options !== null && typeof options === 'object' ?
    Object.getPrototypeOf(options) : undefined;
  // A SecureContext (tls.createSecureContext's) keeps its keys inside OpenSSL: the options it
  // was made with are what the addon can take.
  const plain = proto === Object.prototype || proto === null;
  const from = plain ? options.secureContext === undefined ? options :
    optionsOf(options.secureContext) : optionsOf(options);
  const decided = from === undefined ? 'a SecureContext whose options fast-http did not see'
    : nativeTls(from);
  if (typeof decided === 'string') {
    const err = new Error(`${method}: these options need node's own TLS (${decided}), which ` +
      'this server does not use (fast-http chose its native TLS from the options ' +
      'createServer had)');
    err.code = 'ERR_FAST_HTTP_TLS';
    throw err;
  }
  const ctx = binding.tlsContextCreate({ ...spec, pairs: decided.spec.pairs, ca: decided.spec.ca });
  return { ctx, ownCert: decided.ownCert };
}

// tls.Server's addContext: the context's keys are served to clients asking for `servername`
// (the addon matches names as node does, wildcards included).
Server.prototype.addContext = function addContext(servername, context) {
  if (!servername) throw errors.ERR_TLS_REQUIRED_SERVER_NAME();
  const state = this[kTlsServer];
  const other = contextFrom('addContext', context, state.spec).ctx;
  state.added.push([servername, other, context]);
  binding.tlsAddContext(state.ctx, servername, exactCase(), other);
  this[kShadow]?.addContext(servername, context);
};

let addContextExactCase;
/** Whether node's addContext matches names case-sensitively (Node 20; from 22 its `i` flag). */
function exactCase() {
  if (addContextExactCase === undefined) {
    const probe = { _contexts: [] };
    tls.Server.prototype.addContext.call(probe, 'A', tls.createSecureContext());
    addContextExactCase = !probe._contexts[0][0].flags.includes('i');
  }
  return addContextExactCase;
}

// tls.Server's setSecureContext: new keys / certificates for the next connections.
Server.prototype.setSecureContext = function setSecureContext(options) {
  if (options === null || typeof options !== 'object') {
    throw errors.ERR_INVALID_ARG_TYPE('options', 'of type object', options);
  }
  const state = this[kTlsServer];
  const { ctx, ownCert } = contextFrom('setSecureContext', options, state.spec);
  for (const [servername, other] of state.added) {
    binding.tlsAddContext(ctx, servername, exactCase(), other);
  }
  // Connections made with the old context keep it (the addon holds it for them).
  binding.tlsContextFree(state.ctx);
  state.ctx = ctx;
  state.ownCert = ownCert;
  setTlsFields(this, options);
  if (this[kSid] >= 0) binding.serverSetTls(this[kSid], ctx);
  // Handed-over sockets get the new keys too.
  state.options = { ...state.options, ...options };
  this[kShadow]?.setSecureContext(options);
};

/**
 * tls.Server's loadSNI for a ClientHello that named `servername` ("" for none): the app's
 * SNICallback chooses the context (a SecureContext, or nothing for the server's own); then,
 * for a ClientHello that offered ALPN `protocols` (as on the wire), the app's ALPNCallback
 * chooses the protocol, as OpenSSL asks it after the SNI callback. The handshake waits in the
 * addon until both have answered. An error, or a context the addon cannot serve, fails the
 * handshake with 'tlsClientError', as node's does with the callback's error.
 */
function sniRequest(socket, servername, protocols) {
  const server = this;
  const id = socket[kId];
  let answered = false;
  const fail = (err) => {
    binding.tlsSniAnswer(id, SNI_FAILED, ALPN_NOT_ASKED);
    server.emit('tlsClientError', err, socket);
  };
  const answer = (err, context) => {
    if (answered) return;
    answered = true;
    if (err) {
      fail(err);
      return;
    }
    let ctx = SNI_SERVER_CONTEXT;
    if (context) {
      const state = server[kTlsServer];
      ctx = state.sni.get(context);
      if (ctx === undefined) {
        try {
          ctx = contextFrom('SNICallback', context, state.spec).ctx;
        } catch (e) {
          fail(e);
          return;
        }
        state.sni.set(context, ctx);
        state.sniContexts.push(ctx);
      }
    }
    let alpn;
    try {
      alpn = chooseAlpn(server, socket, servername, protocols);
    } catch (e) {
      fail(e);
      return;
    }
    binding.tlsSniAnswer(id, ctx, alpn);
  };
  if (servername && typeof this._SNICallback === 'function') {
    this._SNICallback(servername, answer);
  } else {
    answer(null, null);
  }
}

/**
 * _tls_wrap.js's callALPNCallback: the server's ALPNCallback, called on the socket with the
 * client's protocols, chooses one of them (its index), or none (ALPN_NONE: the handshake fails
 * with no_application_protocol); ALPN_NOT_ASKED when the ClientHello offered no ALPN.
 */
function chooseAlpn(server, socket, servername, protocolsBuffer) {
  if (!protocolsBuffer || protocolsBuffer.length === 0) return ALPN_NOT_ASKED;
  const protocols = [];
  for (let i = 0; i < protocolsBuffer.length; i++) {
    const length = protocolsBuffer[i];
    protocols.push(protocolsBuffer.toString('ascii', i + 1, i + 1 + length));
    i += length;
  }
  // node calls it on the TLSSocket, during its handshake.
  if (socket.encrypted !== true) server[kSecureSocket](socket, false);
  const selected = server.ALPNCallback.call(socket, { servername: servername || false, protocols });
  if (selected === undefined) return ALPN_NONE;
  const index = protocols.indexOf(selected);
  if (index === -1) throw errors.ERR_TLS_ALPN_CALLBACK_INVALID_RESULT(selected, protocols);
  return index;
}

// tls.Server's session ticket keys (48 bytes: name, HMAC and AES keys in node's layout; the
// addon seals tickets with them, so servers sharing keys resume each other's sessions).
Server.prototype.getTicketKeys = function getTicketKeys() {
  return binding.tlsGetTicketKeys(this[kTlsServer].ctx);
};

Server.prototype.setTicketKeys = function setTicketKeys(keys) {
  if (!ArrayBuffer.isView(keys)) {
    throw errors.ERR_INVALID_ARG_TYPE('buffer',
      'an instance of Buffer, TypedArray, or DataView', keys);
  }
  if (keys.byteLength !== 48) {
    throw errors.ERR_INTERNAL_ASSERTION('Session ticket keys must be a 48-byte buffer');
  }
  binding.tlsSetTicketKeys(this[kTlsServer].ctx,
    new Uint8Array(keys.buffer, keys.byteOffset, keys.byteLength));
};

// Sockets handed over with emit('connection') are served by node's https server, with this
// server's TLS options (the latest setSecureContext's keys included).
Server.prototype[kMakeShadow] = function makeShadow() {
  const state = this[kTlsServer];
  const shadow = new NodeHttpsServer(state.options);
  for (const [servername, , context] of state.added) shadow.addContext(servername, context);
  return shadow;
};

// tls.Server's OpenSSL context, which code reaches into for what node has no API for (ticket
// key callbacks, OpenSSL options): it is the hidden node:https server's, and from then on
// that server's TLS serves the new connections, so what is set on it holds for them.
Object.defineProperty(Server.prototype, '_sharedCreds', {
  __proto__: null,
  configurable: true,
  get() {
    tlsToNode(this);
    return shadowOf(this)._sharedCreds;
  },
  set(value) {
    Object.defineProperty(this, '_sharedCreds', {
      __proto__: null, configurable: true, enumerable: true, writable: true, value,
    });
  },
});

Server.prototype[kHandOff] = function handOffConnection(facade, fd, read) {
  handOff(this, facade, fd, read);
};

/** The TLSSocket surface for a connection whose handshake completed (`established`) or failed. */
Server.prototype[kSecureSocket] = function secureSocket(socket, established) {
  if (established) installTls(socket, this[kTlsServer].requestCert);
  else installPendingTls(socket);
};

function onSecureConnection() {}

Object.defineProperty(Server.prototype, 'fastHttp', {
  __proto__: null, configurable: true, writable: true, value: Object.freeze({ native: true }),
});

function createServer(options, requestListener) {
  return new Server(options, requestListener);
}

module.exports = { Server, createServer };
