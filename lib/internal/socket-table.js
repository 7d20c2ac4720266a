'use strict';

// Socket objects by native connection id, in an array indexed by the id's slot index
// (ids are slot index + generation; no two open connections share an index). A Map of
// 10,000 sockets costs ~46 B each in its backing store; this costs one pointer
// (issue #20's memory per idle connection).

const { kId } = require('./symbols');

class SocketTable {
  constructor(mask) {
    this.mask = mask;
    this.slots = [];
  }

  get(id) {
    const s = this.slots[id & this.mask];
    return s !== undefined && s[kId] === id ? s : undefined;
  }

  set(id, socket) {
    this.slots[id & this.mask] = socket;
  }

  /** Calls `fn(socket)` for every socket in the table. */
  forEach(fn) {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i++) {
      if (slots[i] !== undefined) fn(slots[i]);
    }
  }

  delete(id) {
    const i = id & this.mask;
    const s = this.slots[i];
    if (s !== undefined && s[kId] === id) this.slots[i] = undefined;
  }
}

module.exports = { SocketTable };
