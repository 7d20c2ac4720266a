'use strict';
// The layering the design rests on, read from the sources: src/'s layers import only down
// (binding → reactor → conn → proto / net) and no file imports itself around a circle; the
// reactor names no TLS type outside its TLS room (reactor/secure*, issue #31); only the
// readiness driver reads and writes sockets; the TLS session holds no socket; lib/'s
// requires make no circle.
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const src = path.join(root, 'src');

function walk(dir, ext) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return walk(p, ext);
    return e.name.endsWith(ext) ? [p] : [];
  });
}

/** A Rust file's module path: src/reactor/secure.rs → ['reactor', 'secure']. */
function modulePath(file) {
  const rel = path.relative(src, file).replace(/\.rs$/, '').split(path.sep);
  if (rel[rel.length - 1] === 'mod' || rel[rel.length - 1] === 'lib') rel.pop();
  return rel;
}

const isTestFile = (file) => /(^|[/\\])(tests|test_support|corpus_tests)(\.rs|[/\\])/.test(
  path.relative(src, file));

/** The Rust files and the module each stands for, with their non-test code. */
function rustFiles() {
  return walk(src, '.rs').filter((f) => !isTestFile(f)).map((file) => {
    let code = fs.readFileSync(file, 'utf8');
    // What follows `#[cfg(test)] mod tests {` is test code; `#[cfg(test)] mod x;` names a
    // test file (left out above).
    const inline = code.search(/#\[cfg\(test\)\]\s*mod \w+ \{/);
    if (inline >= 0) code = code.slice(0, inline);
    code = code.replace(/\/\/.*$/gm, '');
    return { file, mod: modulePath(file), code };
  });
}

/** The file a path of module names resolves to (its longest prefix that is a file). */
function resolve(byMod, parts) {
  for (let n = parts.length; n > 0; n--) {
    const hit = byMod.get(parts.slice(0, n).join('::'));
    if (hit) return hit;
  }
  return null;
}

function rustImports(files) {
  const byMod = new Map(files.map((f) => [f.mod.join('::'), f]));
  const edges = new Map();
  for (const f of files) {
    const to = new Set();
    // The module a file's `super::` means: its parent's (a mod.rs's own module is the folder).
    const self = f.mod;
    const re = /\b((?:crate|super)(?:::\w+)+)/g;
    for (const m of f.code.matchAll(re)) {
      const segs = m[1].split('::');
      let base;
      if (segs[0] === 'crate') {
        base = segs.slice(1);
      } else {
        let up = self.slice();
        let i = 0;
        while (segs[i] === 'super') { up = up.slice(0, -1); i++; }
        base = up.concat(segs.slice(i));
      }
      const hit = resolve(byMod, base);
      if (hit && hit !== f && !(self.join('::').startsWith(hit.mod.join('::')) &&
          hit.mod.length < self.length && /(^|[/\\])mod\.rs$/.test(hit.file))) {
        to.add(hit);
      }
    }
    edges.set(f, to);
  }
  return edges;
}

function findCircle(edges) {
  const state = new Map();
  const stack = [];
  const visit = (n) => {
    state.set(n, 1);
    stack.push(n);
    for (const m of edges.get(n) || []) {
      if (state.get(m) === 1) return stack.slice(stack.indexOf(m)).concat(m);
      if (!state.has(m)) {
        const c = visit(m);
        if (c) return c;
      }
    }
    stack.pop();
    state.set(n, 2);
    return null;
  };
  for (const n of edges.keys()) {
    if (!state.has(n)) {
      const c = visit(n);
      if (c) return c;
    }
  }
  return null;
}

const name = (f) => path.relative(root, f.file || f);

test('src/: layers import only down, and no file is part of an import circle', () => {
  const files = rustFiles();
  const edges = rustImports(files);
  const rank = { binding: 3, reactor: 2, conn: 1, proto: 0, net: 0 };
  const up = [];
  for (const [from, tos] of edges) {
    for (const to of tos) {
      const a = rank[from.mod[0]];
      const b = rank[to.mod[0]];
      if (a !== undefined && b !== undefined && b > a) up.push(`${name(from)} → ${name(to)}`);
      if (from.mod[0] !== to.mod[0] && a === b && a !== undefined) {
        up.push(`${name(from)} → ${name(to)} (side by side)`);
      }
    }
  }
  assert.deepStrictEqual(up, []);
  const circle = findCircle(edges);
  assert.strictEqual(circle && circle.map(name).join(' → '), null);
});

test('src/reactor names TLS types only in its TLS room', () => {
  const tls = /\b(rustls|tls_config|tls_scope|tls_tickets|net::tls|TlsSession|TlsEvent|TlsFailure|TlsContext|SessionInfo|AlpnChoice|HANDSHAKE_TIMEOUT)\b/;
  const room = /^src\/reactor\/secure(_setup)?(\.rs|\/)/;
  const named = rustFiles()
    .filter((f) => f.mod[0] === 'reactor' && !room.test(name(f)))
    .filter((f) => tls.test(f.code))
    .map((f) => `${name(f)}: ${f.code.match(tls)[0]}`);
  assert.deepStrictEqual(named, []);
});

test('only the readiness driver reads and writes sockets in the reactor', () => {
  // transport:: is one step of reading or writing a socket (or a TLS session over one);
  // accept() takes a connection from a listener.
  const io = /\btransport::|\.accept\(\)|\bshutdown_write\b/;
  const named = rustFiles()
    .filter((f) => f.mod[0] === 'reactor' && name(f) !== 'src/reactor/readiness.rs')
    .filter((f) => io.test(f.code))
    .map((f) => `${name(f)}: ${f.code.match(io)[0]}`);
  assert.deepStrictEqual(named, []);
});

test('the TLS session holds no socket and reads or writes nothing itself', () => {
  const code = fs.readFileSync(path.join(src, 'net', 'tls.rs'), 'utf8');
  const body = code.match(/pub struct TlsSession \{([\s\S]*?)\n\}/)[1];
  assert.doesNotMatch(body, /sock|Socket|Stream|TcpStream|UnixStream/);
  assert.doesNotMatch(code, /\bmio\b|std::net|libc::/);
  // Control events are values, not io::Error payloads.
  assert.doesNotMatch(code, /io::Error::new\(|ErrorKind::Other/);
});

test('lib/: no require circle', () => {
  const files = walk(path.join(root, 'lib'), '.js');
  const edges = new Map();
  for (const file of files) {
    const code = fs.readFileSync(file, 'utf8');
    const to = new Set();
    for (const m of code.matchAll(/require\('(\.[^']+)'\)/g)) {
      let target = path.resolve(path.dirname(file), m[1]);
      if (!target.endsWith('.js')) target = fs.existsSync(`${target}.js`) ? `${target}.js` : path.join(target, 'index.js');
      if (fs.existsSync(target)) to.add(target);
    }
    edges.set(file, to);
  }
  const circle = findCircle(edges);
  assert.strictEqual(circle && circle.map(name).join(' → '), null);
});
