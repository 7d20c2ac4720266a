'use strict';
// Sockets by connection id (lib/internal/socket-table.js): an id names one connection, so an
// id whose slot a later connection reuses (same index, another generation) finds nothing.
const test = require('node:test');
const assert = require('node:assert/strict');
const { SocketTable } = require('../lib/internal/socket-table');
const { kId, kClosed } = require('../lib/internal/symbols');
const { flags } = require('../lib/internal/native');

const socket = (id) => ({ [kId]: id });
// The addon's ids: generation << 22 | slot index (src/reactor/slots.rs), below 2^53.
const idOf = (gen, index) => gen * 2 ** 22 + index;

test('a stale id of a reused slot finds nothing and removes nothing', () => {
  const table = new SocketTable(flags.ID_INDEX_MASK);
  const old = idOf(1, 7);
  const reused = idOf(2, 7);
  table.set(old, { ...socket(old), [kClosed]: true });
  assert.equal(table.get(old)[kId], old);
  const s = socket(reused);
  table.set(reused, s);
  assert.equal(table.get(old), undefined);
  table.delete(old);
  assert.equal(table.get(reused), s);
  table.delete(reused);
  assert.equal(table.get(reused), undefined);
});

// The addon frees a slot when its connection goes, and JS hears of that ('close') after the
// batch, which may bring the slot's next connection first (a client that resets during its
// TLS handshake, then connects again): the socket that waits for its close stays found.
test('a socket whose slot is reused before its close is still found by its id', () => {
  const table = new SocketTable(flags.ID_INDEX_MASK);
  const old = idOf(1, 7);
  const reused = idOf(2, 7);
  const a = socket(old);
  const b = socket(reused);
  table.set(old, a);
  table.set(reused, b);
  assert.equal(table.get(old), a);
  assert.equal(table.get(reused), b);
  const seen = [];
  table.forEach((s) => seen.push(s[kId]));
  assert.deepEqual(seen.sort(), [old, reused].sort());
  table.delete(old);
  assert.equal(table.get(old), undefined);
  assert.equal(table.get(reused), b);
  assert.equal(table.displaced.size, 0);
});

test('ids past 32 bits keep their slot', () => {
  const table = new SocketTable(flags.ID_INDEX_MASK);
  const big = idOf(2 ** 30, 12345);
  const s = socket(big);
  table.set(big, s);
  assert.equal(table.get(big), s);
  assert.equal(table.slots[12345], s);
});
