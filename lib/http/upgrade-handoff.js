'use strict';
// The upgrade hand-off (node's parserOnIncoming and onParserExecuteCommon for Upgrade and
// CONNECT requests): the socket leaves the HTTP server and 'upgrade' / 'connect' gets it,
// with what followed the head. shouldUpgradeCallback's question is upgrade-callback.js;
// Node 26's stream for an upgrade whose request had a body is upgrade-stream.js.
const {
  F_CONNECT, F_ASK_UPGRADE, F_UPGRADE_BODY,
} = require('../internal/native').flags;
const { askUpgrade } = require('./upgrade-callback');
const { UpgradeStream } = require('./upgrade-stream');
const { detachHttp } = require('./server-logic');
const {
  kBodyReq, kAsking, kUpgradeReq, kUpgradeStream,
} = require('../internal/symbols');

const EMPTY = Buffer.alloc(0);

/**
 * An Upgrade or CONNECT request: true when the connection upgrades now or once the request's
 * body is read (Node 26), false when shouldUpgradeCallback refused and it is a plain request.
 */
function startUpgrade(server, socket, req, flags, body) {
  if ((flags & F_ASK_UPGRADE) !== 0 && !askUpgrade(server, socket, req)) return false;
  if ((flags & F_UPGRADE_BODY) === 0) {
    upgrade(server, socket, req, flags, body);
  } else {
    // Node 26: the body first, through req; the addon says when to emit (onUpgrade).
    socket[kBodyReq] = req;
    socket[kUpgradeReq] = req;
  }
  return true;
}

function upgrade(server, socket, req, flags, head) {
  detachHttp(socket);
  // Responses to earlier pipelined requests still finish through the state, as in node.
  socket.readableFlowing = null;
  // llhttp completes an upgrade request (no body) before node emits the event.
  if (!req.complete) {
    req.complete = true;
    req.push(null);
  }
  emitUpgrade(server, (flags & F_CONNECT) !== 0 ? 'connect' : 'upgrade', req, socket,
    head === undefined ? EMPTY : head);
}

function emitUpgrade(server, event, req, stream, head) {
  // shouldUpgradeCallback may say yes with nobody listening: node destroys the socket.
  if (server.listenerCount(event) > 0) {
    server.emit(event, req, stream, head);
  } else {
    req.socket.destroy();
  }
}

/** node's socketOnEnd while an upgrade's body is read: the parser finishes without error. */
function upgradeSocketOnEnd() {
  if (this[kUpgradeReq] != null && !this.server.httpAllowHalfOpen) this.end();
}

/**
 * Node 26, an Upgrade request whose body went through `req` (onParserExecuteCommon): once the
 * read that brought the head is parsed, 'upgrade' is emitted with the socket and what followed
 * the body when the body came whole (`head`), else with an UpgradeStream and an empty head,
 * and the protocol's bytes reach that stream once the body has ended.
 */
function upgradeAfterBody(socket, req, head) {
  const stream = socket[kUpgradeStream];
  if (head === undefined) {
    socket.on('end', upgradeSocketOnEnd);
    const s = socket[kUpgradeStream] = new UpgradeStream(socket, req);
    emitUpgrade(socket.server, 'upgrade', req, s, EMPTY);
    return;
  }
  socket[kUpgradeReq] = null;
  if (stream === undefined) {
    upgrade(socket.server, socket, req, 0, head);
  } else {
    socket.removeListener('end', upgradeSocketOnEnd);
    detachHttp(socket);
    stream.requestBodyCompleted(head);
  }
}

/**
 * The upgrade shouldUpgradeCallback threw on: its connection's next bytes upgrade it, as
 * node's parser (left on that request) hands them to its upgrade path. False: no such upgrade.
 */
function upgradeAsked(socket, chunk) {
  const asked = socket[kAsking];
  if (asked === undefined) return false;
  socket[kAsking] = undefined;
  upgrade(socket.server, socket, asked, 0, chunk);
  return true;
}

module.exports = { startUpgrade, upgradeAfterBody, upgradeAsked };
