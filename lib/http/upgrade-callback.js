'use strict';
// server.shouldUpgradeCallback (Node 22+): node's parserOnIncoming asks it whether an Upgrade
// request (not CONNECT) upgrades the connection. Its default answers what the addon already
// knows (whether anyone listens for 'upgrade'), so requests are handed to JS undecided
// (F_ASK_UPGRADE) only while the server has a callback of its own (S_UPGRADE_CALLBACK).
const { binding } = require('../internal/native');
const { S_UPGRADE_CALLBACK } = require('../internal/native').flags;
const { hasShouldUpgradeCallback } = require('../internal/node-internals');
const { kConfig, kSid, kId, kUpgradeCallback, kAsking } = require('../internal/symbols');

/** node's default: the request upgrades when someone listens for 'upgrade'. */
function shouldUpgradeCallback() {
  return this.listenerCount('upgrade') > 0;
}

const descriptor = {
  __proto__: null,
  configurable: true,
  enumerable: true,
  get() {
    return this[kUpgradeCallback];
  },
  set(fn) {
    this[kUpgradeCallback] = fn;
    const c = this[kConfig];
    c.flags = fn === shouldUpgradeCallback ? (c.flags & ~S_UPGRADE_CALLBACK)
      : (c.flags | S_UPGRADE_CALLBACK);
    if (this[kSid] >= 0) binding.serverFlags(this[kSid], S_UPGRADE_CALLBACK, c.flags);
  },
};

/**
 * Makes server.shouldUpgradeCallback an accessor of `proto` (node's storeHTTPOptions and apps
 * assign it), where the running Node has the option.
 */
function defineUpgradeCallback(proto) {
  if (hasShouldUpgradeCallback) Object.defineProperty(proto, 'shouldUpgradeCallback', descriptor);
}

/**
 * After storeHTTPOptions: a server made without the option gets the shared default instead
 * of node's own (a new function per server, which would look like the app's).
 */
function initUpgradeCallback(server, options) {
  if (hasShouldUpgradeCallback && options.shouldUpgradeCallback === undefined) {
    server.shouldUpgradeCallback = shouldUpgradeCallback;
  }
}

/**
 * node's parserOnIncoming for a request dispatched with F_ASK_UPGRADE: asks the server and
 * tells the addon. A throw is the caller's (uncaught, as in node) and leaves `req` an
 * upgrade waiting on the socket (kAsking): the addon hands the connection's next bytes over
 * (see `Upgrading::Undecided`).
 */
function askUpgrade(server, socket, req) {
  socket[kAsking] = req;
  const upgrade = !!server.shouldUpgradeCallback(req);
  socket[kAsking] = undefined;
  req.upgrade = upgrade;
  binding.decideUpgrade(socket[kId], upgrade);
  return upgrade;
}

module.exports = { defineUpgradeCallback, initUpgradeCallback, askUpgrade };
