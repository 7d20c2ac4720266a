'use strict';
// fast-http's modules are node:http's and node:https's, with the server half replaced: every
// other export (the client half, Agent, globalAgent, get, request, ClientRequest, ..., and
// whatever the running Node adds) is node's own, in node's order.
//
// Those are read and written through to node's module rather than copied: an app that swaps
// require('http') for require('fast-http') still has one module as far as node's client sees,
// so `globalAgent = agent` on either is what the other's request() uses, and a wrapper an APM
// puts on node:http's request is the one fast-http's request is. Exports node defines as
// accessors (maxHeaderSize, a getter; globalAgent, a getter and setter; the lazy WebSocket)
// keep node's own descriptor, so they behave exactly as node's do.

/**
 * A module object with `builtin`'s exports in `builtin`'s order: `own`'s values for the names
 * fast-http serves itself, node's for the rest.
 */
function moduleOf(builtin, own) {
  const exports = {};
  for (const key of Object.keys(builtin)) {
    if (Object.prototype.hasOwnProperty.call(own, key)) {
      exports[key] = own[key];
      continue;
    }
    const d = Object.getOwnPropertyDescriptor(builtin, key);
    if (d.get !== undefined || d.set !== undefined) {
      Object.defineProperty(exports, key, d);
      continue;
    }
    Object.defineProperty(exports, key, {
      __proto__: null,
      configurable: true,
      enumerable: true,
      get() {
        return builtin[key];
      },
      set(value) {
        builtin[key] = value;
      },
    });
  }
  // fast-http's own names that node's module has not (the server half always is node's names).
  for (const key of Object.keys(own)) {
    if (!Object.prototype.hasOwnProperty.call(exports, key)) exports[key] = own[key];
  }
  return exports;
}

module.exports = { moduleOf };
