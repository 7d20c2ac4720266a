'use strict';
// https.Server on the addon: fast-http's http Server (its own properties copied over) on node's
// https.Server prototype chain, so `instanceof https.Server` and `instanceof tls.Server` hold as
// for node's, with the TLS layer in the addon. Options the addon's TLS does not implement (see
// options.js) make createServer / `new Server` return node's own https.Server, which then
// serves everything as node does (counted as httpsFallbackServers in the stats line).
const https = require('node:https');
const { binding } = require('../internal/native');
const {
  Server: FastServer, initServer, fastPrototypes,
} = require('../http/server');
const { kNativeSid } = require('../http/listen');
const { sameInstances } = require('../internal/node-internals');
const errors = require('../internal/errors');
const { kSid, kTlsServer } = require('../internal/symbols');
const stats = require('../internal/stats');
const { nativeTls } = require('./options');
const { installTls } = require('./tls-socket');

const NodeHttpsServer = https.Server;

// Secure contexts live in the addon until freed; a server has no close that ends its life (it
// can listen again), so its context goes when the server is collected.
const contexts = new FinalizationRegistry((ctx) => {
  binding.tlsContextFree(ctx);
});

function Server(options, requestListener) {
  if (!(this instanceof Server)) return new Server(options, requestListener);
  if (typeof options === 'function') {
    requestListener = options;
    options = {};
  } else if (options == null) {
    options = {};
  } else if (typeof options !== 'object' || Array.isArray(options)) {
    throw errors.ERR_INVALID_ARG_TYPE('options', 'of type object', options);
  }
  const decided = nativeTls(options);
  let ctx = -1;
  if (decided !== null) {
    try {
      ctx = binding.tlsContextCreate(decided.spec);
    } catch {
      // Keys or certificates rustls does not take (e.g. DSA): node's server takes them.
    }
  }
  if (ctx < 0) {
    stats.httpsServerCreated(true);
    // A constructor returning an object makes `new Server()` that object.
    return new NodeHttpsServer(options, requestListener);
  }
  stats.httpsServerCreated(false);
  this[kTlsServer] = {
    ctx,
    config: { handshakeTimeout: decided.handshakeTimeout },
    requestCert: decided.requestCert,
    ownCert: decided.ownCert,
  };
  contexts.register(this, ctx);
  initServer.call(this, options, requestListener);
  // tls.Server's fields that code reads.
  this.requestCert = decided.requestCert;
  this.rejectUnauthorized = decided.rejectUnauthorized;
  // tls.Server's listener, which node's https server has: connections get their TLS surface
  // before 'secureConnection' listeners and requests see them.
  this.on('secureConnection', onSecureConnection);
  // node's https.Server: a failed handshake is a 'clientError' where someone listens.
  this.on('tlsClientError', function addListener(err, conn) {
    if (!this.emit('clientError', err, conn)) conn.destroy();
  });
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

function onSecureConnection(socket) {
  installTls(socket, this[kTlsServer].requestCert);
}

function createServer(options, requestListener) {
  return new Server(options, requestListener);
}

module.exports = { Server, createServer };
