'use strict';
// Where a hello response's JS heap goes, and the least it can be (issue #34 item 2).
//   - sites: V8's sampling heap profiler (every object, collected or not) over a wrk run against
//     a hello server in this process, in bytes per response by the function that allocated;
//     run with --no-turbo-inlining to name the inlined callee instead of its caller;
//   - floor: the heap of an object with exactly the own properties node's ServerResponse and
//     IncomingMessage have, on this Node: what a request/response pair with node's shape costs
//     before any state, listener, tick or closure.
//
//   taskset -c 0 node [--no-turbo-inlining] --expose-gc bench/profile/heap.js
//                     [--server fast|node] [--duration S] [--top N]
const inspector = require('node:inspector');
const { spawn } = require('node:child_process');
const path = require('node:path');
const nodeHttp = require('node:http');

function parseArgs(argv) {
  const o = { server: 'fast', duration: 3, top: 20 };
  for (let i = 0; i < argv.length; i += 2) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--server': o.server = v; break;
      case '--duration': o.duration = Number(v); break;
      case '--top': o.top = Number(v); break;
      default: throw new Error(`unknown option ${argv[i]}`);
    }
  }
  if (o.server !== 'fast' && o.server !== 'node') throw new Error(`unknown server ${o.server}`);
  return o;
}

const session = new inspector.Session();
session.connect();
const post = (method, params) => new Promise((resolve, reject) => {
  session.post(method, params ?? {}, (err, r) => (err ? reject(err) : resolve(r)));
});

function wrk(url, seconds) {
  return new Promise((resolve, reject) => {
    let out = '';
    const w = spawn('taskset', ['-c', '1', 'wrk', '-t1', '-c64', `-d${seconds}`, url]);
    w.stdout.on('data', (d) => { out += d; });
    w.on('error', reject);
    w.on('exit', () => {
      const m = /(\d+) requests in/.exec(out);
      if (m) resolve(Number(m[1]));
      else reject(new Error(`wrk failed:\n${out}`));
    });
  });
}

/** Bytes per response by allocating function, over one wrk run. */
async function sites(http, seconds) {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('Hello World');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  await wrk(url, 2); // warm up: the JIT's code, the server's pools
  await post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const responses = await wrk(url, seconds);
  const { profile } = await post('HeapProfiler.stopSampling');
  await new Promise((resolve) => server.close(resolve));
  const bySite = new Map();
  (function walk(node) {
    const f = node.callFrame;
    if (node.selfSize > 0) {
      const site = `${f.functionName || '(anonymous)'} ${path.basename(f.url) || '(native)'}:${f.lineNumber + 1}`;
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child);
  })(profile.head);
  let total = 0;
  for (const v of bySite.values()) total += v;
  return { responses, perResponse: total / responses, bySite };
}

/** Heap bytes of one object made by a constructor that sets exactly `keys`. */
function bytesOfShape(keys) {
  const body = keys.map((_, i) => `this[k[${i}]] = null;`).join('\n');
  const Shape = new Function('k', `return function Shape() { ${body} }`)(keys);
  const n = 100000;
  const keep = new Array(n);
  for (let i = 0; i < 1000; i++) new Shape(); // slack tracking settles the instance size
  global.gc();
  global.gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) keep[i] = new Shape();
  global.gc();
  global.gc();
  const after = process.memoryUsage().heapUsed;
  // `keep` must outlive the measurement (a dead array would be collected by it).
  if (keep[n - 1] === null) throw new Error('unreachable');
  return (after - before) / n;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  // First, in a quiet heap: the shapes of node's own objects on this Node.
  let floor = null;
  if (typeof global.gc === 'function') {
    const req = new nodeHttp.IncomingMessage(null);
    const resKeys = Reflect.ownKeys(new nodeHttp.ServerResponse(req));
    const reqKeys = Reflect.ownKeys(req);
    floor = { resKeys, reqKeys, res: bytesOfShape(resKeys), req: bytesOfShape(reqKeys) };
  }
  const http = o.server === 'fast' ? require('../..') : nodeHttp;
  const r = await sites(http, o.duration);
  console.log(`# JS heap per hello response — ${o.server === 'fast' ? 'fast-http' : 'node:http'} on Node ${process.version}`);
  console.log(`${r.responses} responses, ${Math.round(r.perResponse)} B allocated per response (sampled)`);
  const top = [...r.bySite].sort((a, b) => b[1] - a[1]).slice(0, o.top);
  for (const [site, bytes] of top) console.log(`${(bytes / r.responses).toFixed(1).padStart(8)} B  ${site}`);
  if (floor === null) {
    console.log('(run with --expose-gc for the floor of node\'s shapes)');
    return;
  }
  console.log('# floor: an object with exactly node\'s own properties, nothing else');
  console.log(`ServerResponse, ${floor.resKeys.length} own properties: ${floor.res.toFixed(0)} B`);
  console.log(`IncomingMessage, ${floor.reqKeys.length} own properties: ${floor.req.toFixed(0)} B`);
  console.log(`the pair: ${(floor.res + floor.req).toFixed(0)} B`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
