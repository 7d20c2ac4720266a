'use strict';

// Looks for divergences outside the corpus: mutates corpus requests (insert, replace or drop
// bytes, with bytes and fragments that change llhttp's states) and runs each on node:http
// and fast-http (same write, with the follow-up), printing every new kind of difference.
// A finding becomes a corpus case. Not part of npm test (its inputs are random).
//
//   node test/strictness/explore.js [count] [seed]

const { load } = require('./corpus');
const { Servers, runCase, fast, nodeHttp } = require('./harness');

const count = Number(process.argv[2] || 2000);
let seed = Number(process.argv[3] || 1);

function rnd(n) {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
}

const PIECES = [
  ' ', '\t', '\r', '\n', '\r\n', '\x0b', '\x0c', '\0', '\x7f', '\x80', '\xff', ':', ';', ',',
  '"', '\\', '=', '/', '?', '#', '@', '-', '_', '*', 'a', 'f', 'F', 'x', '0', '1', 'G', 'E',
  'chunked', ';a', '="', '\\"', '\r\n ', ' HTTP/1.1', 'HTTP/1.0', '\r\n\r\n', '0\r\n\r\n',
  'Host: x\r\n', 'Transfer-Encoding: chunked\r\n', 'Content-Length: 3\r\n',
  'Connection: close\r\n', 'Expect: 100-continue\r\n', 'Upgrade: x\r\n',
];

/** Differences this file knows (see the corpus's todo and stricter cases). */
function known(raw, node, mine) {
  // node keeps parsing after its 400 for a missing Host.
  if (!/\nHost:/i.test(raw) && node.responses[0] &&
      /^HTTP\/1\.1 400/.test(node.responses[0].status)) return true;
  // Empty Transfer-Encoding: fast-http takes node 24's (stricter) answer.
  if (mine.clientErrors.some((e) => e.reason === 'Empty Transfer-Encoding')) return true;
  // Upgrade without a listener.
  return /upgrade/i.test(raw) && node.events.length === 0;
}

async function main() {
  const cases = load().filter((c) => c.raw.length < 2000 && !c.todo && !c.stricter &&
    c.listen.length === 0 && Object.keys(c.server).length === 0);
  const servers = [new Servers(nodeHttp), new Servers(fast())];
  const seen = new Set();
  let diffs = 0;
  for (let k = 0; k < count; k++) {
    const base = cases[rnd(cases.length)];
    let raw = base.raw;
    for (let m = 1 + rnd(2); m > 0; m--) {
      const at = rnd(raw.length + 1);
      const piece = PIECES[rnd(PIECES.length)];
      switch (rnd(3)) {
        case 0: raw = raw.slice(0, at) + piece + raw.slice(at); break;
        case 1: raw = raw.slice(0, at) + raw.slice(at + 1 + rnd(3)); break;
        default: raw = raw.slice(0, at) + piece + raw.slice(at + 1);
      }
    }
    const c = { ...base, raw, responses: undefined, followup: true };
    const node = await runCase(servers[0], c, 'same-write');
    const mine = await runCase(servers[1], c, 'same-write');
    if (node.timedOut && mine.timedOut) continue;
    if (JSON.stringify(node) === JSON.stringify(mine) || known(raw, node, mine)) continue;
    diffs++;
    const key = JSON.stringify([node, mine].map((o) => [
      o.clientErrors.map((e) => e.reason), o.requests.length, o.responses.map((r) => r.status),
    ]));
    if (seen.has(key)) continue;
    seen.add(key);
    console.log(`DIFF ${JSON.stringify(raw)}`);
    console.log(`  node:http ${JSON.stringify(node)}`);
    console.log(`  fast-http ${JSON.stringify(mine)}`);
  }
  console.log(`${count} mutations, ${diffs} differences (${seen.size} kinds)`);
  for (const s of servers) await s.close();
}

main();
