'use strict';

// GC pause time from a runtime's own GC log, for the servers where perf_hooks' 'gc' entries
// are not there: Deno (V8's --trace-gc, on stdout; its perf_hooks observer accepts 'gc' but
// never delivers an entry) and Bun (JavaScriptCore's logGC, BUN_JSC_logGC=1, on stderr; Bun
// has no 'gc' entries). What is summed is the same thing perf_hooks' entries measure on Node:
// time the main thread stood still for the collector (V8: the pause of each scavenge or
// mark-compact, without its incremental steps; JSC: each stop-the-world phase's "p=" pause).

// V8, one line per collection:
//   [123:0x55d0]  178 ms: Scavenge 48.9 (66.0) -> 41.7 (70.7) MB, pooled: 0.0 MB, 13.97 / 0.00 ms (...)
//   [123:0x55d0]  218 ms: Mark-Compact 86.8 (104.0) -> 8.1 (49.7) MB, 8.83 / 0.00 ms (+ 0.4 ms in 3 steps ...)
// The first number of "<pause> / <external callbacks> ms" is the pause.
const V8_LINE = /^\[\d+:0x[0-9a-f]+\]\s+[\d.]+ ms: .*?MB, (?:[a-z]+: [\d.]+ MB, )*([\d.]+) \/ [\d.]+ ms/;

// JSC: a collection is a "START" line, then a line per phase, each with "p=<pause>ms".
const JSC_PAUSE = /\bp=([\d.]+)ms/g;
const JSC_START = /: START /;

/** { ms, count } a line of V8's --trace-gc adds, or null when it is not one. */
function v8Line(line) {
  const m = V8_LINE.exec(line);
  return m ? { ms: Number(m[1]), count: 1 } : null;
}

/** { ms, count } a line of JSC's logGC adds, or null when it has no pause. */
function jscLine(line) {
  let ms = 0;
  let seen = false;
  for (const m of line.matchAll(JSC_PAUSE)) {
    ms += Number(m[1]);
    seen = true;
  }
  const count = JSC_START.test(line) ? 1 : 0;
  return seen || count ? { ms, count } : null;
}

/**
 * A running total over a stream of log text: feed() it chunks as they come (lines may be split
 * between chunks); `totals` is { ms, count } so far.
 */
function gcLog(kind) {
  const parse = kind === 'v8' ? v8Line : jscLine;
  let rest = '';
  const totals = { ms: 0, count: 0 };
  return {
    totals,
    feed(chunk) {
      const text = rest + chunk;
      const lines = text.split('\n');
      rest = lines.pop();
      for (const line of lines) {
        const r = parse(line);
        if (r) {
          totals.ms += r.ms;
          totals.count += r.count;
        }
      }
    },
  };
}

module.exports = { v8Line, jscLine, gcLog };
