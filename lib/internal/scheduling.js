'use strict';
// The scheduling functions and clock fast-http's server runs on, taken when it loads, as
// node's own modules take theirs (`require('timers')`, internal task_queues, primordials'
// Date): fake timers (@sinonjs/fake-timers, jest, vitest) replace the globals (and
// node:timers' exports) afterwards and must not catch the server's own timers, ticks or Date
// header (issue #30).

const timers = require('node:timers');

module.exports = {
  setTimeout: timers.setTimeout,
  clearTimeout: timers.clearTimeout,
  setInterval: timers.setInterval,
  clearInterval: timers.clearInterval,
  setImmediate: timers.setImmediate,
  clearImmediate: timers.clearImmediate,
  queueMicrotask: globalThis.queueMicrotask,
  nextTick: process.nextTick,
  Date: globalThis.Date,
  // fake-timers replace performance.now on the one performance object.
  now: globalThis.performance.now.bind(globalThis.performance),
};
