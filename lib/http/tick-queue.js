'use strict';
// Events JS runs from the tick queue (lib/http/native-events.js decides): a request, a body piece,
// a parse error or timeout ('clientError'), a socket timeout, a 'connection', and whatever of
// the same connection follows them before the addon's next boundary. node emits these from
// its own callbacks, where a listener's throw reaches V8's message listener with the throw's
// position: node prints that source line with a caret under the `throw`. A throw inside an
// N-API call keeps only the error (N-API's v8::TryCatch drops the message), and node then
// points at the `new Error`. The addon ends its callback scope at the end of the read or at
// the next boundary (after a body piece), so these run in the order they came, before the
// ticks they queue, as node runs a head's and a body piece's callbacks before their ticks.
// Each runs in its connection's async resource (the `this` the addon calls with, which its
// other callbacks run in too), as node's run in the parser's: AsyncLocalStorage and
// executionAsyncResource() see what they see there. One tick per read, not per event.

const { nextTick } = require('../internal/scheduling');
const STRIDE = 13;

/**
 * [fn, connection id, async resource, position, 9 arguments] per event, from `head` (the next
 * one) to `tail`; `position`: where the event ended in the bytes the addon parsed, when a
 * throw of its handler fails the connection's parser (else -1). The array is kept and its
 * slots reused: a new one per read was +250 B of heap per request.
 */
const queue = [];
let head = 0;
let tail = 0;
let scheduled = false;
/** runQueued is on the stack: it takes what is queued meanwhile itself. */
let running = false;
/** What a queued event's throw does: (fn, connection id, position) => drop the rest. */
let onThrow = null;
/** Called when the queue has run everything it held. */
let onRanAll = null;

function setup(throwHandler, ranAll) {
  onThrow = throwHandler;
  onRanAll = ranAll;
}

/** Whether events wait: what the addon says next must wait behind them. */
function waiting() {
  return head < tail;
}

function enqueue(fn, id, resource, at, a, b, c, d, e, f, g, h, i) {
  if (tail === queue.length) queue.push(fn, id, resource, at, a, b, c, d, e, f, g, h, i);
  else {
    queue[tail] = fn;
    queue[tail + 1] = id;
    queue[tail + 2] = resource;
    queue[tail + 3] = at;
    queue[tail + 4] = a;
    queue[tail + 5] = b;
    queue[tail + 6] = c;
    queue[tail + 7] = d;
    queue[tail + 8] = e;
    queue[tail + 9] = f;
    queue[tail + 10] = g;
    queue[tail + 11] = h;
    queue[tail + 12] = i;
  }
  tail += STRIDE;
  if (running) return;
  if (!scheduled) {
    scheduled = true;
    nextTick(runQueued);
  }
}

/**
 * Runs every queued event. A throw goes on to node's uncaught-exception path unchanged (a
 * `finally` rethrows with V8's message intact); what is left runs from a new tick (node runs
 * the ticks a throw left, at the latest from the next setImmediate it schedules then).
 */
function runQueued() {
  if (running) return;
  scheduled = false;
  running = true;
  while (head < tail) {
    current = queue[head + 2];
    if (typeof current?.runInAsyncScope === 'function') current.runInAsyncScope(runCurrent);
    else runOne();
  }
  current = null;
  head = 0;
  tail = 0;
  running = false;
  onRanAll();
}

/** The resource runCurrent runs the events of. */
let current = null;

/** Runs the next events while they are `current`'s (in its async scope). */
function runCurrent() {
  do runOne();
  while (head < tail && queue[head + 2] === current);
}

function runOne() {
  const at = head;
  head += STRIDE;
  const fn = queue[at];
  const position = queue[at + 3];
  const a = queue[at + 4];
  const b = queue[at + 5];
  const c = queue[at + 6];
  const d = queue[at + 7];
  const e = queue[at + 8];
  const f = queue[at + 9];
  const g = queue[at + 10];
  const h = queue[at + 11];
  const i = queue[at + 12];
  // What ran is not kept alive by its slot (a body until the next read).
  for (let k = at + 2; k < at + STRIDE; k++) queue[k] = undefined;
  let done = false;
  try {
    fn(a, b, c, d, e, f, g, h, i);
    done = true;
  } finally {
    if (!done) afterThrow(fn, queue[at + 1], position);
  }
}

function afterThrow(fn, id, position) {
  running = false;
  current = null;
  if (onThrow(fn, id, position)) dropConnection(id);
  if (head < tail) {
    if (!scheduled) {
      scheduled = true;
      nextTick(runQueued);
    }
  } else {
    head = 0;
    tail = 0;
  }
}

/** Drops what is still queued for connection `id`: node's parser never got that far. */
function dropConnection(id) {
  let to = head;
  for (let from = head; from < tail; from += STRIDE) {
    if (queue[from + 1] === id) continue;
    for (let k = 0; k < STRIDE; k++) queue[to + k] = queue[from + k];
    to += STRIDE;
  }
  for (let k = to; k < tail; k++) queue[k] = undefined;
  tail = to;
}

/** Drops the events at the queue's head that are connection `id`'s. */
function dropHead(id) {
  while (head < tail && queue[head + 1] === id) {
    for (let k = head; k < head + STRIDE; k++) queue[k] = undefined;
    head += STRIDE;
  }
}

module.exports = { setup, waiting, enqueue, dropHead };
