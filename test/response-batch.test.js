'use strict';
// lib/internal/response-batch.js over a recording stand-in for the addon: what a batch queues
// reaches respondBatch in the order it ended, every response's values and numbers intact,
// however many there are; outside a batch a response goes at once; and no other call into
// the addon overtakes a queued response.
const test = require('node:test');
const assert = require('node:assert/strict');
const { makeResponseBatch, guard } = require('../lib/internal/response-batch');
const { constants: c } = require('../lib/internal/native');

/** A stand-in addon recording its calls as [name, ...arguments], responses as they arrive. */
function recorder(numbers) {
  const calls = [];
  const raw = {
    respond: (...a) => calls.push(['respond', ...a]),
    send: (...a) => calls.push(['send', ...a]),
    respondBatch(first, ...values) {
      for (let i = 0; i * 4 < values.length; i++) {
        const at = c.RESPONSES_START + (first + i) * c.RESPONSE_NUMBERS;
        const [id, seq, status, flags, life] = numbers.slice(at, at + c.RESPONSE_NUMBERS);
        const [reason, lines, body, trailers] = values.slice(i * 4, i * 4 + 4);
        calls.push(['queued', id, seq, status, reason, lines, body, flags, trailers, life]);
      }
      calls.push(['call', values.length / 4]);
    },
    destroy: (...a) => calls.push(['destroy', ...a]),
    writeBatch: () => calls.push(['writeBatch']),
  };
  return { raw, calls };
}

function setup(max = 64) {
  const numbers = new Float64Array(c.RESPONSES_START + max * c.RESPONSE_NUMBERS);
  const { raw, calls } = recorder(numbers);
  const batch = makeResponseBatch(raw, numbers, c);
  return { numbers, calls, batch, binding: guard(raw, batch) };
}

test('outside a batch a response goes to the addon at once', { timeout: 10000 }, () => {
  const { calls, binding } = setup();
  binding.respond(7, 1, 200, undefined, 'A: b\r\n', 'hi', 3, undefined, 0);
  binding.send(7, 2, 'HTTP/1.1 200 OK\r\n\r\n', undefined, 4, undefined, 1);
  assert.deepEqual(calls, [
    ['respond', 7, 1, 200, undefined, 'A: b\r\n', 'hi', 3, undefined, 0],
    ['send', 7, 2, 'HTTP/1.1 200 OK\r\n\r\n', undefined, 4, undefined, 1],
  ]);
});

test('a batch hands its responses over in the order they ended, 16 a call',
  { timeout: 10000 }, () => {
    const { numbers, calls, batch, binding } = setup();
    numbers[c.RESPONSES_OPEN] = c.BATCH_OPEN;
    const body = Buffer.from('body');
    const expected = [];
    for (let i = 0; i < 37; i++) {
      if (i % 3 === 0) {
        binding.send(i, i + 1, `head ${i}`, body, i, undefined, 1);
        expected.push(['queued', i, i + 1, c.SENT_HEAD, undefined, `head ${i}`, body, i,
          undefined, 1]);
      } else {
        binding.respond(i, i + 1, 200 + i, `R${i}`, `L${i}`, `b${i}`, i, `T${i}`, 0);
        expected.push(['queued', i, i + 1, 200 + i, `R${i}`, `L${i}`, `b${i}`, i, `T${i}`, 0]);
      }
    }
    assert.equal(calls.length, 0, 'nothing handed over during the batch');
    assert.equal(numbers[c.RESPONSES_COUNT], 37);
    batch.take();
    assert.deepEqual(calls.filter((x) => x[0] === 'call'), [['call', 16], ['call', 16], ['call', 5]]);
    assert.deepEqual(calls.filter((x) => x[0] === 'queued'), expected);
    assert.equal(numbers[c.RESPONSES_COUNT], 0);
    assert.equal(batch.waiting(), false);
    calls.length = 0;
    batch.take();
    assert.deepEqual(calls, [], 'an empty queue makes no call');
  });

test('a full queue is handed over before the next response joins it', { timeout: 10000 }, () => {
  const { numbers, calls, binding } = setup(2);
  numbers[c.RESPONSES_OPEN] = c.BATCH_OPEN;
  for (let i = 0; i < 5; i++) binding.respond(i, 0, 200, undefined, '', undefined, 0, undefined, 0);
  assert.deepEqual(calls.filter((x) => x[0] === 'call'), [['call', 2], ['call', 2]]);
  assert.deepEqual(calls.filter((x) => x[0] === 'queued').map((x) => x[1]), [0, 1, 2, 3]);
  assert.equal(numbers[c.RESPONSES_COUNT], 1);
});

test('no other call into the addon overtakes a queued response', { timeout: 10000 }, () => {
  const { numbers, calls, binding } = setup();
  numbers[c.RESPONSES_OPEN] = c.BATCH_OPEN;
  binding.respond(1, 0, 200, undefined, '', 'bye', 0, undefined, 0);
  binding.destroy(1, false, -1);
  assert.deepEqual(calls.map((x) => x[0]), ['queued', 'call', 'destroy']);
  assert.deepEqual(calls[2], ['destroy', 1, false, -1], 'the arguments pass as given');
  // The batch closed with a response still queued (the addon then asks for it at once): a
  // response made now does not overtake it either.
  binding.respond(2, 0, 200, undefined, '', 'one', 0, undefined, 0);
  numbers[c.RESPONSES_OPEN] = 0;
  binding.respond(2, 1, 200, undefined, '', 'two', 0, undefined, 0);
  assert.deepEqual(calls.slice(3).map((x) => [x[0], x[2]]),
    [['queued', 0], ['call', undefined], ['respond', 1]]);
});

test('after the last read of a poll the tick queue hands the queue over itself',
  { timeout: 10000 }, () => {
    const { numbers, calls, batch, binding } = setup();
    numbers[c.RESPONSES_OPEN] = c.BATCH_OPEN;
    binding.respond(1, 0, 200, undefined, '', 'a', 0, undefined, 0);
    batch.ranAll();
    assert.equal(calls.length, 0, 'more reads of the poll may join the batch');
    numbers[c.RESPONSES_OPEN] = c.BATCH_LAST_READ;
    batch.ranAll();
    assert.deepEqual(calls.map((x) => x[0]), ['queued', 'call']);
  });

test('a batch that has held a response for 5 ms writes what it holds before the next ' +
  'connection\'s requests; a younger one waits for the batch\'s end', { timeout: 10000 }, () => {
  const { numbers, calls, batch, binding } = setup();
  numbers[c.RESPONSES_OPEN] = c.BATCH_OPEN;
  batch.writeHeld();
  assert.deepEqual(calls, [], 'nothing held');
  binding.respond(1, 0, 200, undefined, '', 'a', 0, undefined, 0);
  const heldAt = numbers[c.RESPONSES_HELD_AT];
  assert.ok(heldAt > 0, 'the queue says since when it holds a response');
  binding.respond(2, 0, 200, undefined, '', 'b', 0, undefined, 0);
  assert.equal(numbers[c.RESPONSES_HELD_AT], heldAt, 'since the first');
  batch.writeHeld();
  assert.deepEqual(calls, [], 'held for less than 5 ms');
  numbers[c.RESPONSES_HELD_AT] = heldAt - 5;
  batch.writeHeld();
  assert.deepEqual(calls.map((x) => x[0]), ['queued', 'queued', 'call', 'writeBatch']);
});
