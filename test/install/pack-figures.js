'use strict';
// The tarball figures docs/platforms.md quotes ("about N kB packed and M kB unpacked, in F
// files"; the platform package's "N kB packed and M kB unpacked") checked against `npm pack`,
// so the docs cannot silently drift from what users download. test/install/install.test.js
// calls it with the packs it makes; `node test/install/pack-figures.js` checks the main
// package alone (npm pack --dry-run).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const DOC = path.join(root, 'docs', 'platforms.md');

// Sizes move with every source change; a figure more than this far off is stale.
const SIZE_TOLERANCE = 0.15;
const FILES_TOLERANCE = 5;
// The platform binary depends on the toolchain that built it (zig or plain cargo, its version).
const BINARY_TOLERANCE = 0.25;

const PATTERNS = {
  main: /about (\d+) kB packed and (\d+) kB unpacked, in (\d+) files/,
  platform: /platform package, made from the local build: (\d+) kB packed and\s+(\d+) kB unpacked/,
};

function quoted(which) {
  const text = fs.readFileSync(DOC, 'utf8');
  const m = PATTERNS[which].exec(text);
  if (!m) return null;
  return { size: Number(m[1]) * 1000, unpackedSize: Number(m[2]) * 1000, files: Number(m[3]) };
}

/** What is wrong with the docs' figures for `info` (an `npm pack --json` entry); [] if none. */
function checkPackFigures(info, which = 'main') {
  const doc = quoted(which);
  if (!doc) return [`docs/platforms.md no longer quotes the ${which} package's pack figures`];
  const tolerance = which === 'main' ? SIZE_TOLERANCE : BINARY_TOLERANCE;
  const kb = (n) => `${Math.round(n / 1000)} kB`;
  const problems = [];
  for (const [key, label] of [['size', 'packed'], ['unpackedSize', 'unpacked']]) {
    if (Math.abs(info[key] - doc[key]) > doc[key] * tolerance) {
      problems.push(`docs/platforms.md says the ${which} package is ${kb(doc[key])} ${label}; ` +
        `npm pack says ${kb(info[key])}`);
    }
  }
  if (which === 'main' && Math.abs(info.entryCount - doc.files) > FILES_TOLERANCE) {
    problems.push(`docs/platforms.md says the main package has ${doc.files} files; npm pack ` +
      `says ${info.entryCount}`);
  }
  return problems;
}

if (require.main === module) {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root, encoding: 'utf8',
  });
  if (r.status !== 0) {
    console.error(r.stderr);
    process.exit(1);
  }
  const [info] = JSON.parse(r.stdout);
  const problems = checkPackFigures(info);
  console.log(`npm pack: ${info.size} bytes packed, ${info.unpackedSize} unpacked, ` +
    `${info.entryCount} files`);
  for (const p of problems) console.error(p);
  process.exitCode = problems.length ? 1 : 0;
}

module.exports = { checkPackFigures };
