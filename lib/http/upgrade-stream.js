'use strict';
// What Node 26 emits 'upgrade' with when the request's body has not all arrived with its head:
// the body goes through `req`, the upgraded protocol's bytes through this stream once the body
// has ended (requestBodyCompleted). node's class (lib/_http_server.js UpgradeStream) is not
// exported, so this one behaves as it does: socket errors, 'end' and 'close' are passed on at
// once, writes go to the socket, and reading it also starts the request body flowing.
const { Duplex } = require('node:stream');
const { kSocket, kRequest } = require('../internal/symbols');

class UpgradeStream extends Duplex {
  constructor(socket, req) {
    super({ allowHalfOpen: socket.allowHalfOpen });
    this[kSocket] = socket;
    this[kRequest] = req;
    socket.on('error', (err) => this.destroy(err));
    socket.on('close', () => this.destroy());
    this.on('close', () => socket.destroy());
    socket.on('end', () => {
      this.push(null);
      // As a socket that ends with nothing buffered emits 'end' with no 'data' listener.
      if (this.readableLength === 0) this.resume();
    });
  }

  /** The request body ended: `head` (what followed it) and the socket's bytes flow here. */
  requestBodyCompleted(head) {
    const socket = this[kSocket];
    this[kRequest] = null;
    if (head?.length > 0 && !this.push(head)) socket.pause();
    socket.on('data', (data) => {
      if (!this.push(data)) socket.pause();
    });
  }

  _read() {
    // Reading the protocol must not wait on an app that never reads the body.
    this[kRequest]?.resume();
    this[kSocket].resume();
  }

  _write(chunk, encoding, callback) {
    this[kSocket].write(chunk, encoding, callback);
  }

  _final(callback) {
    this[kSocket].end(callback);
  }

  _destroy(err, callback) {
    this[kSocket].destroy(err);
    callback(err);
  }
}

module.exports = { UpgradeStream };
