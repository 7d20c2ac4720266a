'use strict';

// Finds the native uWebSockets.js build for the bench's reference row (bench/servers/uws.js
// loads it; bench/run.js runs this file to learn which build that will be and names it in the
// notes). Order: BENCH_UWS_MODULE, @trufflesuite/uws-js-unofficial (binaries up to Node 20's
// ABI), uwebsockets (a republish of uWebSockets.js binaries up to ABI 141), the last two as
// bench/run.js installs them into .cache/bench-deps.
//
// uwebsockets' Linux binaries for Node 22 and later were linked against glibc 2.38, which
// redirects strtol/strtoul/strtoull in C23 mode to __isoc23_strtol & co. Those differ from the
// classic functions only by also accepting a "0b" prefix, so on an older glibc (2.36 here) the
// binary loads, runs the same machine code and behaves the same for everything uWS parses, once
// those three imports are bound to the classic symbols. glibcCompatCopy() writes such a copy
// with a two-field ELF edit (no patchelf needed) and refuses when anything else needs 2.38.

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');

const PREFIX = path.join(__dirname, '..', '..', '.cache', 'bench-deps');
const COMPAT_DIR = path.join(PREFIX, 'uws-glibc-compat');
const pkgDir = (name) => path.join(PREFIX, 'node_modules', ...name.split('/'));
const nativeName = () => `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
const abi = () => `Node ${process.version} (ABI ${process.versions.modules})`;

const SHT_STRTAB = 3;
const SHT_DYNSYM = 11;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;
const SYM_SIZE = 24;
const C23 = '__isoc23_';
const C23_STRTO = /^__isoc23_strto(l|ul|ll|ull|imax|umax)$/;
// The version the classic strto* have had since glibc's first release for the architecture.
const BASE_VERSION = { 62: 'GLIBC_2.2.5', 183: 'GLIBC_2.17' }; // e_machine: x86-64, AArch64

function elfHash(name) {
  let h = 0;
  for (const c of Buffer.from(name)) {
    h = ((h << 4) + c) >>> 0;
    const g = h & 0xf0000000;
    if (g) h ^= g >>> 24;
    h = (h & ~g) >>> 0;
  }
  return h;
}

const cstr = (buf, at) => buf.toString('latin1', at, buf.indexOf(0, at));

function sectionHeaders(buf) {
  if (buf.readUInt32BE(0) !== 0x7f454c46 || buf[4] !== 2 || buf[5] !== 1) {
    throw new Error('not a 64-bit little-endian ELF file');
  }
  const shoff = Number(buf.readBigUInt64LE(0x28));
  const shentsize = buf.readUInt16LE(0x3a);
  const shnum = buf.readUInt16LE(0x3c);
  const list = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    list.push({
      nameAt: buf.readUInt32LE(o), type: buf.readUInt32LE(o + 4), offset: Number(buf.readBigUInt64LE(o + 24)),
      size: Number(buf.readBigUInt64LE(o + 32)), link: buf.readUInt32LE(o + 40), info: buf.readUInt32LE(o + 44),
    });
  }
  const names = list[buf.readUInt16LE(0x3e)];
  if (!names) throw new Error('no section name table');
  for (const s of list) s.name = cstr(buf, names.offset + s.nameAt);
  return list;
}

/**
 * Rebinds the __isoc23_strto* imports of a GLIBC_2.38-needing ELF (in place) to the classic
 * strto* at the base version: each .dynsym name moves 9 bytes on (the tail of the same .dynstr
 * string), and the GLIBC_2.38 Vernaux names the base version instead. Throws with the reason
 * when the file needs GLIBC_2.38 for anything else.
 */
function patchC23Strto(buf) {
  const sections = sectionHeaders(buf);
  const find = (name, type) => sections.find((s) => s.name === name && s.type === type)
    || (() => { throw new Error(`no ${name} section`); })();
  const dynsym = find('.dynsym', SHT_DYNSYM);
  const versym = find('.gnu.version', SHT_GNU_VERSYM);
  const verneed = find('.gnu.version_r', SHT_GNU_VERNEED);
  const dynstr = sections[dynsym.link];
  if (!dynstr || dynstr.name !== '.dynstr' || dynstr.type !== SHT_STRTAB || verneed.link !== dynsym.link) {
    throw new Error('.dynsym and .gnu.version_r do not share one .dynstr');
  }
  const str = (at) => cstr(buf, dynstr.offset + at);

  const needs38 = [];
  for (let vn = verneed.offset, i = 0; i < verneed.info; i++, vn += buf.readUInt32LE(vn + 12)) {
    const file = str(buf.readUInt32LE(vn + 4));
    for (let va = vn + buf.readUInt32LE(vn + 8), j = buf.readUInt16LE(vn + 2); j > 0; j--, va += buf.readUInt32LE(va + 12)) {
      if (str(buf.readUInt32LE(va + 8)) === 'GLIBC_2.38') needs38.push({ at: va, file, index: buf.readUInt16LE(va + 6) });
    }
  }
  if (needs38.length !== 1 || needs38[0].file !== 'libc.so.6') {
    throw new Error(`expected one GLIBC_2.38 requirement on libc.so.6, found ${needs38.length}`);
  }
  const aux = needs38[0];

  const count = dynsym.size / SYM_SIZE;
  if (versym.size !== count * 2) throw new Error('.gnu.version does not match .dynsym');
  const rebind = [];
  const others = [];
  for (let i = 0; i < count; i++) {
    if ((buf.readUInt16LE(versym.offset + 2 * i) & 0x7fff) !== aux.index) continue;
    const at = dynsym.offset + i * SYM_SIZE;
    const name = str(buf.readUInt32LE(at));
    const undefinedImport = buf.readUInt16LE(at + 6) === 0;
    (C23_STRTO.test(name) && undefinedImport ? rebind : others).push({ at, name });
  }
  if (others.length) {
    throw new Error(`GLIBC_2.38 is needed by more than C23 strto*: ${others.slice(0, 4).map((s) => s.name).join(', ')}`);
  }

  const base = BASE_VERSION[buf.readUInt16LE(0x12)];
  const baseAt = base ? buf.subarray(dynstr.offset, dynstr.offset + dynstr.size).indexOf(`${base}\0`, 0, 'latin1') : -1;
  if (baseAt < 0) throw new Error(`no ${base || 'base glibc version'} string in .dynstr to rebind to`);
  for (const s of rebind) buf.writeUInt32LE(buf.readUInt32LE(s.at) + C23.length, s.at);
  buf.writeUInt32LE(elfHash(base), aux.at); // vna_hash: ld.so matches it against libc's verdef
  buf.writeUInt32LE(baseAt, aux.at + 8); // vna_name
  return { symbols: rebind.map((s) => s.name), version: base };
}

/**
 * A copy of the uwebsockets package's loader, package.json and this ABI's binary, patched,
 * in .cache/bench-deps/uws-glibc-compat/. Redone when the source binary changes.
 */
function glibcCompatCopy(dir) {
  const bin = fs.readFileSync(path.join(dir, nativeName()));
  const sha = crypto.createHash('sha256').update(bin).digest('hex');
  const out = path.join(COMPAT_DIR, nativeName());
  const stamp = `${out}.source-sha256`;
  const current = fs.existsSync(out) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === sha
    && ['uws.js', 'package.json'].every((f) => fs.existsSync(path.join(COMPAT_DIR, f)));
  if (current) return COMPAT_DIR;
  patchC23Strto(bin);
  fs.mkdirSync(COMPAT_DIR, { recursive: true });
  for (const f of ['uws.js', 'package.json']) fs.copyFileSync(path.join(dir, f), path.join(COMPAT_DIR, f));
  // Rename into place: a server child may be loading the previous copy.
  fs.writeFileSync(`${out}.tmp`, bin);
  fs.renameSync(`${out}.tmp`, out);
  fs.writeFileSync(stamp, sha);
  return COMPAT_DIR;
}

const nativeModules = () => Object.keys(require.cache).filter((f) => /uws[^/]*\.node$/.test(f));

function describe(id) {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(id, 'package.json'), 'utf8'));
    return `${pkg.name}@${pkg.version}`;
  } catch {
    return id;
  }
}

/** { uws, build }: the first build whose native binary loads, or throws why none does. */
function loadUws() {
  const reasons = [];
  const attempt = (id, build) => {
    const before = new Set(nativeModules());
    const uws = require(id);
    // The trufflesuite package falls back to a JS implementation on node:http when its
    // binary does not load: that is not uWS.
    if (!nativeModules().some((f) => !before.has(f))) throw new Error('loaded no native uws*.node (a JS fallback is not uWS)');
    return { uws, build: `${build}, ${nativeName()}` };
  };

  const env = process.env.BENCH_UWS_MODULE;
  if (env) {
    try { return attempt(env, `${describe(env)} (BENCH_UWS_MODULE)`); } catch (err) { reasons.push(`BENCH_UWS_MODULE=${env}: ${err.message.split('\n')[0]}`); }
  }
  for (const [name, binDir] of [['@trufflesuite/uws-js-unofficial', 'binaries'], ['uwebsockets', '.']]) {
    const dir = pkgDir(name);
    if (!fs.existsSync(path.join(dir, 'package.json'))) { reasons.push(`${name}: not installed`); continue; }
    const build = describe(dir);
    if (!fs.existsSync(path.join(dir, binDir, nativeName()))) { reasons.push(`${build}: no ${nativeName()}`); continue; }
    try {
      return attempt(dir, build);
    } catch (err) {
      if (name !== 'uwebsockets' || !/GLIBC_2\.38' not found/.test(err.message)) {
        reasons.push(`${build}: ${err.message.split('\n').filter(Boolean).pop()}`);
        continue;
      }
      try {
        return attempt(glibcCompatCopy(dir), `${build} (glibc-compat patched copy)`);
      } catch (err2) {
        reasons.push(`${build}: needs glibc 2.38, and the glibc-compat copy failed: ${err2.message.split('\n').filter(Boolean).pop()}`);
      }
    }
  }
  throw new Error(`no native uWS loads on ${abi()}: ${reasons.join('; ')}`);
}

// `node bench/lib/uws-binary.js`: bench/run.js's probe, one JSON line on stdout.
if (require.main === module) {
  let line;
  try { line = { build: loadUws().build }; } catch (err) { line = { error: err.message }; }
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

module.exports = { loadUws, glibcCompatCopy, patchC23Strto, elfHash };
