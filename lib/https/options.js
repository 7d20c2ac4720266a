'use strict';
// Which https servers the addon's TLS layer serves: the options it implements (key / cert
// pairs, keys opened with their passphrase, ca, requestCert, rejectUnauthorized, TLSv1.2 /
// TLSv1.3 by min/maxVersion or a TLSv1_2 secureProtocol, ciphers and ecdhCurve that map
// exactly (lib/internal/tls-ciphers.js), honorCipherOrder, ALPNProtocols, sessionTimeout,
// ticketKeys, SNICallback, handshakeTimeout, pfx archives the addon decodes) become its TlsSpec;
// any other TLS option that asks for something (secureOptions, PSK, ...) makes the server
// node's own, with the reason: the option, why, and what would make the server native (the
// server prints it once per reason and shows it as `server.fastHttp.reason`).
const fs = require('node:fs');
const tls = require('node:tls');
const { X509Certificate, createPrivateKey } = require('node:crypto');
const { toSuites, toGroups } = require('../internal/tls-ciphers');
const { binding, defaults } = require('../internal/native');

const NO_PSK = 'fast-http\'s TLS (rustls) has no pre-shared keys';
const NO_ENGINE = 'OpenSSL engines are OpenSSL\'s own';
/**
 * TLS options the addon does not implement (set to anything but undefined, node serves), with
 * why.
 */
const FALLBACK_OPTIONS = {
  __proto__: null,
  secureOptions: 'OpenSSL\'s SSL_OP_* flags have no counterpart in fast-http\'s TLS (rustls, ' +
    'which never offers TLS 1.0 / 1.1, renegotiation or compression)',
  sigalgs: 'fast-http\'s TLS (rustls) chooses the signature algorithms itself',
  pskCallback: NO_PSK,
  pskIdentityHint: NO_PSK,
  crl: 'client certificates are not checked against revocation lists natively',
  dhparam: 'fast-http\'s TLS (rustls) has no finite-field Diffie-Hellman (DHE suites); it ' +
    'uses ECDHE',
  privateKeyEngine: NO_ENGINE,
  privateKeyIdentifier: NO_ENGINE,
  clientCertEngine: NO_ENGINE,
  secureContext: 'a tls.SecureContext is OpenSSL\'s object; pass the options it was made ' +
    'with (key, cert, ca, ...) instead',
  sessionIdContext: 'fast-http resumes sessions with tickets, not OpenSSL session ids',
  privateKeyOptions: 'the native TLS does not read it',
};
/** Boolean TLS options whose default (false) the addon has, with why. */
const FALSE_BY_DEFAULT = {
  __proto__: null,
  enableTrace: 'OpenSSL\'s trace output is OpenSSL\'s own',
  allowPartialTrustChain: 'fast-http\'s TLS (rustls) verifies client certificates up to a ' +
    'trust anchor only',
};

/** The reason an https server is node's own: the option, why, and what would make it native. */
function because(option, why, toNative = 'without it the server is fast-http\'s') {
  return `https option ${option}: ${why}; ${toNative}`;
}

/** A value as a reason quotes it: strings in quotes, long ones cut. */
function quote(value) {
  const text = typeof value === 'string' ? `'${value}'` : String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const VERSIONS = { __proto__: null, 'TLSv1.2': 0x0303, 'TLSv1.3': 0x0304 };
// secureProtocol methods the addon serves, as [min, max] (node's SecureContext::Init pins both
// to the method's version); any other method (TLSv1, TLSv1.1, client-only ones, ...) is
// node's to serve.
const SECURE_PROTOCOLS = {
  __proto__: null,
  TLSv1_2_method: [0x0303, 0x0303],
  TLSv1_2_server_method: [0x0303, 0x0303],
};

// node's https.Server's default: tls.Server advertises http/1.1.
const DEFAULT_ALPN = ['http/1.1'];
// tls.Server's default handshakeTimeout, as the addon starts servers with.
const DEFAULT_HANDSHAKE_TIMEOUT = defaults.handshakeTimeout;

function toArray(v) {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

function toBytes(v) {
  if (typeof v === 'string') return Buffer.from(v);
  if (ArrayBuffer.isView(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return null;
}

/** ALPNProtocols as names: an array of strings / bytes, or node's wire format in bytes. */
function alpnNames(v) {
  if (v === undefined) return [];
  if (Array.isArray(v)) {
    const names = [];
    for (const p of v) {
      if (typeof p === 'string') names.push(p);
      else if (ArrayBuffer.isView(p)) names.push(toBytes(p).toString('latin1'));
      else return null;
    }
    return names;
  }
  const wire = ArrayBuffer.isView(v) ? toBytes(v) : null;
  if (wire === null) return null;
  const names = [];
  for (let i = 0; i < wire.length;) {
    const n = wire[i];
    if (n === 0 || i + 1 + n > wire.length) return null;
    names.push(wire.toString('latin1', i + 1, i + 1 + n));
    i += 1 + n;
  }
  return names;
}

/**
 * An encrypted PEM key opened with its passphrase, as OpenSSL does when node loads it: the
 * addon gets the key itself (PKCS#8). null when it does not open (createSecureContext has
 * thrown node's error for that already).
 */
function opened(pem, passphrase) {
  try {
    return Buffer.from(createPrivateKey({ key: pem, format: 'pem', passphrase })
      .export({ type: 'pkcs8', format: 'pem' }));
  } catch {
    return null;
  }
}

/**
 * (certificate, key) pairs as the addon takes them: OpenSSL matches each key with the
 * certificate of its public key, whatever the order they came in.
 */
function keyPairs(options) {
  const keys = [];
  // configSecureContext: each { pem, passphrase } of a key array has its own passphrase,
  // anything else options.passphrase.
  // configSecureContext: `if (key)`, `if (cert)`, so falsy ones are none.
  for (const k of options.key ? toArray(options.key) : []) {
    const own = k !== null && typeof k === 'object' && !ArrayBuffer.isView(k);
    const pem = toBytes(own ? k.pem : k);
    const passphrase = own && k.passphrase !== undefined ? k.passphrase : options.passphrase;
    keys.push(pem === null || passphrase === undefined ? pem : opened(pem, passphrase));
  }
  const certs = options.cert ? toArray(options.cert).map(toBytes) : [];
  if (keys.includes(null) || certs.includes(null)) return null;
  // A key without its certificate (or none at all) signs nothing: every handshake fails, as
  // node's server without a certificate does.
  if (keys.length === 0 || certs.length === 0) return [];
  /** @type {Array<[Buffer, Buffer]>} */
  const pairs = [];
  try {
    const x509s = certs.map((c) => new X509Certificate(c));
    for (const key of keys) {
      const pk = createPrivateKey(key);
      const i = x509s.findIndex((x) => x.checkPrivateKey(pk));
      if (i < 0) return null;
      pairs.push([certs[i], key]);
    }
  } catch {
    return null;
  }
  return pairs;
}

/**
 * The pfx archives as createSecureContext loads them after key / cert: `{ pairs, extra }`,
 * each archive's key with its certificate (the first one the key signs for, as PKCS12_parse
 * picks) followed by the archive's other certificates (node's SSL_CTX_use_certificate_chain
 * sends them all), and those other certificates (node also trusts them for client
 * certificates and names them as client CAs). null when one does not decode here.
 */
function pfxPairs(options) {
  // tls.createSecureContext: `if (pfx)`, an array or one, each `val.buf ? val.buf : val`
  // opened with `val.passphrase || passphrase`.
  if (!options.pfx) return { pairs: [], extra: [] };
  // OpenSSL keeps one certificate per key type: an archive's replaces an earlier one's.
  const byType = new Map();
  const extra = [];
  for (const val of toArray(options.pfx)) {
    const raw = toBytes(val?.buf ? val.buf : val);
    if (raw === null) return null;
    const pass = val?.passphrase || options.passphrase;
    const passphrase = pass === undefined ? undefined : toBytes(pass)?.toString();
    const decoded = binding.tlsDecodePfx(raw, passphrase);
    if (decoded === undefined) return null;
    const [keyDer, ...certs] = decoded;
    try {
      const key = createPrivateKey({ key: keyDer, format: 'der', type: 'pkcs8' });
      const x509s = certs.map((c) => new X509Certificate(c));
      const leaf = x509s.findIndex((x) => x.checkPrivateKey(key));
      if (leaf < 0) return null;
      const others = x509s.filter((_, i) => i !== leaf);
      const chain = [x509s[leaf], ...others].map((x) => x.toString()).join('');
      byType.set(key.asymmetricKeyType, [
        Buffer.from(chain), Buffer.from(key.export({ type: 'pkcs8', format: 'pem' })),
      ]);
      for (const x of others) extra.push(Buffer.from(x.toString()));
    } catch {
      return null;
    }
  }
  return { pairs: [...byType.values()], extra };
}

/** The key / cert pairs and the pfx ones ({ pairs, extra } as pfxPairs), or the reason. */
function allPairs(options) {
  const keyCertPairs = keyPairs(options);
  if (keyCertPairs === null) {
    return because('key / cert', 'a key whose certificate is not among cert, or one node\'s ' +
      'crypto does not read here', 'with each key\'s certificate in cert the server is ' +
      'fast-http\'s');
  }
  const pfx = pfxPairs(options);
  if (pfx === null) return because('pfx', 'an archive fast-http\'s PKCS#12 decoder cannot open');
  // A pfx's certificate replaces a key / cert one of its key type inside OpenSSL, with the
  // chain certificates of that slot: not followed here.
  if (pfx.pairs.length > 0 && keyCertPairs.length > 0) {
    return because('pfx beside key / cert', 'OpenSSL lets the pfx replace the pair of its key ' +
      'type, which the native TLS does not follow', 'with one or the other the server is ' +
      'fast-http\'s');
  }
  return { pairs: [...keyCertPairs, ...pfx.pairs], extra: pfx.extra };
}

let defaultCAs;
/**
 * The CAs node's OpenSSL trusts without a `ca` (PEM Buffers), or null when they are not
 * known here. tls.getCACertificates (Node 22.15+) tells them; before it, they are node's
 * bundled ones plus the NODE_EXTRA_CA_CERTS file node read at startup, unless node was told
 * to use OpenSSL's or the system's store.
 */
function defaultRoots() {
  if (defaultCAs !== undefined) return defaultCAs;
  defaultCAs = null;
  if (typeof tls.getCACertificates === 'function') {
    defaultCAs = tls.getCACertificates('default').map((p) => Buffer.from(p));
    return defaultCAs;
  }
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (flags.some((f) => /^--(use-openssl-ca|use-system-ca|openssl-)/.test(f))) return null;
  const pems = tls.rootCertificates.map((p) => Buffer.from(p));
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  if (extra) {
    try {
      // node adds the file's certificates to its store; one that does not parse is skipped,
      // as the addon skips it.
      pems.push(fs.readFileSync(extra));
    } catch {
      // node warns and goes on with its bundled CAs.
    }
  }
  defaultCAs = pems;
  return defaultCAs;
}

/** [minVersion, maxVersion] as the addon takes them, or the reason for versions it lacks. */
function versionRange(options) {
  // createSecureContext refused a secureProtocol with minVersion / maxVersion already.
  if (options.secureProtocol) {
    return SECURE_PROTOCOLS[options.secureProtocol] ?? because(
      `secureProtocol ${quote(options.secureProtocol)}`, 'only TLSv1_2_method and ' +
      'TLSv1_2_server_method are served natively (fast-http\'s TLS has TLS 1.2 and 1.3, no ' +
      'TLS 1.0 / 1.1)', 'with one of those, or minVersion / maxVersion for TLS 1.2 and 1.3, ' +
      'the server is fast-http\'s');
  }
  const range = [];
  for (const [name, fallback] of [['minVersion', 'DEFAULT_MIN_VERSION'],
    ['maxVersion', 'DEFAULT_MAX_VERSION']]) {
    const version = options[name] ?? tls[fallback];
    if (VERSIONS[version] === undefined) {
      const what = options[name] === undefined ? `tls.${fallback} (no ${name})` : name;
      return because(`${what} ${quote(version)}`, 'fast-http\'s TLS (rustls) has TLS 1.2 and ' +
        '1.3, no TLS 1.0 / 1.1', 'with \'TLSv1.2\' or \'TLSv1.3\' the server is fast-http\'s');
    }
    range.push(VERSIONS[version]);
  }
  return range;
}

/**
 * The suites, groups, order and session settings of the spec (absent fields: node's
 * defaults), or the reason when one cannot be honoured exactly.
 */
function cipherTuning(options) {
  // A SNICallback that is not a function: node's server throws for it.
  if (options.SNICallback !== undefined && typeof options.SNICallback !== 'function') {
    return because('SNICallback', 'not a function (node\'s server refuses it)');
  }
  // An ALPNCallback that is not a function, or one beside ALPNProtocols: node's throws.
  if (options.ALPNCallback !== undefined &&
      (typeof options.ALPNCallback !== 'function' || options.ALPNProtocols)) {
    return because('ALPNCallback', 'not a function, or beside ALPNProtocols (node\'s server ' +
      'refuses both)');
  }
  const out = {};
  if (options.ciphers !== undefined) {
    const suites = toSuites(options.ciphers);
    if (suites === null) {
      return because(`ciphers ${quote(options.ciphers)}`, 'it names suites, aliases or ' +
        'operators fast-http\'s TLS cannot honour exactly (it has TLS 1.3\'s suites and ' +
        'ECDHE with AES-GCM or ChaCha20-Poly1305; no DHE, CBC or RSA key exchange, no ' +
        '@SECLEVEL)', 'with a list of those suites the server is fast-http\'s');
    }
    out.ciphers = suites;
  }
  // Also without ecdhCurve: node's default ('auto') names the hybrid post-quantum group
  // first where its OpenSSL has one, and an app may have changed tls.DEFAULT_ECDH_CURVE.
  const groups = toGroups(options.ecdhCurve);
  if (groups === null) {
    const [name, value] = options.ecdhCurve === undefined
      ? ['tls.DEFAULT_ECDH_CURVE', tls.DEFAULT_ECDH_CURVE]
      : ['ecdhCurve', options.ecdhCurve];
    const pq = toGroups('X25519MLKEM768') ? 'X25519MLKEM768, ' : '';
    return because(`${name} ${quote(value)}`, `fast-http's TLS has ${pq}X25519, P-256 and ` +
      'P-384 only', 'with those (or \'auto\') the server is fast-http\'s');
  }
  if (groups.length) out.groups = groups;
  // tls.Server: the server's order unless honorCipherOrder is false.
  if (options.honorCipherOrder !== undefined) out.honorCipherOrder = !!options.honorCipherOrder;
  if (options.sessionTimeout !== undefined) {
    // node takes an int32 of seconds (createSecureContext has validated it).
    out.sessionTimeout = options.sessionTimeout;
  }
  if (options.ticketKeys !== undefined) {
    const keys = toBytes(options.ticketKeys);
    if (keys === null || keys.length !== 48) {
      return because('ticketKeys', 'not 48 bytes in a Buffer');
    }
    out.ticketKeys = keys;
  }
  return out;
}

/** The reason an option the addon does not implement is set, or null. */
function unsupported(options) {
  for (const name in FALLBACK_OPTIONS) {
    if (options[name] !== undefined) return because(name, FALLBACK_OPTIONS[name]);
  }
  for (const name in FALSE_BY_DEFAULT) {
    if (options[name] !== undefined && options[name] !== false) {
      return because(`${name}: true`, FALSE_BY_DEFAULT[name]);
    }
  }
  return null;
}

/** { ca, roots } for client certificates (PEM Buffers), or the reason. */
function trust(options, requestCert) {
  // configSecureContext: `if (ca)`, so a falsy ca (false, '') is none.
  const ca = options.ca ? toArray(options.ca).map(toBytes) : [];
  if (ca.includes(null)) return because('ca', 'an entry that is neither a string nor a Buffer');
  // Without a ca, OpenSSL checks client certificates against its default roots.
  const roots = requestCert && ca.length === 0 ? defaultRoots() : [];
  if (roots === null) {
    return because('requestCert without ca', 'under --use-openssl-ca, --use-system-ca or an ' +
      '--openssl-* flag, the CAs node\'s OpenSSL trusts are not known here before Node 22.15 ' +
      '(tls.getCACertificates)', 'with ca, or on Node 22.15 or later, the server is ' +
      'fast-http\'s');
  }
  return { ca, roots };
}

/**
 * What the addon needs for an https server with `options` ({ spec, handshakeTimeout, own
 * certificate }), or, when node's https.Server must serve it, the reason (a string: the
 * option, why, and what would make the server fast-http's). Bad options throw node's own
 * errors, as node's constructor would (tls.createSecureContext checks them).
 */
function nativeTls(options) {
  const reason = unsupported(options);
  if (reason !== null) return reason;
  // Node's own validation, and errors, for what it would refuse.
  tls.createSecureContext(options);
  const versions = versionRange(options);
  if (typeof versions === 'string') return versions;
  const [minVersion, maxVersion] = versions;
  const handshakeTimeout = options.handshakeTimeout || DEFAULT_HANDSHAKE_TIMEOUT;
  if (typeof handshakeTimeout !== 'number') {
    return because('handshakeTimeout', `${quote(handshakeTimeout)} is not a number`);
  }
  const requestCert = options.requestCert === true;
  // tls.Server: rejectUnauthorized unless it is false.
  const rejectUnauthorized = options.rejectUnauthorized !== false;
  const trusted = trust(options, requestCert);
  if (typeof trusted === 'string') return trusted;
  // node's https.Server spreads the options over its default: one set to undefined is none.
  const alpn = 'ALPNProtocols' in options ? alpnNames(options.ALPNProtocols) : DEFAULT_ALPN;
  if (alpn === null) {
    return because('ALPNProtocols', 'a form not read natively (an array of strings or ' +
      'Buffers, or node\'s wire format in one Buffer are)');
  }
  const tuning = cipherTuning(options);
  if (typeof tuning === 'string') return tuning;
  const both = allPairs(options);
  if (typeof both === 'string') return both;
  const { pairs, extra } = both;
  return {
    spec: {
      pairs,
      // OpenSSL trusts a pfx's other certificates and names them as client CAs, as a ca's.
      ca: [...trusted.ca, ...extra],
      roots: trusted.roots,
      requestCert, rejectUnauthorized, minVersion, maxVersion, alpn, tickets: true,
      ...tuning,
    },
    handshakeTimeout,
    requestCert,
    rejectUnauthorized,
    ownCert: pairs[0]?.[0],
  };
}

module.exports = { nativeTls, DEFAULT_HANDSHAKE_TIMEOUT };
