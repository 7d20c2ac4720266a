'use strict';
// The addon hands JS a group of events in one call, `onEvents(...values)` (src/binding/
// sink.rs): their numbers in a Float64Array it shares with JS — [group, count, then per event
// its kind and numeric fields] — and their other fields (strings, Buffers, objects) as the
// call's arguments, each event's in declaration order. onEvents reads them back and calls
// the event's handler (lib/http/native-events.js) with its arguments, as the addon called
// each handler itself before batches (one crossing per group instead of one per event).
//
// The reading code is made once, from the addon's own declarations (`binding.contract`:
// each event callback's fields and which of them are numbers), so the two sides cannot
// disagree on an event's layout: a field added to a declaration is read here with no edit.

/**
 * The function the addon calls with each batch. `callbacks`: the contract's callback rows
 * ([name, fields, returns, isEvent]); `handlers`: the event handlers by name; `shared`: the
 * array; `slots`: where its group, count and first event are; `waiting()`: whether JS holds
 * events in its tick queue (written back into the count slot when the call ends or throws).
 */
function makeOnEvents(callbacks, handlers, shared, slots, waiting) {
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
    cases.push(`case ${kind}: h${kind}.call(this, ${args.join(', ')}); break;`);
  }
  // A double read from the array stays a boxed double when an object keeps it (a socket's
  // id: 32 B per idle connection); an integer that fits is made a small integer, as the
  // number N-API made for an argument was.
  const source = `const int = (n) => ((n | 0) === n ? n | 0 : n);
  return function onEvents(...values) {
    let p = ${slots.start};
    let v = 0;
    try {
      for (let n = EV[${slots.count}]; n > 0; n--) {
        switch (EV[p++]) {
          ${cases.join('\n          ')}
          default: throw new Error('fast-http: an event of unknown kind ' + EV[p - 1]);
        }
      }
    } finally {
      EV[${slots.count}] = waiting() ? 1 : 0;
    }
  };`;
  // Generated once at load from the addon's declarations: a switch V8 compiles like
  // hand-written code, with no per-event array of arguments (an allocation per request).
  return new Function('EV', 'waiting', ...names, source)(shared, waiting, ...fns);
}

module.exports = { makeOnEvents };
