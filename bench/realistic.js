'use strict';

// The realistic row's app (issue #34 item 6): a JSON API over a live heap. The heap is a Map of
// user records (with their orders), sized by BENCH_LIVE_HEAP_MB (default 150 MB of V8 heap);
// a request `GET /user/<id>` does one lookup, builds about 20 small objects from the user and
// the records it is related to, and answers about 1 KB of JSON.stringify'd output. Where hello
// measures the server alone, here the app's own work and its garbage collection dominate, as
// in real apps: an old generation this size makes every full collection expensive, so what a
// server adds per request (garbage, promoted survivors) shows up as GC time.
//
// Every record is a pure function of its id (a seeded generator, no Math.random), so every
// server on every runtime holds the same data and serves the same bytes, and bench/run.js can
// compute the expected body of any id without building the heap.

const DEFAULT_LIVE_HEAP_MB = 150;
// V8 heap bytes one record takes (the record, its strings, arrays and orders), measured on
// Node 20 (heapUsed after a full GC, around building 100,000 of them: 1,741 B); it turns a heap
// size into a record count. Other engines lay objects out differently: the run reports each
// server's RSS once the heap is built.
const BYTES_PER_RECORD = 1740;
const RELATED = 6;
const ORDERS = 8;

const CITIES = ['Lisbon', 'Osaka', 'Nairobi', 'Lima', 'Oslo', 'Austin', 'Pune', 'Leeds', 'Perth', 'Quito',
  'Turin', 'Busan', 'Accra', 'Cork', 'Graz', 'Hanoi'];
const FIRST = ['Ada', 'Grace', 'Linus', 'Ken', 'Barbara', 'Alan', 'Radia', 'Edsger', 'Margaret', 'Dennis',
  'Frances', 'Donald', 'Sophie', 'Tim', 'Anita', 'John'];
const LAST = ['Lovelace', 'Hopper', 'Torvalds', 'Thompson', 'Liskov', 'Turing', 'Perlman', 'Dijkstra',
  'Hamilton', 'Ritchie', 'Allen', 'Knuth', 'Wilson', 'Berners-Lee', 'Borg', 'McCarthy'];
const STATUS = ['pending', 'paid', 'shipped', 'delivered', 'returned'];
const SKUS = ['SKU-A100', 'SKU-B220', 'SKU-C310', 'SKU-D404', 'SKU-E512', 'SKU-F618', 'SKU-G777', 'SKU-H808'];

/** Records for a heap of `mb` megabytes (ids 1..count). */
function recordCount(mb = DEFAULT_LIVE_HEAP_MB) {
  return Math.max(1000, Math.round((mb * 1e6) / BYTES_PER_RECORD));
}

/** A 32-bit hash of (id, salt): the deterministic "random" every field is drawn from. */
function mix(id, salt) {
  let h = Math.imul(id ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(salt + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** User record `id` of a heap of `count` records (related ids stay within 1..count). */
function makeRecord(id, count) {
  const first = FIRST[mix(id, 1) % FIRST.length];
  const last = LAST[mix(id, 2) % LAST.length];
  const related = [];
  for (let i = 0; i < RELATED; i++) related.push(1 + (mix(id, 10 + i) % count));
  const orders = [];
  for (let i = 0; i < ORDERS; i++) {
    const h = mix(id, 20 + i);
    orders.push({
      id: id * 100 + i,
      cents: 500 + (h % 250000),
      items: 1 + (h % 7),
      sku: SKUS[(h >>> 8) % SKUS.length],
      status: (h >>> 12) % STATUS.length,
      placed: 1700000000000 + (h % 31536000) * 1000,
    });
  }
  return {
    id,
    // Built strings (not the constants themselves): each record owns its strings, as records
    // read from a database do.
    name: `${first} ${last}`,
    email: `${first}.${last}.${id}@example.com`.toLowerCase(),
    city: CITIES[mix(id, 3) % CITIES.length],
    joined: 1500000000000 + (mix(id, 4) % 200000000) * 1000,
    score: mix(id, 5) % 1000,
    verified: (mix(id, 6) & 1) === 1,
    tags: [`t${mix(id, 7) % 50}`, `t${mix(id, 8) % 50}`, `t${mix(id, 9) % 50}`],
    related,
    orders,
  };
}

/** The live heap: a Map of `count` records, keyed by id. */
function buildHeap(count) {
  const map = new Map();
  for (let id = 1; id <= count; id++) map.set(id, makeRecord(id, count));
  return map;
}

/**
 * The response body for user `id`, or null when there is none. `get(id)` returns a record:
 * map.get in the servers, makeRecord in the proof. Per request: 1 lookup of the user and 6 of
 * related users, and 20 objects built (the reply, the user, 6 friends, 8 orders, stats, meta and
 * 2 arrays), about 1 KB of JSON.
 */
function render(id, get) {
  const u = get(id);
  if (u === undefined) return null;
  const friends = u.related.map((rid) => {
    const f = get(rid);
    return { id: f.id, name: f.name, city: f.city, score: f.score };
  });
  let spent = 0;
  const orders = u.orders.map((o) => {
    spent += o.cents;
    return { id: o.id, total: o.cents / 100, items: o.items, status: STATUS[o.status] };
  });
  return JSON.stringify({
    user: {
      id: u.id, name: u.name, email: u.email, city: u.city, verified: u.verified,
      joined: new Date(u.joined).toISOString(), tags: u.tags,
    },
    friends,
    orders,
    stats: { orders: orders.length, spent: spent / 100, friends: friends.length, score: u.score },
    meta: { api: 'v1', cached: false },
  });
}

/** The id in a `/user/<id>` path (NaN when it is not one). */
function idFromPath(url) {
  return url.startsWith('/user/') ? Number(url.slice(6)) : NaN;
}

/** The heap size asked for (megabytes), from the environment bench/run.js sets. */
function liveHeapMb(env = process.env) {
  const mb = Number(env.BENCH_LIVE_HEAP_MB || DEFAULT_LIVE_HEAP_MB);
  if (!Number.isFinite(mb) || mb < 0) throw new Error(`bad BENCH_LIVE_HEAP_MB "${env.BENCH_LIVE_HEAP_MB}"`);
  return mb;
}

module.exports = {
  DEFAULT_LIVE_HEAP_MB, BYTES_PER_RECORD, recordCount, makeRecord, buildHeap, render, idFromPath, liveHeapMb,
};
