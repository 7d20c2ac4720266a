'use strict';
// The addon hands JS a group of events in one call, `onEvents(...values)` (src/binding/
// sink.rs): their numbers in a Float64Array it shares with JS — [group, count, ..., then per
// event its kind and numeric fields] — and their other fields (strings, Buffers, objects) as
// the call's arguments, each event's in declaration order. onEvents reads them back and calls
// the event's handler (lib/http/native-events.js) with its arguments, as the addon called
// each handler itself before batches (one crossing per group instead of one per event).
//
// `onBatch(...values)` takes the groups of many connections (what one poll of the loop read)
// in one call (issue #34 item 1): per group a header [events, connection], the connection's
// async resource as the group's first value, then its events. JS only
// queues them (lib/http/native-events.js says where each group begins, so that node's ticks
// and promise jobs run between two connections' events, as between two sockets' reads).
//
// The reading code is made once, from the addon's own declarations (`binding.contract`:
// each event callback's fields and which of them are numbers), so the two sides cannot
// disagree on an event's layout: a field added to a declaration is read here with no edit.

/**
 * The functions the addon calls with each group and each batch of groups. `callbacks`: the
 * contract's callback rows ([name, fields, returns, isEvent]); `handlers`: the event handlers
 * by name; `shared`: the array; `slots`: where its numbers are (the addon's EVENTS_*
 * constants); `waiting()`: whether JS holds events in its tick queue (written back into the
 * count slot when onEvents ends or throws); `ready(resource)`: whether the connection's
 * resource may run its groups in a batch (written back into the ready slot);
 * `beginGroup(k, id)`: onBatch's group k, of connection `id`, begins.
 */
function makeOnEvents(callbacks, handlers, shared, slots, waiting, ready, beginGroup) {
  const names = [];
  const fns = [];
  const cases = [];
  for (let kind = 0; kind < callbacks.length; kind++) {
    const [name, fields, , isEvent] = callbacks[kind];
    if (!isEvent) continue;
    if (typeof handlers[name] !== 'function') {
      throw new TypeError(`fast-http: no handler for the addon's '${name}' events`);
    }
    names.push(`h${kind}`);
    fns.push(handlers[name]);
    const args = fields.map(([, type, , numeric]) => {
      if (!numeric) return 'values[v++]';
      return type === 'boolean' ? 'EV[p++] !== 0' : 'int(EV[p++])';
    });
    cases.push(`case ${kind}: h${kind}.call(self, ${args.join(', ')}); break;`);
  }
  const dispatch = `switch (EV[p++]) {
          ${cases.join('\n          ')}
          default: throw new Error('fast-http: an event of unknown kind ' + EV[p - 1]);
        }`;
  // A double read from the array stays a boxed double when an object keeps it (a socket's
  // id: 32 B per idle connection); an integer that fits is made a small integer, as the
  // number N-API made for an argument was.
  const source = `const int = (n) => ((n | 0) === n ? n | 0 : n);
  function onEvents(...values) {
    const self = this;
    let p = ${slots.start};
    let v = 0;
    try {
      for (let n = EV[${slots.count}]; n > 0; n--) {
        ${dispatch}
      }
    } finally {
      EV[${slots.count}] = waiting() ? 1 : 0;
      EV[${slots.ready}] = ready(self) ? 1 : 0;
    }
  }
  function onBatch(...values) {
    const groups = EV[${slots.count}];
    const base = EV[${slots.group}];
    let p = EV[${slots.at}];
    let v = 0;
    for (let k = 0; k < groups; k++) {
      const n = EV[p];
      const id = int(EV[p + 1]);
      p += 2;
      const self = values[v++];
      EV[${slots.group}] = base + k;
      beginGroup(k, id);
      for (let i = n; i > 0; i--) {
        ${dispatch}
      }
    }
  }
  return { onEvents, onBatch };`;
  // Generated once at load from the addon's declarations: a switch V8 compiles like
  // hand-written code, with no per-event array of arguments (an allocation per request).
  return new Function('EV', 'waiting', 'ready', 'beginGroup', ...names, source)(
    shared, waiting, ready, beginGroup, ...fns);
}

module.exports = { makeOnEvents };
