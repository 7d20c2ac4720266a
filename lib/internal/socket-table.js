'use strict';

// Socket objects by native connection id, in an array indexed by the id's slot index
// (ids are slot index + generation; no two open connections share an index in the addon,
// though JS may still hold the last one of a slot until its 'close'). A Map of
// 10,000 sockets costs ~46 B each in its backing store; this costs one pointer
// (issue #20's memory per idle connection).

const { kId, kClosed } = require('./symbols');

class SocketTable {
  constructor(mask) {
    this.mask = mask;
    this.slots = [];
    /** Sockets whose slot a newer connection took before their 'close' (rare). */
    this.displaced = null;
  }

  get(id) {
    const s = this.slots[id & this.mask];
    if (s !== undefined && s[kId] === id) return s;
    return this.displaced === null ? undefined : this.displaced.get(id);
  }

  set(id, socket) {
    const i = id & this.mask;
    const old = this.slots[i];
    // The addon reuses a slot as soon as its connection is gone, and JS hears of that
    // ('close') after the batch, which may bring the slot's next connection first: the old
    // socket moves aside until its close.
    if (old !== undefined && old[kId] !== id && old[kClosed] !== true) {
      (this.displaced ??= new Map()).set(old[kId], old);
    }
    this.slots[i] = socket;
  }

  /** Calls `fn(socket)` for every socket in the table. */
  forEach(fn) {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i++) {
      if (slots[i] !== undefined) fn(slots[i]);
    }
    if (this.displaced !== null) [...this.displaced.values()].forEach(fn);
  }

  delete(id) {
    const i = id & this.mask;
    const s = this.slots[i];
    if (s !== undefined && s[kId] === id) this.slots[i] = undefined;
    else if (this.displaced !== null) this.displaced.delete(id);
  }
}

module.exports = { SocketTable };
