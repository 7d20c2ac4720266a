'use strict';
// Ended responses handed to the addon once per batch (issue #34 item 1; DESIGN.md,
// "Responses"). While the addon runs a batch (a read, an accept, a timer: it says so in the
// responses array), `respond` and `send` queue the response here, and the addon takes the
// queue (`takeResponses`: `respondBatch` calls of up to 16 responses) before the batch
// writes, one JS → native call for the batch's responses instead of one each. Their bytes
// reach the kernel at the batch's end, or before the batch runs the next connection's
// requests once the first of them has waited HOLD_MS. Outside a batch (a response ended from a timer, or from a promise
// other I/O settled) a response is handed over at once.
//
// Nothing overtakes a queued response: every other call into the addon takes the queue
// first (`guard`), so a socket write, destroy() or flushAll() at exit after res.end() still
// comes after its bytes.

const { now } = require('./scheduling');

/** The values one response passes to respondBatch. */
const VALUES = 4;
/** The most responses one respondBatch call takes. */
const PER_CALL = 16;
/**
 * How long (ms) a batch holds an ended response. A batch runs every request its poll read,
 * so behind slow handlers the first response would wait for all the others (1,000 ready
 * connections whose handlers take 5 ms: 5 s) where node:http writes each as it ends: past
 * this, what is held is written before the next connection's requests run. Above the
 * batches of busy servers (64 connections of 30 µs: 2 ms), since writing sooner costs
 * throughput: 1 ms cost pipelined requests 10 %, 2 ms 2 % (smaller batches follow).
 */
const HOLD_MS = 5;

/**
 * hand(respondBatch, values, n): calls respondBatch with the first n responses' values as
 * its arguments, PER_CALL responses a call, each call after the index of its first response.
 * Made once at load as a switch of calls with as many arguments as the responses have
 * values: Reflect.apply would need an array of exactly that length (a new one per batch,
 * +30 B of heap per response measured at 64 connections).
 */
const hand = (() => {
  const cases = [];
  for (let k = 1; k <= PER_CALL; k++) {
    const args = Array.from({ length: k * VALUES }, (_, i) => `v[at + ${i}]`).join(', ');
    cases.push(`case ${k}: f(at / VALUES, ${args}); break;`);
  }
  return new Function('PER_CALL', 'VALUES', `return function hand(f, v, n) {
    for (let at = 0; n > 0; at += PER_CALL * VALUES, n -= PER_CALL) {
      switch (n < PER_CALL ? n : PER_CALL) {
        ${cases.join('\n        ')}
      }
    }
  };`)(PER_CALL, VALUES);
})();

/**
 * writeHeld() of a batch's queue: before the batch runs the next connection's requests,
 * responses held HOLD_MS or longer (queued, or handed over and not yet written) go to the
 * kernel now.
 */
function holdLimit(raw, numbers, heldAt, take) {
  return function writeHeld() {
    const at = numbers[heldAt];
    if (at !== 0 && now() - at >= HOLD_MS) {
      take();
      raw.writeBatch();
    }
  };
}

/**
 * The queue over `raw` (the addon) and `numbers` (the Float64Array it shares for this;
 * `c`: the addon's constants): respond / send as the addon's, and take() hands the queue
 * over.
 */
function makeResponseBatch(raw, numbers, c) {
  const COUNT = c.RESPONSES_COUNT;
  const OPEN = c.RESPONSES_OPEN;
  const HELD_AT = c.RESPONSES_HELD_AT;
  const START = c.RESPONSES_START;
  const EACH = c.RESPONSE_NUMBERS;
  const SENT_HEAD = c.SENT_HEAD;
  const LAST_READ = c.BATCH_LAST_READ;
  const MAX = Math.floor((numbers.length - START) / EACH);
  /** Per response (VALUES): reason, header lines (or node's head text), body, trailers. */
  const values = [];
  let count = 0;

  function take() {
    if (count === 0) return;
    const n = count;
    count = 0;
    numbers[COUNT] = 0;
    try {
      hand(raw.respondBatch, values, n);
    } finally {
      // What was handed over is not kept alive by the queue (a large body until the next
      // batch).
      values.fill(undefined, 0, n * VALUES);
    }
  }

  function queue(id, seq, status, reason, lines, body, flags, trailers, life) {
    if (count === MAX) take();
    if (numbers[HELD_AT] === 0) numbers[HELD_AT] = now();
    const at = START + count * EACH;
    numbers[at] = id;
    numbers[at + 1] = seq;
    numbers[at + 2] = status;
    numbers[at + 3] = flags;
    numbers[at + 4] = life;
    const v = count * VALUES;
    values[v] = reason;
    values[v + 1] = lines;
    values[v + 2] = body;
    values[v + 3] = trailers;
    numbers[COUNT] = ++count;
  }

  function respond(id, seq, status, reason, lines, body, flags, trailers, life) {
    if (numbers[OPEN] !== 0) {
      queue(id, seq, status, reason, lines, body, flags, trailers, life);
    } else {
      take();
      raw.respond(id, seq, status, reason, lines, body, flags, trailers, life);
    }
  }

  function send(id, seq, head, body, flags, trailers, life) {
    if (numbers[OPEN] !== 0) {
      queue(id, seq, SENT_HEAD, undefined, head, body, flags, trailers, life);
    } else {
      take();
      raw.send(id, seq, head, body, flags, trailers, life);
    }
  }

  const writeHeld = holdLimit(raw, numbers, HELD_AT, take);

  /** Whether responses wait in the queue. */
  const waiting = () => count !== 0;

  /**
   * JS ran what the addon handed it: when that was the last read of the batch's poll, no
   * later read adds to the queue, and handing it over now spares the batch's call.
   */
  function ranAll() {
    if (count !== 0 && numbers[OPEN] === LAST_READ) take();
  }

  return { respond, send, take, writeHeld, waiting, ranAll };
}

/**
 * The addon as lib/ calls it: `raw` with respond and send queued by `batch`, and every other
 * function taking the queue first. A wrapper passes the arguments it was given (the addon
 * refuses a missing or extra one as before).
 */
function guard(raw, batch) {
  const { take, waiting } = batch;
  const guarded = { ...raw, respond: batch.respond, send: batch.send };
  for (const name of Object.keys(raw)) {
    const f = raw[name];
    if (typeof f !== 'function' || name === 'respond' || name === 'send' ||
        name === 'respondBatch') continue;
    guarded[name] = function guarded() {
      if (waiting()) take();
      // V8 forwards `arguments` to apply without making the object.
      return Reflect.apply(f, undefined, arguments);
    };
  }
  return guarded;
}

module.exports = { makeResponseBatch, guard };
