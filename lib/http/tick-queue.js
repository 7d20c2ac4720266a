'use strict';
// Events the addon hands over to run from the tick queue: a request (F_QUEUED), a
// 'connection', and whatever of the same connection follows them before the addon's next
// boundary. node emits these from its own callbacks, where a listener's throw reaches V8's
// message listener with the throw's position: node prints that source line with a caret under
// the `throw`. A throw inside an N-API call keeps only the error (N-API's v8::TryCatch drops
// the message), and node then points at the `new Error`. The addon ends its callback scope
// at the end of the read or at the next boundary (after a body piece), so these run in the
// order they came, before the ticks they queue, as node runs a head's and a body piece's
// callbacks before their ticks. One tick per read, not per event: within the noise of an A/B
// run (bench/README).

const STRIDE = 11;

/** [fn, connection id, 9 arguments] per event; `head` is the next one to run. */
const queue = [];
let head = 0;
let scheduled = false;
/** runQueued is on the stack: it takes what is queued meanwhile itself. */
let running = false;
/** The addon's view of `queue`: non-zero while events wait (binding.init's queue state). */
let state = null;
/** What a queued event's throw does: (fn, connection id, queue, index of its arguments). */
let onThrow = null;

function setup(queueState, throwHandler) {
  state = queueState;
  onThrow = throwHandler;
}

/** Whether events wait: what the addon says next must wait behind them. */
function waiting() {
  return head < queue.length;
}

function enqueue(fn, id, a, b, c, d, e, f, g, h, i) {
  queue.push(fn, id, a, b, c, d, e, f, g, h, i);
  if (running) return;
  state[0] = 1;
  if (!scheduled) {
    scheduled = true;
    process.nextTick(runQueued);
  }
}

/**
 * Runs every queued event. A throw goes on to node's uncaught-exception path unchanged (a
 * `finally` rethrows with V8's message intact); what is left runs from a new tick, or from
 * the addon when that tick does not run (onQueued).
 */
function runQueued() {
  if (running) return;
  scheduled = false;
  running = true;
  state[0] = 0;
  while (head < queue.length) {
    const at = head;
    head += STRIDE;
    let done = false;
    try {
      queue[at](queue[at + 2], queue[at + 3], queue[at + 4], queue[at + 5], queue[at + 6],
        queue[at + 7], queue[at + 8], queue[at + 9], queue[at + 10]);
      done = true;
    } finally {
      if (!done) afterThrow(at);
    }
  }
  queue.length = 0;
  head = 0;
  running = false;
}

function afterThrow(at) {
  running = false;
  if (onThrow(queue[at], queue[at + 1], queue, at + 2)) dropConnection(queue[at + 1]);
  if (head < queue.length) {
    state[0] = 1;
    if (!scheduled) {
      scheduled = true;
      process.nextTick(runQueued);
    }
  } else {
    queue.length = 0;
    head = 0;
  }
}

/** Drops what is still queued for connection `id`: node's parser never got that far. */
function dropConnection(id) {
  let to = head;
  for (let from = head; from < queue.length; from += STRIDE) {
    if (queue[from + 1] === id) continue;
    for (let k = 0; k < STRIDE; k++) queue[to + k] = queue[from + k];
    to += STRIDE;
  }
  queue.length = to;
}

module.exports = { setup, waiting, enqueue, runQueued };
