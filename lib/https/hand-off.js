'use strict';
// Connections node's TLS serves from their first byte, through the server's hidden node:https
// server (../http/fallback.js), handed over by the addon before anything was answered:
// - a ClientHello naming a server rustls refuses (not a DNS name: a last label of digits as
//   `sni.0`, a label over 63 bytes, a space), which node's OpenSSL serves with `servername`
//   as sent (RFC 6066 section 3 leaves the check to the server); the bytes read come along;
// - every new connection while the app listens for what only OpenSSL tells: its session
//   cache ('newSession' / 'resumeSession') and OCSP stapling ('OCSPRequest'); nothing was
//   read of them.
const net = require('node:net');
const { closeSync } = require('node:fs');
const { serve } = require('../http/fallback');

/**
 * Connection `fd` of `server` goes to node's TLS with the bytes `read` from it so far (which
 * its TLSSocket takes first, as for any socket with buffered data). `facade`: the socket the
 * app was given with 'connection', if any, which closes with the connection.
 */
function handOff(server, facade, fd, read) {
  let socket;
  try {
    socket = new net.Socket({ fd, readable: true, writable: true });
  } catch {
    // libuv could not take the descriptor: the connection is lost, the process is not.
    closeFd(fd);
    facade?._onClose(0);
    return;
  }
  if (read.length > 0) socket.unshift(read);
  if (facade !== undefined) {
    socket.once('close', () => facade._onClose(0));
    facade.once('close', () => socket.destroy());
  }
  // Only a refused name counts as served by design (the stats' tlsHandOffs).
  serve(server, socket, read.length > 0 ? 'handOff' : 'stepAside');
}

function closeFd(fd) {
  try {
    closeSync(fd);
  } catch {}
}

module.exports = { handOff, closeFd };
