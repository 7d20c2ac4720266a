'use strict';
// node's `ciphers` (an OpenSSL cipher string) and `ecdhCurve` as the native TLS layer's suites
// and groups (IANA suite names, rustls+ring's groups). Only what maps exactly is mapped: any
// name, alias or operator whose meaning needs suites or groups the native layer does not have
// gives null, and the server is node's own (the fallback path).

// OpenSSL name -> IANA name, for the suites rustls+ring has.
const TLS13 = new Map([
  ['TLS_AES_256_GCM_SHA384', 'TLS_AES_256_GCM_SHA384'],
  ['TLS_CHACHA20_POLY1305_SHA256', 'TLS_CHACHA20_POLY1305_SHA256'],
  ['TLS_AES_128_GCM_SHA256', 'TLS_AES_128_GCM_SHA256'],
]);
const TLS12 = new Map([
  ['ECDHE-ECDSA-AES128-GCM-SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'],
  ['ECDHE-ECDSA-AES256-GCM-SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'],
  ['ECDHE-ECDSA-CHACHA20-POLY1305', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256'],
  ['ECDHE-RSA-AES128-GCM-SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'],
  ['ECDHE-RSA-AES256-GCM-SHA384', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384'],
  ['ECDHE-RSA-CHACHA20-POLY1305', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256'],
]);

// Aliases none of the suites above belong to: excluding them ('!aNULL') removes nothing here.
const DISJOINT = new Set([
  'aNULL', 'eNULL', 'NULL', 'COMPLEMENTOFDEFAULT', 'EXPORT', 'EXP', 'LOW', 'DES', '3DES', 'RC4',
  'RC2', 'MD5', 'PSK', 'SRP', 'CAMELLIA', 'IDEA', 'SEED', 'DSS', 'aDSS', 'ADH', 'AECDH', 'kDHE',
  'EDH', 'DHE', 'kRSA', 'aPSK', 'kPSK', 'ARIA', 'CCM', 'CCM8', 'SHA1',
]);

// node's default list (tls.DEFAULT_CIPHERS of Node 20-26) is the native layer's default: the
// suites of it rustls+ring has, in its order (HIGH adds the ChaCha20 ones last). Its other
// suites (DHE, CBC) are the difference the native transport has always had from node.
const NODE_DEFAULT = 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:' +
  'TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-GCM-SHA256:' +
  'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256:' +
  'ECDHE-RSA-AES128-SHA256:DHE-RSA-AES128-SHA256:ECDHE-RSA-AES256-SHA384:' +
  'DHE-RSA-AES256-SHA384:ECDHE-RSA-AES256-SHA256:DHE-RSA-AES256-SHA256:HIGH:!aNULL:!eNULL:' +
  '!EXPORT:!DES:!RC4:!MD5:!PSK:!SRP:!CAMELLIA';
const DEFAULT_SUITES = [
  'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
];

/** One item of a cipher string applied to the lists; false when it is not exact. */
function apply(item, v13, v12, banned) {
  // node hands these to SSL_CTX_set_ciphersuites, which takes plain names only.
  if (item.startsWith('TLS_')) {
    const name = TLS13.get(item);
    if (name === undefined) return false;
    if (!v13.includes(name)) v13.push(name);
    return true;
  }
  const op = item[0];
  if (op === '!' || op === '-') {
    const what = item.slice(1);
    const name = TLS12.get(what);
    if (name === undefined) return DISJOINT.has(what);
    const at = v12.indexOf(name);
    if (at !== -1) v12.splice(at, 1);
    if (op === '!') banned.add(name);
    return true;
  }
  const name = TLS12.get(item);
  // Aliases (HIGH, DEFAULT, AESGCM...), '+' moves, '@STRENGTH', '@SECLEVEL', other
  // separators and suites rustls lacks: not exact.
  if (name === undefined) return false;
  if (!banned.has(name) && !v12.includes(name)) v12.push(name);
  return true;
}

/**
 * node's `ciphers` option (undefined: tls.DEFAULT_CIPHERS, as createSecureContext reads it)
 * as IANA suite names in preference order, TLSv1.3 ones first as node splits them; null when
 * the native layer cannot serve exactly that list. The native layer settles the rest as
 * node does: no TLSv1.3 suite keeps OpenSSL's default ones, no TLSv1.2 suite makes the
 * server TLSv1.3-only.
 */
function toSuites(ciphers) {
  if (ciphers === undefined || ciphers === null) ciphers = require('tls').DEFAULT_CIPHERS;
  if (typeof ciphers !== 'string') return null;
  if (ciphers === NODE_DEFAULT) return DEFAULT_SUITES.slice();
  const v13 = [];
  const v12 = [];
  const banned = new Set();
  for (const item of ciphers.split(':')) {
    if (item !== '' && !apply(item, v13, v12, banned)) return null;
  }
  // node throws for a list with no suite at all; its own path says so.
  if (v13.length === 0 && v12.length === 0) return null;
  return [...v13, ...v12];
}

// OpenSSL 3.5 (Node 22.20+, 24, 26) has the hybrid post-quantum group and offers it first by
// default; OpenSSL 3.0 (Node 20) knows no such curve.
function opensslAtLeast(major, minor) {
  const [a, b] = process.versions.openssl.split('.').map(Number);
  return a > major || (a === major && b >= minor);
}
const HYBRID_PQ = opensslAtLeast(3, 5);

const GROUPS = new Map([
  ...(HYBRID_PQ ? [['X25519MLKEM768', 'X25519MLKEM768']] : []),
  ['X25519', 'X25519'], ['x25519', 'X25519'],
  ['P-256', 'P-256'], ['prime256v1', 'P-256'], ['secp256r1', 'P-256'],
  ['P-384', 'P-384'], ['secp384r1', 'P-384'],
]);

/**
 * node's `ecdhCurve` (undefined: tls.DEFAULT_ECDH_CURVE) as the native layer's groups: []
 * for 'auto' (its default groups), null when a curve is one it lacks (X448, P-521, ...).
 */
function toGroups(ecdhCurve) {
  if (ecdhCurve === undefined || ecdhCurve === null) {
    ecdhCurve = require('tls').DEFAULT_ECDH_CURVE;
  }
  if (typeof ecdhCurve !== 'string') return null;
  // OpenSSL's default list, of the groups the native TLS has (no X448, P-521 or FFDHE,
  // which OpenSSL lists after these).
  if (ecdhCurve === 'auto') return HYBRID_PQ ? ['X25519MLKEM768', 'X25519', 'P-256', 'P-384'] : [];
  const groups = [];
  for (const curve of ecdhCurve.split(':')) {
    const name = GROUPS.get(curve);
    if (name === undefined) return null;
    if (!groups.includes(name)) groups.push(name);
  }
  return groups;
}

module.exports = { toSuites, toGroups };
