'use strict';

// Turns the results object from bench/run.js into the stdout table, the JSON
// files, a hand-written SVG chart (no dependencies) and the same table in
// Markdown, ready for a README (the machine, the command and each column's
// package with it).

const fs = require('node:fs');
const path = require('node:path');

const BASELINE = 'node';
const COLORS = {
  fast: '#e8590c', base: '#f08c00', node: '#2f9e44', uws: '#1c7ed6', bun: '#c2a000', deno: '#495057', 'deno-serve': '#7048e8',
};
// Each server id's name in the table's head and the Markdown columns.
const LABELS = {
  fast: 'fast-http', node: 'node:http', uws: 'uWebSockets.js', base: 'fast-http (base)', bun: 'Bun node:http',
  deno: 'Deno node:http', 'deno-serve': 'Deno.serve',
};

// ratio = this server's median / node:http's median, per metric. For req/s
// higher is better; for CPU per request, p99 and memory lower is better.
function addRatios(results) {
  for (const w of results.workloads) {
    const base = w.rows.find((r) => r.server === BASELINE && r.status === 'ok');
    for (const r of w.rows) {
      if (r.status !== 'ok' || !base) continue;
      r.ratio = {};
      for (const [k, s] of Object.entries(r.summary)) {
        const b = base.summary[k];
        if (s && b && b.median) r.ratio[k] = s.median / b.median;
      }
    }
  }
}

// ---------------------------------------------------------------- table

const int = (n) => Math.round(n).toLocaleString('en-US');
const fix = (n, d) => n.toFixed(d);
function num(n) {
  if (n >= 100) return int(n);
  if (n >= 10) return fix(n, 1);
  return fix(n, 2);
}
const range = (s, f) => `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
const ratio = (x) => (x == null ? '—' : `${x.toFixed(2)}×`);
const pct = (s) => (s ? `${Math.round(100 * s.median)} %` : '—');
// A row whose req/s is wrk's limit (wrk used ~all of its core): compare its CPU µs/req instead.
const BOUND = '‡';

function pinning(meta) {
  return meta.pinning ? `servers on CPU ${meta.pinning.server}, load generator on CPU ${meta.pinning.loadGenerator}` : 'unpinned';
}

function boundLegend(meta) {
  return `${BOUND} wrk used ≥ ${Math.round(100 * (meta.clientBound ?? 0.9))} % of its core: req/s there is `
    + "the load generator's limit, not the server's; compare CPU µs/req.";
}

function pad(cells, widths) {
  return cells.map((c, i) => (i === cells.length - 1 ? c : String(c).padEnd(widths[i]))).join('  ').trimEnd();
}

function renderRows(header, lines) {
  const all = [header, ...lines.filter((l) => Array.isArray(l))];
  const widths = header.map((_, i) => Math.max(...all.map((l) => String(l[i] ?? '').length)));
  return [header, ...lines].map((l) => (Array.isArray(l) ? `  ${pad(l, widths)}` : `  ${l}`)).join('\n');
}

function table(results) {
  const { meta, options: o } = results;
  const out = [];
  out.push('');
  out.push(`fast-http bench — Node ${meta.node}, ${meta.cpu}, ${meta.cpus} CPUs, ${pinning(meta)}`);
  for (const [id, what] of Object.entries(meta.servers || {})) out.push(`  ${LABELS[id] || id}: ${what}`);
  for (const [name, what] of Object.entries(meta.frameworks || {})) {
    const w = results.workloads.find((x) => x.name === name);
    out.push(`  ${w ? w.title.replace(/, hello route$/, '') : name}: ${what}`);
  }
  out.push(`${o.rounds} round${o.rounds === 1 ? '' : 's'} × ${o.duration} s per server (alternating) after ${o.warmup} s warm-up, `
    + `wrk -t1 -c${o.connections}; median (min–max); ×node = median ÷ node:http's median`);
  out.push('req/s: higher is better. CPU µs/req, p99, KiB/conn: lower is better. resp B = bytes on the wire per response.');
  out.push('srv / wrk CPU: share of one core the server / wrk used over a round.');
  if (results.workloads.some((w) => w.rows.some((r) => r.clientBound))) out.push(boundLegend(meta));
  if (results.workloads.some((w) => w.framework)) {
    out.push('Framework rows: the same app on every server; ×node = × the same app on node:http.');
  }
  for (const n of results.notes) out.push(`note: ${n}`);
  for (const w of results.workloads) {
    out.push('');
    const notOk = (r) => `${r.label}: ${r.status === 'unavailable' ? 'not available' : 'aborted'} — ${r.error}`;
    const conns = w.conns || o.memConns;
    if (w.memory) {
      const settled = o.memSettle > 0 ? `, read after ${o.memSettle} s` : '';
      out.push(`${w.title} (${conns} connections, 1 request each, then idle${settled})`);
      const lines = w.rows.map((r) => (r.status !== 'ok'
        ? notOk(r)
        : [r.label, range(r.summary.bytesPerConn, (v) => fix(v / 1024, 2)), ratio(r.ratio && r.ratio.bytesPerConn),
          `${fix(r.summary.rssBefore.median / 2 ** 20, 1)} → ${fix(r.summary.rssAfter.median / 2 ** 20, 1)}`]));
      out.push(renderRows(['server', 'KiB/conn', '×node', `RSS MiB idle → ${conns} conns`], lines));
    } else if (w.gc) {
      // The realistic row: p99 and GC pause per response matter as much as CPU here.
      out.push(`${w.title}, live heap ${o.liveHeapMb ?? ''} MB`);
      const lines = w.rows.map((r) => (r.status !== 'ok'
        ? notOk(r)
        : [r.label, `${range(r.summary.rps, int)}${r.clientBound ? ` ${BOUND}` : ''}`, ratio(r.ratio && r.ratio.rps),
          range(r.summary.cpuUsPerReq, num), ratio(r.ratio && r.ratio.cpuUsPerReq),
          r.summary.p99Ms ? num(r.summary.p99Ms.median) : '—', ratio(r.ratio && r.ratio.p99Ms),
          r.summary.gcUsPerReq ? range(r.summary.gcUsPerReq, num) : '—', ratio(r.ratio && r.ratio.gcUsPerReq),
          r.rssAtStart ? fix(r.rssAtStart / 2 ** 20, 0) : '—', pct(r.summary.serverCpu), pct(r.summary.clientCpu)]));
      out.push(renderRows(['server', 'req/s', '×node', 'CPU µs/req', '×node', 'p99 ms', '×node', 'GC µs/req', '×node',
        'RSS MiB', 'srv CPU', 'wrk CPU'], lines));
    } else {
      out.push(w.title);
      const lines = w.rows.map((r) => (r.status !== 'ok'
        ? notOk(r)
        : [r.label, `${range(r.summary.rps, int)}${r.clientBound ? ` ${BOUND}` : ''}`, ratio(r.ratio && r.ratio.rps),
          range(r.summary.cpuUsPerReq, num), ratio(r.ratio && r.ratio.cpuUsPerReq),
          r.summary.p99Ms ? num(r.summary.p99Ms.median) : '—', pct(r.summary.serverCpu), pct(r.summary.clientCpu),
          r.proof ? String(r.proof.responseBytes) : '—']));
      // One request per connection: a request is a handshake.
      const head = w.handshake ? ['server', 'handshakes/s', '×node', 'CPU µs/handshake', '×node', 'p99 ms', 'srv CPU', 'wrk CPU', 'resp B']
        : ['server', 'req/s', '×node', 'CPU µs/req', '×node', 'p99 ms', 'srv CPU', 'wrk CPU', 'resp B'];
      out.push(renderRows(head, lines));
    }
    for (const r of w.rows) for (const warn of r.warnings || []) out.push(`  (${r.label}: ${warn})`);
  }
  out.push('');
  return `${out.join('\n')}\n`;
}

// ---------------------------------------------------------------- markdown

const COLUMNS = ['node', 'fast', 'base', 'uws', 'bun', 'deno', 'deno-serve'].map((id) => [id, LABELS[id]]);

/** One Markdown cell: the median, × node:http's, and the client-bound mark. */
function cell(row, key, text) {
  if (!row) return '';
  if (row.status !== 'ok') return row.status === 'unavailable' ? 'not available' : 'aborted';
  const s = row.summary[key];
  if (!s) return '—';
  const r = row.server !== BASELINE && row.ratio && row.ratio[key] != null ? ` (${ratio(row.ratio[key])})` : '';
  return `${text(s.median)}${r}${key === 'rps' && row.clientBound ? ` ${BOUND}` : ''}`;
}

/** The run as one Markdown table, with the machine, the command and the packages measured. */
function markdown(results) {
  const { meta, options: o } = results;
  // A server with no row it could run (uWS in a frameworks-only run) gets no column.
  const columns = COLUMNS.filter(([id]) => o.servers.includes(id)
    && results.workloads.some((w) => w.rows.some((r) => r.server === id && r.status !== 'unavailable')));
  const lines = [
    `\`${meta.command}\` on ${meta.cpu}, ${meta.cpus} CPUs (${meta.kernel}), Node ${meta.node}, `
      + `${meta.date.slice(0, 10)}${meta.git ? `, fast-http at ${meta.git}` : ''}: ${pinning(meta)}, `
      + `${o.rounds} alternating round${o.rounds === 1 ? '' : 's'} of ${o.duration} s per server, wrk -t1 -c${o.connections}; `
      + "medians, (×) against node:http's.",
    '',
    `| workload | ${columns.map(([, label]) => label).join(' | ')} |`,
    `|---|${columns.map(() => '---').join('|')}|`,
  ];
  for (const w of results.workloads) {
    const byId = (id) => w.rows.find((r) => r.server === id);
    const row = (what, key, text) => lines.push(`| ${what} | ${columns.map(([id]) => cell(byId(id), key, text)).join(' | ')} |`);
    if (w.memory) {
      row(`${w.title}, ${w.conns || o.memConns} connections${o.memSettle > 0 ? `, after ${o.memSettle} s` : ''}`, 'bytesPerConn', (v) => `${fix(v / 1024, 2)} KiB`);
    } else if (w.handshake) {
      row(`${w.title}: handshakes/s`, 'rps', int);
      row(`${w.title}: CPU µs/handshake`, 'cpuUsPerReq', num);
    } else if (w.gc) {
      row(`${w.title}: req/s`, 'rps', int);
      row(`${w.title}: CPU µs/request`, 'cpuUsPerReq', num);
      row(`${w.title}: p99 ms`, 'p99Ms', num);
      row(`${w.title}: GC µs/request`, 'gcUsPerReq', num);
    } else {
      row(`${w.title}: req/s`, 'rps', int);
      row(`${w.title}: CPU µs/request`, 'cpuUsPerReq', num);
    }
  }
  lines.push('');
  for (const [id, label] of columns) if (meta.servers?.[id]) lines.push(`- ${label}: ${meta.servers[id]}`);
  for (const [name, what] of Object.entries(meta.frameworks || {})) {
    const w = results.workloads.find((x) => x.name === name);
    lines.push(`- ${w ? w.title.replace(/, hello route$/, '') : name}: ${what}`);
  }
  if (results.workloads.some((w) => w.https)) {
    lines.push("- https rows: node:https in the node:http column; fast-http's https"
      + `${columns.some(([id]) => id === 'uws') ? ", uWebSockets.js's SSLApp" : ''}`
      + `${columns.some(([id]) => id === 'bun' || id === 'deno') ? ', node:https of Bun and Deno' : ''}`);
  }
  if (results.workloads.some((w) => w.framework)) {
    lines.push('- framework rows: the same app (bench/servers/framework.js) on each server, fast-http through '
      + '`-r fast-http/register`; (×) against the same app on node:http');
  }
  if (results.workloads.some((w) => w.gc)) {
    lines.push(`- realistic row: live heap ${o.liveHeapMb ?? '?'} MB; GC µs/request is main-thread GC pause per response`);
  }
  if (results.workloads.some((w) => w.rows.some((r) => r.clientBound))) lines.push(`- ${boundLegend(meta)}`);
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------- svg

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function short(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return num(n);
}

// One horizontal bar group per workload; bars are scaled to the largest
// max in the group, so every workload fills the width whatever its units.
function panel(y, title, groups, W) {
  const parts = [];
  const labelW = 200;
  const barX = labelW + 110;
  const barW = W - barX - 150;
  parts.push(`<text x="16" y="${y + 18}" class="h">${esc(title)}</text>`);
  y += 30;
  for (const g of groups) {
    const rows = g.rows.filter((r) => r.status === 'ok' && r.summary[g.key]);
    if (!rows.length) continue;
    const top = Math.max(...rows.map((r) => r.summary[g.key].max)) || 1;
    const h = 16;
    const gh = g.rows.length * (h + 4);
    parts.push(`<text x="16" y="${y + gh / 2 + 4}" class="w">${esc(g.title)}</text>`);
    for (const r of g.rows) {
      parts.push(`<text x="${labelW + 100}" y="${y + 12}" class="s" text-anchor="end">${esc(r.label)}</text>`);
      if (r.status !== 'ok' || !r.summary[g.key]) {
        parts.push(`<text x="${barX + 4}" y="${y + 12}" class="s m">${r.status === 'unavailable' ? 'not available' : 'aborted / no data'}</text>`);
      } else {
        const s = r.summary[g.key];
        const sc = (v) => (barW * g.fmt.scale(v)) / g.fmt.scale(top);
        const wMed = Math.max(1, sc(s.median));
        const rt = `${r.ratio && r.ratio[g.key] != null ? ` (${r.ratio[g.key].toFixed(2)}×)` : ''}${g.key === 'rps' && r.clientBound ? ` ${BOUND} wrk-bound` : ''}`;
        parts.push(`<rect x="${barX}" y="${y}" width="${wMed.toFixed(1)}" height="${h}" fill="${COLORS[r.server] || '#868e96'}"/>`);
        // min–max whisker
        const x1 = barX + sc(s.min);
        const x2 = barX + sc(s.max);
        parts.push(`<path d="M${x1.toFixed(1)} ${y + h / 2}H${x2.toFixed(1)}M${x1.toFixed(1)} ${y + 3}V${y + h - 3}M${x2.toFixed(1)} ${y + 3}V${y + h - 3}" class="wh"/>`);
        parts.push(`<text x="${(barX + Math.max(wMed, sc(s.max)) + 6).toFixed(1)}" y="${y + 12}" class="s">${esc(g.fmt.text(s.median) + rt)}</text>`);
      }
      y += h + 4;
    }
    y += 12;
  }
  return { svg: parts.join('\n'), y };
}

/** The reference servers named in the chart's title. */
function anchors(ids) {
  const names = [...new Set(ids.map((id) => ({ uws: 'uWebSockets.js', bun: 'Bun', deno: 'Deno', 'deno-serve': 'Deno' })[id])
    .filter(Boolean))];
  return names.length ? ` (${names.join(', ')} for reference)` : '';
}

function svg(results) {
  const W = 960;
  const timed = results.workloads.filter((w) => !w.memory);
  const mem = results.workloads.filter((w) => w.memory);
  const linear = (v) => v;
  const panels = [];
  if (timed.length) {
    panels.push(['Throughput, req/s (higher is better; bar = median, whisker = min–max)',
      timed.map((w) => ({ title: w.title, rows: w.rows, key: 'rps', fmt: { scale: linear, text: (v) => `${short(v)} req/s` } }))]);
    panels.push(['Server CPU per request, µs user+sys (lower is better)',
      timed.map((w) => ({ title: w.title, rows: w.rows, key: 'cpuUsPerReq', fmt: { scale: linear, text: (v) => `${num(v)} µs` } }))]);
  }
  const gc = results.workloads.filter((w) => w.gc);
  if (gc.length) {
    panels.push(['GC pause per request, µs on the main thread (lower is better)',
      gc.map((w) => ({ title: w.title.replace(/ \(.*$/, ''), rows: w.rows, key: 'gcUsPerReq', fmt: { scale: linear, text: (v) => `${num(v)} µs` } }))]);
  }
  if (mem.length) {
    panels.push(['Memory per idle keep-alive connection (lower is better)',
      mem.map((w) => ({ title: `${w.https ? 'TLS ' : ''}RSS / conn, ${w.conns || results.options.memConns} open`, rows: w.rows, key: 'bytesPerConn', fmt: { scale: linear, text: (v) => `${(v / 1024).toFixed(2)} KiB` } }))]);
  }
  const { meta, options: o } = results;
  const body = [];
  let y = 58;
  for (const [title, groups] of panels) {
    const p = panel(y, title, groups, W);
    body.push(p.svg);
    y = p.y + 8;
  }
  const H = y + 12;
  const sub = `Node ${meta.node} · ${meta.cpu} · ${meta.cpus} CPUs · ${o.rounds} rounds × ${o.duration} s · wrk -c${o.connections} · ${meta.date.slice(0, 16).replace('T', ' ')} UTC${meta.git ? ` · ${meta.git}` : ''}`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif">
<style>
.t{font-size:18px;font-weight:600;fill:#212529}.h{font-size:14px;font-weight:600;fill:#343a40}
.w{font-size:12px;fill:#495057}.s{font-size:11px;fill:#495057}.m{fill:#c92a2a}
.wh{stroke:#212529;stroke-width:1;fill:none;opacity:.7}
</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="16" y="26" class="t">fast-http vs node:http${anchors(results.options.servers)}</text>
<text x="16" y="44" class="s">${esc(sub)}</text>
${body.join('\n')}
</svg>
`;
}

// ---------------------------------------------------------------- files

/** Writes the run under `dir`; returns the files: { json: [...], svg, markdown }. */
function write(results, dir) {
  fs.mkdirSync(dir, { recursive: true });
  const stamp = results.meta.date.replace(/[:.]/g, '-');
  const json = `${JSON.stringify(results, null, 2)}\n`;
  const files = {
    json: [path.join(dir, `${stamp}.json`), path.join(dir, 'latest.json')],
    svg: path.join(dir, 'latest.svg'),
    markdown: path.join(dir, 'latest.md'),
  };
  for (const f of files.json) fs.writeFileSync(f, json);
  fs.writeFileSync(files.svg, svg(results));
  fs.writeFileSync(files.markdown, markdown(results));
  return files;
}

module.exports = { addRatios, table, markdown, svg, write };
