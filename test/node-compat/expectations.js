'use strict';

// expectations.json lists every test that does not pass under fast-http, per
// Node major: { "node20": { "test-http-foo.js": { "status", "reason", "tree"? } } }.
// Keys are file names for test/parallel and "sequential/<name>" for
// test/sequential.
//
// Every reason says which of two kinds the entry is, by how it starts:
//   "fast-http: ..."                 passes on stock Node, not on fast-http: a difference
//                                    to fix, with its root cause;
//   "fails on stock ..." / "times out on stock ..." / "skipped on stock ..."
//                                    stock Node (same binary, same tree, --baseline) does
//                                    no better: nothing for fast-http to fix.
// "tree" (a version or a list of them) limits an entry to runs against that test tree:
// a stock failure that comes from the tree being older than the binary goes away with a
// newer tree, and must then not be reported as stale (nor hide a new failure).

const fs = require('node:fs');

const STATUSES = new Set(['fail', 'timeout', 'unserved', 'skip']);
const KINDS = [
  ['fast-http', /^fast-http: /],
  ['stock', /^(?:fails|times out|skipped) on stock /],
];

/** 'fast-http' or 'stock', from the reason's first words; null for anything else. */
function kindOf(entry) {
  const k = KINDS.find(([, re]) => re.test(entry.reason || ''));
  return k ? k[0] : null;
}

// How close a status is to a native pass. A move down is a regression, a move
// up means the entry is stale. fail <-> timeout flips with machine load and
// says nothing new about fast-http, so it is only noted.
const RANK = { fail: 0, timeout: 0, unserved: 1, skip: 1, pass: 2 };

function load(file) {
  let data;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    if (err.code === 'ENOENT') return {};
    throw new Error(`${file}: ${err.message}`);
  }
  for (const [major, entries] of Object.entries(data)) {
    for (const [name, e] of Object.entries(entries)) {
      if (!e || !STATUSES.has(e.status)) {
        throw new Error(`${file}: ${major}/${name}: status must be one of ${[...STATUSES].join(', ')}`);
      }
      if (kindOf(e) === null && e.reason !== 'TODO') {
        throw new Error(`${file}: ${major}/${name}: the reason must start with "fast-http: " ` +
          '(a fast-http difference) or "fails on stock " / "times out on stock " / ' +
          '"skipped on stock " (stock Node does no better)');
      }
      if (e.tree !== undefined && !treesOf(e).every((t) => /^\d+\.\d+\.\d+$/.test(t))) {
        throw new Error(`${file}: ${major}/${name}: tree must be a version or a list of versions`);
      }
    }
  }
  return data;
}

function treesOf(e) {
  return e.tree === undefined ? [] : [].concat(e.tree);
}

/** The entries of one major that apply to a run against the tests of `treeVersion`. */
function forTree(entries, treeVersion) {
  const out = {};
  for (const [name, e] of Object.entries(entries || {})) {
    if (e.tree === undefined || treesOf(e).includes(treeVersion)) out[name] = e;
  }
  return out;
}

/**
 * Compares the results of the tests that ran with their expectations; entries
 * for tests that did not run (filtered out, --https not given) are ignored.
 * @param {Map<string, {status: string, reason?: string}>} results
 * @param {object} expected  entries of the current major
 */
function compare(results, expected) {
  const regressions = []; // worse than listed (a non-pass that is not listed at all included)
  const stale = []; // better than listed, or listed with another status of the same rank
  const flipped = []; // fail <-> timeout
  for (const [name, r] of results) {
    const e = expected[name];
    const want = e ? e.status : 'pass';
    if (want === r.status) continue;
    const x = { name, status: r.status, expected: want, reason: r.reason, listedReason: e && e.reason };
    if (RANK[r.status] < RANK[want]) regressions.push(x);
    else if (RANK[r.status] > RANK[want] || r.status === 'skip' || want === 'skip') stale.push(x);
    else flipped.push(x);
  }
  const byName = (a, b) => (a.name < b.name ? -1 : 1);
  return { regressions: regressions.sort(byName), stale: stale.sort(byName), flipped: flipped.sort(byName) };
}

// Rewrites the current major's entries for the tests that ran, keeping the
// reasons a human wrote; new entries get "TODO". Entries for another tree are
// left alone.
function update(file, data, majorKey, results, treeVersion) {
  const entries = { ...(data[majorKey] || {}) };
  const applies = forTree(entries, treeVersion);
  const n = { added: 0, changed: 0, removed: 0 };
  for (const [name, r] of results) {
    if (entries[name] && !applies[name]) continue;
    const old = entries[name];
    if (r.status === 'pass') {
      if (old) n.removed++;
      delete entries[name];
    } else {
      if (!old) n.added++;
      else if (old.status !== r.status) n.changed++;
      entries[name] = { ...old, status: r.status, reason: (old && old.reason) || 'TODO' };
    }
  }
  const sorted = {};
  for (const k of Object.keys(entries).sort()) sorted[k] = entries[k];
  const out = { ...data, [majorKey]: sorted };
  const ordered = {};
  for (const k of Object.keys(out).sort()) ordered[k] = out[k];
  fs.writeFileSync(file, `${JSON.stringify(ordered, null, 2)}\n`);
  n.todo = Object.values(sorted).filter((e) => e.reason === 'TODO').length;
  return n;
}

module.exports = { load, compare, update, forTree, kindOf, STATUSES };
