'use strict';

// Reads corpus.txt, the raw requests of the strictness corpus. The same file feeds the
// wire-level comparison with node:http (strictness tests), the Rust split-independence
// tests (src/proto/corpus_tests.rs) and the fuzz seeds (scripts/fuzz.js); its format is
// described at the top of the file.

const fs = require('node:fs');
const path = require('node:path');

const FILE = path.join(__dirname, 'corpus.txt');

/** Decodes one escaped `raw:` value into latin1 bytes (a binary string). */
function unescape(text, where) {
  let out = '';
  let i = 0;
  const fail = (msg) => { throw new Error(`${where}: ${msg} in ${JSON.stringify(text)}`); };
  while (i < text.length) {
    const c = text[i];
    if (c !== '\\') {
      if (c.charCodeAt(0) > 0xff) fail('non-latin1 character');
      out += c;
      i++;
      continue;
    }
    const e = text[i + 1];
    i += 2;
    switch (e) {
      case 'r': out += '\r'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case '0': out += '\0'; break;
      case 's': out += ' '; break;
      case '\\': out += '\\'; break;
      case ']': out += ']'; break;
      case 'x': {
        const hex = text.slice(i, i + 2);
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) fail('bad \\x escape');
        out += String.fromCharCode(parseInt(hex, 16));
        i += 2;
        break;
      }
      case '[': {
        // \[N:text] repeats the (escaped) text N times.
        const m = /^(\d+):/.exec(text.slice(i));
        if (!m) fail('bad \\[N:text] repeat');
        i += m[0].length;
        let depth = 0;
        let j = i;
        for (; j < text.length; j++) {
          if (text[j] === '\\') { j++; continue; }
          if (text[j] === ']') {
            if (depth === 0) break;
            depth--;
          }
        }
        if (j >= text.length) fail('unterminated \\[N:text]');
        out += unescape(text.slice(i, j), where).repeat(Number(m[1]));
        i = j + 1;
        break;
      }
      default:
        fail(`unknown escape \\${e}`);
    }
  }
  return out;
}

const KEYS = new Set([
  'why', 'raw', 'stricter', 'todo', 'server', 'listen', 'expect', 'split', 'followup',
  'nodehangs',
]);

/**
 * Parses the corpus. Each case: { name, why, raw (binary string), stricter, todo,
 * server (options object), listen (array of listener names), responses (number or
 * undefined), followup (true unless `followup: no`), split (false for `split: no`) }.
 */
function parse(text, file = FILE) {
  const cases = [];
  let cur = null;
  const lines = text.split('\n');
  lines.forEach((line, n) => {
    const where = `${path.basename(file)}:${n + 1}`;
    if (line.startsWith('#') || line.trim() === '') return;
    if (line.startsWith('=== ')) {
      cur = {
        name: line.slice(4).trim(), why: '', raw: '', stricter: null, todo: null, nodeHangs: null,
        server: {}, listen: [], responses: undefined, followup: true, split: true,
        line: n + 1,
      };
      if (cases.some((c) => c.name === cur.name)) throw new Error(`${where}: duplicate name`);
      cases.push(cur);
      return;
    }
    const m = /^([a-z]+): ?(.*)$/.exec(line);
    if (!m || !KEYS.has(m[1]) || !cur) throw new Error(`${where}: cannot parse ${JSON.stringify(line)}`);
    const [, key, value] = m;
    switch (key) {
      case 'raw': cur.raw += unescape(value, where); break;
      case 'why': cur.why += (cur.why ? ' ' : '') + value; break;
      case 'stricter': cur.stricter = value; break;
      case 'todo': cur.todo = value; break;
      case 'nodehangs': {
        const r = /^(\d+(?:,\d+)*) (.+)$/.exec(value);
        if (!r) throw new Error(`${where}: nodehangs: MAJOR[,MAJOR] reason`);
        cur.nodeHangs = { majors: r[1].split(',').map(Number), reason: r[2] };
        break;
      }
      case 'server':
        for (const kv of value.split(/\s+/).filter(Boolean)) {
          const [k, v] = kv.split('=');
          cur.server[k] = v === 'true' ? true : v === 'false' ? false
            : /^\d+$/.test(v) ? Number(v) : v;
        }
        break;
      case 'listen': cur.listen.push(...value.split(/\s+/).filter(Boolean)); break;
      case 'expect': {
        const r = /^(\d+) responses?$/.exec(value);
        if (!r) throw new Error(`${where}: expect: N responses`);
        cur.responses = Number(r[1]);
        break;
      }
      case 'followup': cur.followup = value !== 'no'; break;
      case 'split': cur.split = value !== 'no'; break;
    }
  });
  for (const c of cases) {
    if (c.raw === '') throw new Error(`${path.basename(file)}:${c.line}: case ${c.name} has no raw`);
  }
  return cases;
}

function load() {
  return parse(fs.readFileSync(FILE, 'latin1'));
}

module.exports = { load, parse, unescape, FILE };
