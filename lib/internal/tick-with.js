'use strict';
// process.nextTick(fn, arg) allocates an arguments array beside its tick object (56 B of heap
// per call on V8 x64, measured per response with the sampling heap profiler): a response's
// 'close' tick paid it on every request. Here the argument waits in a FIFO and the tick is
// argument-less. It is still one tick per call, queued at the same point: ticks run in the
// order they were queued, so the k-th tick of this file takes the k-th pair.

const { nextTick } = require('./scheduling');

/** fn, arg pairs from `head` to `tail`; the slots are reused once all have run. */
const pairs = [];
let head = 0;
let tail = 0;

function runPair() {
  const fn = pairs[head];
  const arg = pairs[head + 1];
  pairs[head] = undefined;
  pairs[head + 1] = undefined;
  head += 2;
  if (head === tail) {
    head = tail = 0;
  } else if (head >= 2048) {
    // Ticks that never let the queue empty: move the waiting pairs to the front.
    pairs.copyWithin(0, head, tail);
    tail -= head;
    head = 0;
    pairs.length = tail;
  }
  fn(arg);
}

/** process.nextTick(fn, arg), without the arguments array. */
function nextTickWith(fn, arg) {
  // node's nextTick queues nothing once the process is exiting: neither may the pair.
  if (process._exiting) return;
  if (tail === pairs.length) pairs.push(fn, arg);
  else {
    pairs[tail] = fn;
    pairs[tail + 1] = arg;
  }
  tail += 2;
  nextTick(runPair);
}

module.exports = { nextTickWith };
