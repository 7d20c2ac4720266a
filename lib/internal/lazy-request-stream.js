'use strict';
// A request's stream lifecycle, run only when someone can see it. node ends every body-less
// request with push(null) and, once it is answered, _dump(): between them they schedule
// four to six ticks (emitReadable_, resume_, endReadableNT, onError, emitCloseNT) and run
// the Readable machinery for a stream nobody reads. Here such a request's `_readableState`
// is a stand-in that records how far the lifecycle went. node's ticks come in levels (level
// k holds what level k - 1 scheduled); one chain of ticks shared by all recorded requests
// passes the levels, so the public getters (readableEnded, destroyed, closed, ...) change at
// the same point relative to other queued work as node's. Listening to the request (any
// event) or any access to a field of its state (read(), resume(), pipe(), destroy(), stream
// utilities, util.inspect) replays what is missing on the real state:
//   - a step whose ticks have all run is applied as the state it left;
//   - a step with ticks still due runs for real (its ticks follow, a little later than node's);
// a finished lifecycle adds no events (node emitted them to no listener).
// Every state change here is read off a request node drives through the same steps when this
// file loads, so it follows the running Node version (Node 24 dumps with read(0), Node 20
// with resume()). The stand-in is an own property, so it survives an app swapping the
// request's prototype; node's getters then make the state real.
const { nextTick } = require('./scheduling');
const { Readable } = require('node:stream');
const { inspect } = require('node:util');
const { NodeIncomingMessage } = require('./node-internals');
const { findDescriptor, replaceGetter } = require('./descriptors');

const { ReadableState } = Readable;

const kReq = Symbol('fast-http.lazyReq');
const kReal = Symbol('fast-http.realState');
const kLazy = Symbol('fast-http.lazyLifecycle');
const kEnd = Symbol('fast-http.endedAt');
const kDump = Symbol('fast-http.dumpedAt');

/** Getters apps and frameworks read per request; answered per step without the state. */
const PUBLIC = [
  'destroyed', 'closed', 'errored', 'readable', 'readableEnded', 'readableFlowing',
  'readableLength', 'readableAborted', 'readableDidRead',
];

function isPrimitive(v) {
  return v === null || (typeof v !== 'object' && typeof v !== 'function');
}

function snapshot(state, keys) {
  const out = new Map();
  for (const key of keys) {
    const v = state[key];
    if (isPrimitive(v)) out.set(key, v);
  }
  return out;
}

/** The fields of a state whose values differ in `after` (applied in key order). */
function changes(before, after) {
  const out = [];
  for (const [key, v] of after) {
    if (!Object.is(before.get(key), v)) out.push([key, v]);
  }
  return out;
}

function publicValues(req) {
  const out = Object.create(null);
  for (const name of PUBLIC) {
    const d = findDescriptor(NodeIncomingMessage.prototype, name);
    if (d?.get !== undefined) out[name] = d.get.call(req);
  }
  return out;
}

/**
 * Drives a node request through push(null) and _dump() with process.nextTick recorded (node's
 * stream code looks it up on `process` at each call). The ticks run level by level, as they
 * would in a queue shared with other work: level k holds the ticks scheduled by level k - 1.
 * Returns the public values after each step and level, and the state's changes at the ends.
 */
function probe() {
  let ticks = [];
  // node's streams look up process.nextTick at each call: the probe records theirs.
  // eslint-disable-next-line no-restricted-properties
  const original = process.nextTick;
  // eslint-disable-next-line no-restricted-properties
  process.nextTick = function record(fn, ...args) {
    ticks.push(() => fn(...args));
  };
  /** Runs the queued ticks level by level; the values after each level. */
  const levels = (req) => {
    const out = [];
    for (let guard = 0; ticks.length > 0 && guard < 32; guard++) {
      const level = ticks;
      ticks = [];
      for (const tick of level) tick();
      out.push(publicValues(req));
    }
    return out;
  };
  try {
    const req = new NodeIncomingMessage(null);
    const state = req._readableState;
    const keys = Reflect.ownKeys(state);
    const fresh = snapshot(state, keys);
    const freshValues = publicValues(req);
    req.complete = true;
    req.push(null);
    const endValues = [publicValues(req), ...levels(req)];
    const ended = snapshot(state, keys);
    req._dump();
    const dumpValues = [publicValues(req), ...levels(req)];
    return {
      keys,
      freshValues,
      endValues,
      dumpValues,
      ended: changes(fresh, ended),
      final: changes(fresh, snapshot(state, keys)),
    };
  } finally {
    // eslint-disable-next-line no-restricted-properties
    process.nextTick = original;
  }
}

/** The probe, or null (requests then run node's lifecycle) if this Node does not fit it. */
function probeIfUsable() {
  try {
    const p = probe();
    return p.dumpValues.at(-1).readableEnded === true && p.dumpValues.at(-1).closed === true
      ? p : null;
  } catch {
    return null;
  }
}

const PROBE = probeIfUsable();
// Levels of a step: 0 before it, 1 right after it, 1 + k after its k-th level of ticks.
const END_DONE = PROBE?.endValues.length;
const DUMP_DONE = PROBE?.dumpValues.length;

function apply(state, list) {
  for (let i = 0; i < list.length; i++) state[list[i][0]] = list[i][1];
}

// The ticks come as one chain shared by all recorded requests: each tick of it passes one
// level for every request with ticks due, in place of each request's own ticks. A request
// notes the chain's count when it takes a step; its level is how many ticks ran since. (A
// pipelined connection finishes one response per tick: the chain then runs about one tick
// per response, with no per-request bookkeeping.)
let ticks = 0;
let runUntil = 0;
let scheduled = false;

function chainTick() {
  scheduled = false;
  ticks++;
  if (watchedCount > watchedHead) endWatched();
  if (ticks < runUntil) {
    scheduled = true;
    nextTick(chainTick);
  }
}

/** 0 before the step at `at` (-1), 1 right after it, 1 + k after k levels, at most `done`. */
function level(at, done) {
  if (at < 0) return 0;
  const n = 1 + ticks - at;
  return n < done ? n : done;
}

/** Records a step now whose ticks take `levels` levels. */
function step(levels) {
  if (levels > 0) {
    if (ticks + levels > runUntil) runUntil = ticks + levels;
    if (!scheduled) {
      scheduled = true;
      nextTick(chainTick);
    }
  }
  return ticks;
}

// Requests whose 'end' someone waits for (node's clearIncoming), in the order they were
// dumped, so the ones whose 'end' level has come are at the front.
const watched = [];
let watchedHead = 0;
let watchedCount = 0;
let endHandler = null;

/** Where node emits the 'end' of a dumped request. */
const DUMP_ENDED = 1 + (PROBE?.dumpValues.findIndex((v) => v.readableEnded) ?? 0);

function endWatched() {
  while (watchedHead < watchedCount) {
    const lazy = watched[watchedHead];
    if (lazy[kLazy] && level(lazy[kDump], DUMP_DONE) < DUMP_ENDED) break;
    watched[watchedHead++] = undefined;
    const req = lazy[kReq];
    if (!lazy[kLazy] && !req.readableEnded) req.once('end', endHandler);
    else endHandler.call(req, req);
  }
  if (watchedHead === watchedCount) {
    watchedHead = watchedCount = 0;
  } else if (watchedHead >= 1024) {
    // Under steady load the list may never drain: move the waiting ones to the front.
    watched.copyWithin(0, watchedHead, watchedCount);
    watchedCount -= watchedHead;
    watchedHead = 0;
    watched.length = watchedCount;
  }
}

/**
 * `fn(req)` (with `this` = req too) runs where the 'end' listeners of a dumped request would;
 * `watchEnd(req)` asks for it.
 */
function onDumpedEnd(fn) {
  endHandler = fn;
}

function watchEnd(req) {
  const lazy = lazyOf(req);
  if (lazy === null || lazy[kDump] < 0) return false;
  if (DUMP_ENDED === 1) {
    endHandler.call(req, req);
  } else {
    watched[watchedCount++] = lazy;
  }
  return true;
}

/** The stand-in for a request's ReadableState. */
function LazyState(req, real) {
  this[kReq] = req;
  this[kReal] = real;
  this[kLazy] = true;
  this[kEnd] = -1;
  this[kDump] = -1;
}
LazyState.prototype = Object.create(ReadableState.prototype);

/**
 * Makes the state real and brings it to where node's would be: finished steps are applied as
 * the state they left, a step whose ticks are still due runs for real (its ticks follow).
 */
function materialize(lazy) {
  let real = lazy[kReal];
  if (!lazy[kLazy]) return real;
  lazy[kLazy] = false;
  const req = lazy[kReq];
  if (real === null) real = lazy[kReal] = freshState(req);
  if (req._readableState === lazy) req._readableState = real;
  const dump = level(lazy[kDump], DUMP_DONE);
  if (dump === DUMP_DONE) {
    apply(real, PROBE.final);
    return real;
  }
  const end = level(lazy[kEnd], END_DONE);
  if (end === END_DONE) apply(real, PROBE.ended);
  else if (end > 0) req.push(null);
  if (dump > 0) {
    req._dumped = false;
    req._dump();
  }
  return real;
}

function valuesFor(lazy) {
  const dump = level(lazy[kDump], DUMP_DONE);
  if (dump > 0) return PROBE.dumpValues[dump - 1];
  const end = level(lazy[kEnd], END_DONE);
  return end > 0 ? PROBE.endValues[end - 1] : PROBE.freshValues;
}

// Every field of a real state, forwarded (code may hold the stand-in it read earlier).
for (const key of PROBE?.keys ?? []) {
  Object.defineProperty(LazyState.prototype, key, {
    __proto__: null,
    configurable: true,
    enumerable: true,
    get() {
      return materialize(this)[key];
    },
    set(v) {
      materialize(this)[key] = v;
    },
  });
}

// util.inspect reads own properties only: show (and so make) the real state.
LazyState.prototype[inspect.custom] = function inspectState() {
  return materialize(this);
};

/** Gives a fresh request the stand-in. */
function makeLazy(req) {
  if (PROBE !== null) req._readableState = new LazyState(req, req._readableState);
}

/** A stand-in whose real state is made only when needed (see incoming.js). */
function lazyStateFor(req) {
  return PROBE !== null ? new LazyState(req, null) : freshState(req);
}

/** The state node's IncomingMessage constructor makes for a request on `req.socket`. */
function freshState(req) {
  const socket = req.socket;
  const state = new ReadableState(
    socket ? { highWaterMark: socket.readableHighWaterMark } : undefined, req, false);
  state.readingMore = true;
  return state;
}

/** The stand-in of a request whose lifecycle is still recorded, or null. */
function lazyOf(req) {
  const s = req._readableState;
  return s !== undefined && s !== null && s[kLazy] === true ? s : null;
}

// A request with listeners (added past fast-http's on(), e.g. on a swapped prototype) takes
// node's steps for real.

/** node's `req.push(null)` at the end of a body-less request. */
function lazyEnd(req, lazy) {
  if (req._eventsCount > 0) {
    materialize(lazy);
    req.push(null);
  } else {
    lazy[kEnd] = step(END_DONE - 1);
  }
}

/** node's `req._dump()` for a request nobody read. */
function lazyDump(req, lazy) {
  if (req._eventsCount > 0) {
    materialize(lazy);
    if (!req._readableState.resumeScheduled) req._dump();
  } else if (!req._dumped) {
    req._dumped = true;
    lazy[kDump] = step(DUMP_DONE - 1);
  }
}

/** The public getters on `proto`, answered from the phase while the state is a stand-in. */
function defineLazyGetters(proto) {
  for (const name of PUBLIC) {
    replaceGetter(proto, name, (get) => function getter() {
      const s = this._readableState;
      return s?.[kLazy] === true ? valuesFor(s)[name] : get.call(this);
    });
  }
}

module.exports = {
  makeLazy, lazyStateFor, lazyOf, lazyEnd, lazyDump, watchEnd, onDumpedEnd, defineLazyGetters,
  materialize,
};
