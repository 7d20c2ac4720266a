'use strict';
// Errors with node's codes, classes and messages (lib/internal/errors.js), for the ones
// fast-http raises itself; everything else comes from node's own methods.
const util = require('node:util');

function coded(Base, code, message) {
  const err = new Base(message);
  err.code = code;
  return err;
}

const errors = {
  ERR_HTTP_INVALID_STATUS_CODE: (code) =>
    coded(RangeError, 'ERR_HTTP_INVALID_STATUS_CODE', util.format('Invalid status code: %s', code)),
  ERR_INVALID_CHAR: (name) =>
    coded(TypeError, 'ERR_INVALID_CHAR', `Invalid character in ${name}`),
  ERR_HTTP_HEADERS_SENT: (action) =>
    coded(Error, 'ERR_HTTP_HEADERS_SENT', `Cannot ${action} headers after they are sent to the client`),
  ERR_INVALID_ARG_VALUE: (name, value) =>
    coded(TypeError, 'ERR_INVALID_ARG_VALUE',
      `The argument '${name}' is invalid. Received ${util.inspect(value)}`),
  ERR_HTTP_REQUEST_TIMEOUT: () => coded(Error, 'ERR_HTTP_REQUEST_TIMEOUT', 'Request timeout'),
  ERR_SERVER_ALREADY_LISTEN: () =>
    coded(Error, 'ERR_SERVER_ALREADY_LISTEN',
      'Listen method has been called more than once without closing.'),
  ERR_SERVER_NOT_RUNNING: () => coded(Error, 'ERR_SERVER_NOT_RUNNING', 'Server is not running.'),
  ERR_SOCKET_BAD_PORT: (name, port, allowZero = true) =>
    coded(RangeError, 'ERR_SOCKET_BAD_PORT',
      `${name} should be >= 0 and < 65536. Received ${describe(port)}.`.replace(
        '>= 0', allowZero ? '>= 0' : '> 0')),
  ERR_INVALID_ARG_TYPE: (name, expected, actual) =>
    coded(TypeError, 'ERR_INVALID_ARG_TYPE',
      `The "${name}" argument must be ${expected}. Received ${describe(actual)}`),
  ERR_HTTP_SOCKET_ENCODING: () =>
    coded(Error, 'ERR_HTTP_SOCKET_ENCODING',
      'Changing the socket encoding is not allowed per RFC7230 Section 3.'),
};

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

module.exports = { ...errors, parseError, uvException, connReset };

module.exports.ERR_HTTP_TRAILER_INVALID = () =>
  coded(Error, 'ERR_HTTP_TRAILER_INVALID', 'Trailers are invalid with this transfer encoding');
