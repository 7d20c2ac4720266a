'use strict';
// The tls.TLSSocket surface of an https server's connections: the facade socket of a
// connection whose handshake completed gets this prototype and TLSSocket's own fields, so code
// that reads `req.socket.encrypted`, getPeerCertificate(), getCipher(), ... sees what node
// shows, and `instanceof tls.TLSSocket` holds. The prototype is FastSocket's chain down to
// net.Socket (its classes' own properties, copied) on tls.TLSSocket.prototype, with
// TLSSocket's methods answered from the addon's TLS session: TLSSocket overrides nothing of
// net.Socket's that the facade inherits (only the client-side kReinitializeHandle), and its
// methods not answered here find no handle (`_handle` is null) and answer as node's do then.
const net = require('node:net');
const tls = require('node:tls');
const { X509Certificate } = require('node:crypto');
const { FastSocket } = require('../http/socket');
const { kTlsSession, kTlsServer, kId } = require('../internal/symbols');
const { binding } = require('../internal/native');
const errors = require('../internal/errors');

/** node's legacy certificate object for DER bytes (translatePeerCertificate's shape). */
function legacyObject(der) {
  const x509 = new X509Certificate(der);
  if (typeof x509.toLegacyObject === 'function') return x509.toLegacyObject();
  return { raw: x509.raw, subject: x509.subject, issuer: x509.issuer,
    valid_from: x509.validFrom, valid_to: x509.validTo, fingerprint: x509.fingerprint,
    fingerprint256: x509.fingerprint256, serialNumber: x509.serialNumber };
}

const proto = Object.create(tls.TLSSocket.prototype);
const chain = [];
for (let p = FastSocket.prototype; p !== net.Socket.prototype; p = Object.getPrototypeOf(p)) {
  chain.unshift(p);
}
for (const p of chain) {
  for (const key of Reflect.ownKeys(p)) {
    // `constructor` stays TLSSocket, as a node https connection's.
    if (key !== 'constructor') {
      Object.defineProperty(proto, key, Object.getOwnPropertyDescriptor(p, key));
    }
  }
}

proto.getProtocol = function getProtocol() {
  return this[kTlsSession]?.protocol ?? null;
};

proto.getCipher = function getCipher() {
  const s = this[kTlsSession];
  if (s === undefined) return {};
  // SSL_CIPHER_get_version: the first protocol with the suite; every suite rustls has for
  // TLS 1.2 (AEAD ones) came with TLS 1.2.
  return { name: s.cipherName, standardName: s.standardName, version: s.protocol };
};

proto.isSessionReused = function isSessionReused() {
  return this[kTlsSession]?.resumed === true;
};

proto.getPeerCertificate = function getPeerCertificate(detailed) {
  const chain = this[kTlsSession]?.peerChain;
  if (chain === undefined || chain.length === 0) return {};
  if (!detailed) return legacyObject(chain[0]);
  // Each certificate's issuerCertificate is the next; a self-signed last one is its own.
  const certs = chain.map(legacyObject);
  for (let i = 0; i + 1 < certs.length; i++) certs[i].issuerCertificate = certs[i + 1];
  let last = certs[certs.length - 1];
  if (last.issuer !== undefined && !isSameName(last.issuer, last.subject)) {
    // node's GetLastIssuedCert: the chain goes on with the issuers the server's store has
    // (SSL_CTX_get_issuer: its `ca`, or the default roots), as when the client sent its
    // leaf alone.
    let x509 = new X509Certificate(chain[chain.length - 1]);
    for (let depth = 0; depth < 100; depth++) {
      const issuer = trusted(this.server).find((ca) => x509.checkIssued(ca));
      if (issuer === undefined) break;
      const next = legacyObject(issuer.raw);
      last.issuerCertificate = next;
      last = next;
      if (issuer === x509 || isSameName(last.issuer, last.subject)) break;
      x509 = issuer;
    }
  }
  if (last.issuer !== undefined && isSameName(last.issuer, last.subject)) {
    last.issuerCertificate = last;
  }
  return certs[0];
};

const PEM_CERT = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;
const trustCache = new WeakMap();

/** The certificates of `server`'s client-certificate store (`ca`, else default roots). */
function trusted(server) {
  const spec = server?.[kTlsServer]?.spec;
  if (spec === undefined) return [];
  let list = trustCache.get(spec);
  if (list === undefined) {
    list = [];
    for (const blob of [...(spec.ca ?? []), ...(spec.roots ?? [])]) {
      const text = blob.toString('latin1');
      const pems = text.includes('-----BEGIN') ? text.match(PEM_CERT) ?? [] : [blob];
      for (const one of pems) {
        try {
          list.push(new X509Certificate(one));
        } catch {
          // OpenSSL's store skips what it cannot read, too.
        }
      }
    }
    trustCache.set(spec, list);
  }
  return list;
}

function isSameName(a, b) {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => String(a[k]) === String(b[k]));
}

proto.getPeerX509Certificate = function getPeerX509Certificate() {
  const chain = this[kTlsSession]?.peerChain;
  return chain === undefined || chain.length === 0 ? undefined : new X509Certificate(chain[0]);
};

proto.getCertificate = function getCertificate() {
  const own = this.server?.[kTlsServer]?.ownCert;
  return own === undefined ? null : legacyObject(own);
};

proto.getX509Certificate = function getX509Certificate() {
  const own = this.server?.[kTlsServer]?.ownCert;
  return own === undefined ? undefined : new X509Certificate(own);
};

// The addon keeps sessions to itself (tickets are resumed natively): no session object to
// hand out, as a TLSSocket without one answers.
proto.getSession = function getSession() {
  return undefined;
};

proto.getTLSTicket = function getTLSTicket() {
  return undefined;
};

// TLSSocket's own method (node's argument checks and ERR_TLS_INVALID_STATE before the
// handshake), run against a stand-in handle whose keying material comes from the addon.
const exportKeyingMaterial = tls.TLSSocket.prototype.exportKeyingMaterial;
proto.exportKeyingMaterial = function exportKeyingMaterial_(length, label, context) {
  const id = this[kId];
  const handle = {
    exportKeyingMaterial: (n, l, c) => binding.tlsExportKeyingMaterial(id, n, l, c),
  };
  return Reflect.apply(exportKeyingMaterial,
    { _secureEstablished: this._secureEstablished, _handle: handle }, arguments);
};

// TLSSocket's own method (node's argument checks, its answer on a destroyed socket) against a
// stand-in handle whose renegotiation fails as OpenSSL's does where it cannot renegotiate:
// TLS 1.3 has none (wrong ssl version); rustls has none for TLS 1.2 either, as node's
// server with SSL_OP_NO_RENEGOTIATION (no renegotiation). False, and the callback gets the
// error on the next tick.
const renegotiate = tls.TLSSocket.prototype.renegotiate;
proto.renegotiate = function renegotiate_(options, callback) {
  const socket = this;
  const handle = {
    setVerifyMode() {},
    verifyError() {},
    renegotiate() {
      throw socket.getProtocol() === 'TLSv1.3' ?
        errors.opensslError('error:0A00010A:SSL routines::wrong ssl version',
          'ERR_SSL_WRONG_SSL_VERSION') :
        errors.opensslError('error:0A000153:SSL routines::no renegotiation',
          'ERR_SSL_NO_RENEGOTIATION');
    },
  };
  return Reflect.apply(renegotiate, {
    _tlsOptions: { isServer: true },
    _handle: handle,
    destroyed: this.destroyed,
    _requestCert: this._requestCert,
    _rejectUnauthorized: this._rejectUnauthorized,
    // node's write('') cycles OpenSSL's state; there is none to cycle here.
    write() {},
  }, arguments);
};

proto.getEphemeralKeyInfo = function getEphemeralKeyInfo() {
  // node's answer on the server side.
  return {};
};

// OpenSSL keeps the servername of a TLS 1.2 session a ticket resumes only when node's SNI
// callback accepted it in the first handshake; node 22 and 24 do (getServername() is the
// name again on resumption), node 20 and 26 do not (false), as measured on each.
const major = Number(process.versions.node.split('.')[0]);
const SNI_KEPT_ON_RESUME = major === 22 || major === 24;

/**
 * Gives `socket` the TLSSocket prototype. Called once its TLS fields are set: on Node 20 and 22
 * (V8 11, 12) a property added after Object.setPrototypeOf gives the object a map and
 * descriptor array of its own, 830 B of JS heap per idle TLS connection (the sampling heap
 * profiler over 2,000 idle connections; test/https/shared-shape.test.js).
 */
function asTlsSocket(socket) {
  if (Object.getPrototypeOf(socket) === FastSocket.prototype) {
    Object.setPrototypeOf(socket, proto);
  }
}

/**
 * Makes `socket` (a connection of an https server whose handshake failed) show the TLSSocket
 * surface with the fields TLSSocket's constructor sets: node's 'tlsClientError' and
 * 'clientError' get the TLSSocket, before any handshake completed.
 */
function installPendingTls(socket) {
  socket._secureEstablished = false;
  socket.encrypted = true;
  if (socket.servername === undefined) socket.servername = null;
  if (socket.alpnProtocol === undefined) socket.alpnProtocol = null;
  socket.authorized = false;
  socket.authorizationError = null;
  asTlsSocket(socket);
}

/**
 * Makes `socket` (a connection of an https server whose handshake just completed) show the
 * TLSSocket surface, with the fields node's onServerSocketSecure sets.
 */
function installTls(socket, requestCert) {
  const s = socket[kTlsSession];
  socket._secureEstablished = true;
  socket.encrypted = true;
  socket.alpnProtocol = s.alpnProtocol;
  socket.servername = s.resumed && s.protocol !== 'TLSv1.3' && !SNI_KEPT_ON_RESUME ?
    false : s.servername;
  socket.authorized = false;
  socket.authorizationError = null;
  if (requestCert) {
    if (s.authorizationError === false) socket.authorized = true;
    else socket.authorizationError = s.authorizationError;
  }
  asTlsSocket(socket);
}

module.exports = { installTls, installPendingTls };
