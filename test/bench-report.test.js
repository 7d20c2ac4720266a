'use strict';
// What `npm run bench` hands a user, from a results object of the shape bench/run.js makes:
// the Markdown table (machine, exact command, each column's package, rows where wrk was the
// limit marked), the files written only where asked, and a default folder git ignores, so a
// run never changes a tracked file.
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');
const report = require('../bench/lib/report');

const root = path.join(__dirname, '..');

function summary(median) {
  return { median, min: median, max: median, n: 1 };
}

function timedRow(server, label, rps, cpuUsPerReq, clientCpu) {
  return {
    server, label, status: 'ok', warnings: [], clientBound: clientCpu >= 0.9,
    proof: { responseBytes: 178 },
    summary: {
      rps: summary(rps), cpuUsPerReq: summary(cpuUsPerReq), p99Ms: summary(1),
      serverCpu: summary(1), clientCpu: summary(clientCpu),
    },
  };
}

function results() {
  const r = {
    meta: {
      date: '2026-12-04T10:00:00.000Z', command: 'npm run bench', node: 'v20.20.2',
      cpu: 'AMD EPYC', cpus: 2, kernel: 'Linux 6.1', git: 'abc1234',
      pinning: { server: 0, loadGenerator: 1 }, clientBound: 0.9,
      servers: {
        fast: 'fast-http-native 0.1.0 (git abc1234) on Node v20.20.2',
        node: 'node:http and node:https of Node v20.20.2',
        uws: '@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0, uws_linux_x64_115.node ' +
          "(an unofficial npm republish of uWebSockets.js's binaries)",
      },
    },
    options: {
      servers: ['fast', 'node', 'uws'], rounds: 5, duration: 3, warmup: 1, connections: 64,
      memConns: 5000, tlsIdleConns: 10000, workloads: ['hello', 'memory'],
    },
    notes: [],
    workloads: [
      { name: 'hello', title: 'hello (writeHead + end)', rows: [
        timedRow('fast', 'fast-http', 110000, 9, 0.97),
        timedRow('node', 'node:http', 64000, 15, 0.7),
        timedRow('uws', 'uWebSockets.js', 160000, 7, 0.99),
      ] },
      { name: 'memory', title: 'RSS per idle keep-alive connection', memory: true, conns: 5000,
        rows: [
          { server: 'fast', label: 'fast-http', status: 'ok', warnings: [],
            summary: { bytesPerConn: summary(1500), rssBefore: summary(1e6), rssAfter: summary(2e6) } },
          { server: 'node', label: 'node:http', status: 'ok', warnings: [],
            summary: { bytesPerConn: summary(9000), rssBefore: summary(1e6), rssAfter: summary(2e6) } },
          { server: 'uws', label: 'uWebSockets.js', status: 'unavailable', error: 'no binary',
            warnings: [] },
        ] },
    ],
  };
  report.addRatios(r);
  return r;
}

test('the Markdown table: machine and command, node:http first, ‡ on wrk-bound req/s', () => {
  const md = report.markdown(results()).split('\n');
  assert.equal(md[0], '`npm run bench` on AMD EPYC, 2 CPUs (Linux 6.1), Node v20.20.2, ' +
    '2026-12-04, fast-http at abc1234: servers on CPU 0, load generator on CPU 1, 5 ' +
    "alternating rounds of 3 s per server, wrk -t1 -c64; medians, (×) against node:http's.");
  assert.deepEqual(md.slice(2, 7), [
    '| workload | node:http | fast-http | uWebSockets.js |',
    '|---|---|---|---|',
    '| hello (writeHead + end): req/s | 64,000 | 110,000 (1.72×) ‡ | 160,000 (2.50×) ‡ |',
    '| hello (writeHead + end): CPU µs/request | 15.0 | 9.00 (0.60×) | 7.00 (0.47×) |',
    '| RSS per idle keep-alive connection, 5000 connections | 8.79 KiB | 1.46 KiB (0.17×) | ' +
      'not available |',
  ]);
  assert.ok(md.includes('- uWebSockets.js: @trufflesuite/uws-js-unofficial@20.30.0-unofficial.0, ' +
    "uws_linux_x64_115.node (an unofficial npm republish of uWebSockets.js's binaries)"));
  assert.ok(md.some((l) => l.startsWith('- ‡ wrk used ≥ 90 % of its core')), md.join('\n'));
});

test('memory rows read after --mem-settle say how long they waited, in both tables', () => {
  const r = results();
  r.options.memSettle = 20;
  const md = report.markdown(r);
  assert.match(md, /\n\| RSS per idle keep-alive connection, 5000 connections, after 20 s \| 8\.79 KiB \|/);
  assert.match(report.table(r), /\nRSS per idle keep-alive connection \(5000 connections, 1 request each, then idle, read after 20 s\)\n/);
  // The default reading (0.3 s and 0.7 s) keeps its titles.
  assert.doesNotMatch(report.markdown(results()), /after \d+ s/);
});

test('the stdout table names the packages and marks wrk-bound rows', () => {
  const text = report.table(results());
  assert.match(text, /\n {2}uWebSockets\.js: @trufflesuite\/uws-js-unofficial@20\.30\.0-unofficial\.0/);
  assert.match(text, /\n {2}fast-http +110,000 \(110,000–110,000\) ‡ +1\.72×/);
  assert.match(text, /\n {2}node:http +64,000 \(64,000–64,000\) +1\.00×/);
  assert.match(text, /\n‡ wrk used ≥ 90 % of its core/);
});

test('files go where asked; the default folder is one git ignores', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-bench-report-'));
  try {
    const files = report.write(results(), dir);
    assert.deepEqual(fs.readdirSync(dir).sort(),
      ['2026-12-04T10-00-00-000Z.json', 'latest.json', 'latest.md', 'latest.svg']);
    assert.equal(fs.readFileSync(files.markdown, 'utf8'), report.markdown(results()));
    assert.match(fs.readFileSync(files.svg, 'utf8'), /‡ wrk-bound/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // Outside a git checkout (a packed copy) there is nothing to ask.
  if (!fs.existsSync(path.join(root, '.git'))) return;
  const names = ['bench/results/latest.svg', 'bench/results/latest.md', 'bench/results/x.json'];
  const r = spawnSync('git', ['check-ignore', ...names], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), names, 'bench/results/ is git-ignored');
});

/** A run with the anchors (Bun, Deno), a framework row and the realistic row. */
function anchoredResults() {
  const r = results();
  r.meta.servers.bun = 'node:http and node:https of Bun 1.4.5 (npm @oven/bun-linux-x64@1.4.5, package/bin/bun)';
  r.meta.servers.deno = 'node:http and node:https of Deno 2.9.6 (npm @deno/linux-x64-glibc@2.9.6, package/deno)';
  r.meta.frameworks = { express4: 'express@4.21.2' };
  r.options.servers = ['fast', 'node', 'uws', 'bun', 'deno'];
  r.options.liveHeapMb = 150;
  const gcRow = (server, label, cpu, gc, p99) => {
    const row = timedRow(server, label, 1e6 / cpu, cpu, 0.4);
    row.summary.p99Ms = summary(p99);
    row.summary.gcUsPerReq = summary(gc);
    row.rssAtStart = 230 * 2 ** 20;
    return row;
  };
  const unavailable = (server, label, error) => ({ server, label, status: 'unavailable', error, warnings: [] });
  r.workloads = [
    { name: 'express4', title: 'Express 4, hello route', framework: true, rows: [
      timedRow('fast', 'fast-http (-r fast-http/register)', 20000, 20, 0.3),
      timedRow('node', 'node:http', 5000, 100, 0.1),
      unavailable('uws', 'uWebSockets.js', "uWebSockets.js has its own API, not node:http's"),
      timedRow('bun', 'Bun node:http', 12000, 40, 0.2),
      timedRow('deno', 'Deno node:http', 6000, 65, 0.1),
    ] },
    { name: 'realistic', title: 'JSON API over a live heap', gc: true, rows: [
      gcRow('fast', 'fast-http', 25, 0.5, 4),
      gcRow('node', 'node:http', 40, 1, 8),
      gcRow('uws', 'uWebSockets.js', 24, 0.25, 5),
      gcRow('bun', 'Bun node:http', 28, 0.2, 6),
      gcRow('deno', 'Deno node:http', 38, 1.5, 10),
    ] },
  ];
  report.addRatios(r);
  return r;
}

test('Bun and Deno columns, the framework packages, and the realistic row with p99 and GC per request', () => {
  const md = report.markdown(anchoredResults()).split('\n');
  assert.deepEqual(md.slice(2, 10), [
    '| workload | node:http | fast-http | uWebSockets.js | Bun node:http | Deno node:http |',
    '|---|---|---|---|---|---|',
    '| Express 4, hello route: req/s | 5,000 | 20,000 (4.00×) | not available | 12,000 (2.40×) | 6,000 (1.20×) |',
    '| Express 4, hello route: CPU µs/request | 100 | 20.0 (0.20×) | not available | 40.0 (0.40×) | 65.0 (0.65×) |',
    '| JSON API over a live heap: req/s | 25,000 | 40,000 (1.60×) | 41,667 (1.67×) | 35,714 (1.43×) | 26,316 (1.05×) |',
    '| JSON API over a live heap: CPU µs/request | 40.0 | 25.0 (0.63×) | 24.0 (0.60×) | 28.0 (0.70×) | 38.0 (0.95×) |',
    '| JSON API over a live heap: p99 ms | 8.00 | 4.00 (0.50×) | 5.00 (0.63×) | 6.00 (0.75×) | 10.0 (1.25×) |',
    '| JSON API over a live heap: GC µs/request | 1.00 | 0.50 (0.50×) | 0.25 (0.25×) | 0.20 (0.20×) | 1.50 (1.50×) |',
  ]);
  assert.ok(md.includes('- Bun node:http: node:http and node:https of Bun 1.4.5 (npm @oven/bun-linux-x64@1.4.5, ' +
    'package/bin/bun)'), md.join('\n'));
  assert.ok(md.includes('- Express 4: express@4.21.2'), md.join('\n'));
  assert.ok(md.some((l) => l.startsWith('- framework rows: the same app')), md.join('\n'));
  assert.ok(md.some((l) => l.startsWith('- realistic row: live heap 150 MB')), md.join('\n'));

  const text = report.table(anchoredResults());
  assert.match(text, /\n {2}Bun node:http: node:http and node:https of Bun 1\.4\.5/);
  assert.match(text, /\n {2}Express 4: express@4\.21\.2/);
  assert.match(text, /\n {2}uWebSockets\.js: not available — uWebSockets\.js has its own API/);
  assert.match(text, /\nJSON API over a live heap, live heap 150 MB\n {2}server +req\/s +×node +CPU µs\/req +×node +p99 ms +×node +GC µs\/req +×node +RSS MiB/);
  assert.match(text, /\n {2}Deno node:http +26,316 \(26,316–26,316\) +1\.05× +38\.0 \(38\.0–38\.0\) +0\.95× +10\.0 +1\.25× +1\.50 \(1\.50–1\.50\) +1\.50× +230 /);
  // A frameworks-only run: uWebSockets.js could run none of its rows, so it has no column.
  const frameworksOnly = anchoredResults();
  frameworksOnly.workloads = frameworksOnly.workloads.filter((w) => w.framework);
  assert.equal(report.markdown(frameworksOnly).split('\n')[2],
    '| workload | node:http | fast-http | Bun node:http | Deno node:http |');

  const chart = report.svg(anchoredResults());
  assert.match(chart, /uWebSockets\.js, Bun, Deno for reference/);
  assert.match(chart, /GC pause per request/);
});
