'use strict';
// Start-up cost of `-r fast-http/register` / `--import fast-http/register` for apps that never
// use http: an empty app, and an app of 2,000 small CommonJS modules. Runs alternate between
// the variants so a busy machine weighs on all alike; reports medians of the wall time and of
// the process's CPU time (user + system, as the app reads it at exit).
//
//   node bench/startup/register.js [--node BIN] [--runs N] [--compare OTHER_REGISTER.js]
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const REGISTER = path.resolve(__dirname, '..', '..', 'lib', 'register.js');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i === -1 ? dflt : args[i + 1];
};
const node = opt('--node', process.execPath);
const runs = Number(opt('--runs', 30));
const compare = opt('--compare', null);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'register-startup-'));
const report = "process.on('exit', () => { const u = process.cpuUsage(); " +
  "process.stdout.write(String((u.user + u.system) / 1000)); });\n";
fs.writeFileSync(path.join(dir, 'empty.js'), report);
fs.writeFileSync(path.join(dir, 'nothing.js'), '');
fs.mkdirSync(path.join(dir, 'mods'));
for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(dir, 'mods', `m${i}.js`), `module.exports = ${i};\n`);
fs.writeFileSync(path.join(dir, 'modules.js'),
  `${report}for (let i = 0; i < 2000; i++) require('./mods/m' + i + '.js');\n`);

const apps = ['empty.js', 'modules.js'];
const variants = {
  'node': [],
  '-r register': ['-r', REGISTER],
  '--import register': ['--import', pathToFileURL(REGISTER).href],
  // What --import itself costs (Node starts its ES module loader for it), for comparison.
  '--import (empty file)': ['--import', pathToFileURL(path.join(dir, 'nothing.js')).href],
};
if (compare) variants[`-r ${path.basename(compare)}`] = ['-r', path.resolve(compare)];
const samples = {};
for (let r = 0; r < runs + 2; r++) {
  for (const app of apps) {
    for (const [name, flags] of Object.entries(variants)) {
      const t = process.hrtime.bigint();
      const out = spawnSync(node, [...flags, path.join(dir, app)], { encoding: 'utf8' });
      const wall = Number(process.hrtime.bigint() - t) / 1e6;
      if (out.status !== 0) throw new Error(`${name} ${app}: ${out.stderr}`);
      if (r < 2) continue; // warm-up
      ((samples[app] ??= {})[name] ??= []).push([wall, Number(out.stdout)]);
    }
  }
}
fs.rmSync(dir, { recursive: true, force: true });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
// Wall medians move with the machine's load; the least CPU time of the runs is the steadiest
// figure for what the process itself costs.
console.log(`${version}, ${runs} runs each: median wall, median CPU, least CPU (ms), and the ` +
  'difference to plain node');
const sign = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;
for (const app of apps) {
  const figures = (xs) => [median(xs.map((s) => s[0])), median(xs.map((s) => s[1])),
    Math.min(...xs.map((s) => s[1]))];
  const base = figures(samples[app].node);
  for (const [name, xs] of Object.entries(samples[app])) {
    const f = figures(xs);
    const delta = name === 'node' ? '' : `  (${f.map((x, i) => sign(x - base[i])).join(' / ')})`;
    console.log(`  ${app.padEnd(11)} ${name.padEnd(22)} ` +
      `${f.map((x) => x.toFixed(1).padStart(6)).join(' / ')}${delta}`);
  }
}
