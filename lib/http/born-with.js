'use strict';
// Requests and responses born with the prototype the server's app gives them (issue #34
// item 4). Express (4 and 5) calls `Object.setPrototypeOf(req, app.request)` and
// `(res, app.response)` on every request: each object changes its hidden class once it
// exists (a runtime call and a map migration per object), and V8's property loads on
// requests and responses miss their inline caches. A request or response made with that
// prototype from the start makes the framework's setPrototypeOf a no-op.
//
// Nothing an app can observe changes, because the prototype is only given where no one looks
// before the framework sets it itself:
// - the server's only 'request' listener is an app whose `request` / `response` are the
//   prototypes (Express's application: its router's first act is expressInit's
//   setPrototypeOf; nothing of it before looks at the prototype), and the app set them on the
//   previous request of this server (seen after 'request' returned); it is checked again
//   after every request (dropped at once when the app gives another);
// - the server's emit is node's own (no APM wrapper), and nobody subscribes to
//   http.server.request.start (they see the objects before the app);
// - the request is emitted as 'request' (no Expect: 'checkContinue' / 'checkExpectation' and
//   their listeners see it first; no upgrade);
// - the prototype only adds to fast-http's: no name on its chain above fast-http's class is
//   on that class's chain or among an instance's own fields, so whatever node's code uses
//   before the app runs is what it would have found;
// - the objects are fast-http's own classes (a server given its own IncomingMessage or
//   ServerResponse class keeps making them with `new`).
const diagnostics = require('./diagnostics');
const { IncomingMessage, BodylessRequest } = require('./incoming');
const { ServerResponse } = require('./response');
const { kBornWith } = require('../internal/symbols');
const { kIncomingMessage, kServerResponse } = require('../internal/node-internals');
const EventEmitter = require('node:events');

const stockEmit = EventEmitter.prototype.emit;

/** A server's learned prototypes and the constructors that make objects with them. */
class BornWith {
  constructor() {
    /** The app (the server's one 'request' listener) they were learned from. */
    this.app = null;
    /** { proto, full, bodyless } for requests, or null. */
    this.request = null;
    /** { proto, make } for responses, or null. */
    this.response = null;
  }
}

/**
 * A constructor that makes what `Ctor` (one of fast-http's plain-function constructors)
 * makes, with `proto` as prototype. `room`: how many fields its objects get. V8 sizes a
 * constructor's objects from the `this.x =` assignments in its body (in-object slack
 * tracking); a wrapper whose body has none gives objects too few in-object fields, and a
 * response's symbol-keyed fields then turn it into a dictionary. The never-run assignments
 * are that size hint, made once per learned prototype.
 */
function bornConstructor(Ctor, proto, room) {
  const hint = Array.from({ length: room }, (_, i) => `this.f${i} = 0;`).join(' ');
  const Born = new Function('Ctor', `return function Born(a, b) {
    if (false) { ${hint} }
    Ctor.call(this, a, b);
  };`)(Ctor);
  Born.prototype = proto;
  return Born;
}

/**
 * The server's one 'request' listener when it is an Express application (`handle`, `set`)
 * and nothing looks at a request before it (no emit wrapper, no request-start subscriber),
 * else null. EventEmitter keeps a lone listener as the function itself.
 */
function soleListener(server) {
  const listener = server._events.request;
  return typeof listener === 'function' && typeof listener.handle === 'function' &&
    typeof listener.set === 'function' && server.emit === stockEmit &&
    !diagnostics.requestStart.hasSubscribers ? listener : null;
}

/** The constructors `server`'s next request is born with ({ full, bodyless }), or null. */
function requestBorn(server) {
  const b = server[kBornWith];
  return b !== undefined && b.request !== null && soleListener(server) === b.app ?
    b.request : null;
}

/** The constructor `server`'s next response is born with, or null. */
function responseBorn(server) {
  const b = server[kBornWith];
  return b !== undefined && b.response !== null && soleListener(server) === b.app ?
    b.response.make : null;
}

/**
 * Whether `proto` only adds to `base`'s chain (`base` somewhere below it): none of the names
 * on its chain above `base` is on `base`'s chain or an own name of `sample`.
 */
function onlyAdds(proto, base, sample) {
  if (!Object.prototype.isPrototypeOf.call(base, proto)) return false;
  const own = new Set(Reflect.ownKeys(sample));
  for (let o = proto; o !== base; o = Object.getPrototypeOf(o)) {
    for (const key of Reflect.ownKeys(o)) {
      if (key in base || own.has(key)) return false;
    }
  }
  return true;
}

/** Room for an object's fields: its own and the app's, and some to spare. */
function roomFor(sample) {
  return Reflect.ownKeys(sample).length + 8;
}

/**
 * After 'request' returned: keeps the prototypes the app gave `req` and `res` for the next
 * request of `server`, or drops one the app no longer gives.
 */
function learn(server, req, res) {
  const app = soleListener(server);
  if (app === null) return;
  let b = server[kBornWith];
  if (b === undefined) b = server[kBornWith] = new BornWith();
  if (b.app !== app) {
    b.app = app;
    b.request = null;
    b.response = null;
  }
  const reqProto = Object.getPrototypeOf(req);
  if (b.request === null || b.request.proto !== reqProto) {
    b.request = server[kIncomingMessage] === IncomingMessage && reqProto === app.request &&
      onlyAdds(reqProto, IncomingMessage.prototype, req) ? {
        proto: reqProto,
        full: bornConstructor(IncomingMessage, reqProto, roomFor(req)),
        bodyless: bornConstructor(BodylessRequest, reqProto, roomFor(req)),
      } : null;
  }
  const resProto = Object.getPrototypeOf(res);
  if (b.response === null || b.response.proto !== resProto) {
    b.response = server[kServerResponse] === ServerResponse && resProto === app.response &&
      onlyAdds(resProto, ServerResponse.prototype, res) ? {
        proto: resProto,
        make: bornConstructor(ServerResponse, resProto, roomFor(res)),
      } : null;
  }
}

module.exports = { requestBorn, responseBorn, learn };
