'use strict';
// Errors with node's codes, classes and messages (lib/internal/errors.js), for the ones
// fast-http raises itself; everything else comes from node's own methods.
const util = require('node:util');

/**
 * One class per code, shaped as node's makeNodeErrorWithCode makes them: a subclass of the
 * base whose prototype has `constructor` (the base itself) and a `toString()` that names the
 * code, so String(err) is `TypeError [ERR_X]: message` while `err.name` stays `TypeError`.
 */
const classes = new Map();

function classFor(Base, code) {
  let NodeError = classes.get(code);
  if (NodeError === undefined) {
    NodeError = class extends Base {};
    Object.defineProperties(NodeError.prototype, {
      constructor: { value: Base, writable: true, enumerable: false, configurable: true },
      toString: {
        value: function toString() {
          return `${this.name} [${code}]: ${this.message}`;
        },
        writable: true,
        enumerable: false,
        configurable: true,
      },
    });
    classes.set(code, NodeError);
  }
  return NodeError;
}

/**
 * An error of `code`, its stack captured above `factory` (the frames of this module are
 * node's hidden internals' counterpart). The stack's first line names the code as node's
 * do: V8 formats the stack from `name` on first access, so the name carries the code while
 * the stack is read once, then the prototype's name shows again.
 */
function coded(Base, code, message, factory) {
  const NodeError = classFor(Base, code);
  const err = new NodeError(message);
  Error.captureStackTrace(err, factory);
  err.name = `${Base.name} [${code}]`;
  err.stack;
  delete err.name;
  err.code = code;
  return err;
}

/** `errors.ERR_X(...args)` makes node's ERR_X with `format(...args)` as its message. */
function define(table) {
  const out = {};
  for (const [code, [Base, format]] of Object.entries(table)) {
    out[code] = function factory(...args) {
      return coded(Base, code, format(...args), factory);
    };
  }
  return out;
}

const errors = define({
  ERR_HTTP_INVALID_STATUS_CODE: [RangeError, (code) => util.format('Invalid status code: %s', code)],
  ERR_INVALID_CHAR: [TypeError, (name) => `Invalid character in ${name}`],
  ERR_HTTP_HEADERS_SENT: [Error,
    (action) => `Cannot ${action} headers after they are sent to the client`],
  ERR_INVALID_ARG_VALUE: [TypeError, (name, value, reason = 'is invalid') =>
    `The argument '${name}' ${reason}. Received ${util.inspect(value)}`],
  ERR_HTTP_REQUEST_TIMEOUT: [Error, () => 'Request timeout'],
  ERR_SERVER_ALREADY_LISTEN: [Error,
    () => 'Listen method has been called more than once without closing.'],
  ERR_SERVER_NOT_RUNNING: [Error, () => 'Server is not running.'],
  ERR_SOCKET_BAD_PORT: [RangeError, (name, port, allowZero = true) =>
    `${name} should be >= 0 and < 65536. Received ${describe(port)}.`.replace(
      '>= 0', allowZero ? '>= 0' : '> 0')],
  ERR_INVALID_ARG_TYPE: [TypeError, (name, expected, actual) =>
    `The ${argName(name)} must be ${expected}. Received ${describe(actual)}`],
  ERR_HTTP_SOCKET_ENCODING: [Error,
    () => 'Changing the socket encoding is not allowed per RFC7230 Section 3.'],
  ERR_HTTP_TRAILER_INVALID: [Error, () => 'Trailers are invalid with this transfer encoding'],
  // node's internal assert(), which tls.Server's setTicketKeys uses for the key length.
  ERR_INTERNAL_ASSERTION: [Error, (message) => `${message}\nThis is caused by either a bug in ` +
    'Node.js or incorrect usage of Node.js internals.\nPlease open an issue with this stack ' +
    'trace at https://github.com/nodejs/node/issues\n'],
  ERR_TLS_ALPN_CALLBACK_INVALID_RESULT: [TypeError, (value, protocols) =>
    `ALPN callback returned a value (${value}) that did not match any of the client's ` +
    `offered protocols (${protocols.join(', ')})`],
  ERR_TLS_REQUIRED_SERVER_NAME: [Error,
    () => '"servername" is required parameter for Server.addContext'],
});

/** node's wording: `"options.signal" property`, `"callback" argument`. */
function argName(name) {
  if (name.endsWith(' argument')) return name;
  return `"${name}" ${name.includes('.') ? 'property' : 'argument'}`;
}

function describe(v) {
  if (v == null) return ` ${v}`.trim();
  if (typeof v === 'function') return `function ${v.name}`;
  if (typeof v === 'object') {
    if (v.constructor?.name) return `an instance of ${v.constructor.name}`;
    return util.inspect(v, { depth: -1 });
  }
  let inspected = util.inspect(v, { colors: false });
  if (inspected.length > 28) inspected = `${inspected.slice(0, 25)}...`;
  return `type ${typeof v} (${inspected})`;
}

/** A parse error shaped like node_http_parser.cc's: `Parse Error: <reason>`. */
function parseError(code, reason, bytesParsed, rawPacket) {
  const err = new Error(`Parse Error: ${reason}`);
  err.bytesParsed = bytesParsed;
  err.code = code;
  err.reason = reason;
  if (rawPacket !== undefined) err.rawPacket = rawPacket;
  return err;
}

/** node's uvExceptionWithHostPort: `listen EADDRINUSE: address already in use :::8080`. */
function uvException(errno, syscall, address, port) {
  const [code, desc] = util.getSystemErrorMap().get(errno) || ['UNKNOWN', 'unknown error'];
  let details = '';
  if (port && port > 0) details = ` ${address}:${port}`;
  else if (address) details = ` ${address}`;
  const err = new Error(`${syscall} ${code}: ${desc}${details}`);
  err.code = code;
  err.errno = errno;
  err.syscall = syscall;
  err.address = address;
  if (port) err.port = port;
  return err;
}

/** net's ConnResetException. */
function connReset(msg) {
  const err = new Error(msg);
  err.code = 'ECONNRESET';
  return err;
}

/** net's errnoException(errno, 'read'): a socket's read failed (a reset, a timeout). */
function readError(errno) {
  let code;
  try {
    code = util.getSystemErrorName(errno);
  } catch {
    code = 'ECONNRESET';
  }
  const err = new Error(`read ${code}`);
  err.errno = errno;
  err.code = code;
  err.syscall = 'read';
  return err;
}

// The addon words OpenSSL's errors as 'error:0A00010B:SSL routines::wrong version number'
// (OpenSSL's own message adds a thread id, function and source line it does not have).
const OPENSSL_MESSAGE = /^error:[0-9A-F]{8}:([^:]*):[^:]*:(.*)$/;

// OpenSSL 3.5 (Node 22.20+, 24, 26) names the alerts SSL 3 defined "ssl/tls alert ...", and
// checks a TLS 1.2 record's length in its record layer.
const [OPENSSL_MAJOR, OPENSSL_MINOR] = process.versions.openssl.split('.').map(Number);
const SSL_TLS_ALERTS = OPENSSL_MAJOR > 3 || (OPENSSL_MAJOR === 3 && OPENSSL_MINOR >= 5);

/** node's error from OpenSSL's (crypto's ThrowCryptoError): library, reason, code. */
function opensslError(message, code) {
  if (SSL_TLS_ALERTS && code.startsWith('ERR_SSL_SSLV3_ALERT_')) {
    code = `ERR_SSL_SSL/TLS_ALERT_${code.slice(20)}`;
    message = message.replace('sslv3 alert ', 'ssl/tls alert ');
  } else if (SSL_TLS_ALERTS && code === 'ERR_SSL_INVALID_AAD') {
    // A TLS 1.2 record too short for GCM: 3.5's record layer refuses it before the provider.
    code = 'ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC';
    message = 'error:0A000119:SSL routines::decryption failed or bad record mac';
  }
  const err = new Error(message);
  const m = OPENSSL_MESSAGE.exec(message);
  if (m !== null) {
    err.library = m[1];
    err.reason = m[2];
  }
  err.code = code;
  return err;
}

module.exports = { ...errors, parseError, uvException, connReset, readError, opensslError };
