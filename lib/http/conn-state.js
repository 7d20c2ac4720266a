'use strict';
// Per-connection HTTP state, as node keeps it in connectionListenerInternal's `state`: the
// requests not yet answered and the responses waiting for the socket. Almost always at most
// one of each, so the first sits in a field and an array exists only while requests are
// pipelined: an array that has held an element keeps a 17-slot backing store, which was a
// quarter of an idle keep-alive connection's JS memory.

const { NO_RESPONSE } = require('../internal/native').constants;

class ConnState {
  constructor() {
    this.first = null;
    this.rest = null;
    this.outgoing = null;
    this.outgoingData = 0;
    this.requestsCount = 0;
    this.keepAliveTimeoutSet = false;
    /** The peer's FIN cut a message short (node's socketOnEnd reported the parse error). */
    this.endFailed = false;
    /** The newest response given the socket (node has written what it ended by then). */
    this.assignedSeq = NO_RESPONSE;
  }

  /** The oldest request whose response has not finished. */
  get firstIncoming() {
    return this.first;
  }

  pushIncoming(req) {
    if (this.first === null) this.first = req;
    else if (this.rest === null) this.rest = [req];
    else this.rest.push(req);
  }

  /** Drops `req` (responses may finish out of order; the addon keeps the wire order). */
  removeIncoming(req) {
    if (this.first === req) {
      this.first = this.rest === null ? null : this.rest.shift();
      if (this.rest !== null && this.rest.length === 0) this.rest = null;
      return;
    }
    if (this.rest === null) return;
    const i = this.rest.indexOf(req);
    if (i !== -1) this.rest.splice(i, 1);
    if (this.rest.length === 0) this.rest = null;
  }

  /** Removes and returns the oldest request, or null. */
  shiftIncoming() {
    const req = this.first;
    if (req !== null) this.removeIncoming(req);
    return req;
  }

  pushOutgoing(res) {
    if (this.outgoing === null) this.outgoing = [res];
    else this.outgoing.push(res);
  }

  /** The next response waiting for the socket, or null. */
  shiftOutgoing() {
    const q = this.outgoing;
    if (q === null) return null;
    const res = q.shift();
    if (q.length === 0) this.outgoing = null;
    return res;
  }

  isWaiting(res) {
    return this.outgoing !== null && this.outgoing.includes(res);
  }
}

module.exports = { ConnState };
