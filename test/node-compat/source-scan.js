'use strict';

// Static facts about one Node core test file, read from its source the same
// way tools/test.py does, so a test runs here with the flags it runs with in
// Node's CI.

const fs = require('node:fs');

// Same pattern as test/testpy/__init__.py (FLAGS_PATTERN): first match wins,
// anywhere in the file.
const FLAGS_RE = /\/\/\s+Flags:(.*)/;

// Modules whose servers fast-http is expected to serve natively. https servers are
// judged separately (run.js --https): they count as served only through the https
// fields of the stats line, since a native http server proves nothing about TLS.
const SERVED_MODULES = ['http'];
const HTTPS_MODULES = ['https'];

function parseFlags(source) {
  const m = FLAGS_RE.exec(source);
  return m ? m[1].trim().split(/\s+/).filter(Boolean) : [];
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Whether the test constructs a server of one of `modules`. A heuristic over
// the source text, deliberately generous: a false positive only means a test
// that passes without any native server gets reported as "unserved" (and is
// then listed in expectations with a reason), whereas a false negative would
// let an unserved test count as a pass silently.
function createsServer(source, modules = SERVED_MODULES) {
  const mod = `(?:node:)?(?:${modules.map(escapeRe).join('|')})`;
  const req = `require\\(\\s*['"]${mod}['"]\\s*\\)`;
  const from = `from\\s*['"]${mod}['"]`;

  // require('http').createServer(...) / new (require('http').Server)(...)
  if (new RegExp(`${req}\\s*\\.\\s*(?:createServer|Server)\\b`).test(source)) return true;

  // const http = require('http'); ... http.createServer( / new http.Server( /
  // http.Server.call(this) / { createServer: http.createServer } -- any
  // reference counts, since tests pass these around before calling them. The
  // conventional name `http` is checked even when bound some other way.
  // ESM (.mjs tests): import http from 'http' / import * as http from 'node:http'.
  const names = new Set(modules);
  const bindRe = new RegExp(`(?:const|let|var)\\s+([\\w$]+)\\s*=\\s*${req}`, 'g');
  for (const m of source.matchAll(bindRe)) names.add(m[1]);
  const importRe = new RegExp(`import\\s+(?:\\*\\s+as\\s+)?([\\w$]+)\\s*(?:,\\s*\\{[^}]*\\}\\s*)?${from}`, 'g');
  for (const m of source.matchAll(importRe)) names.add(m[1]);
  for (const name of names) {
    const useRe = new RegExp(`(?<![\\w$.])${escapeRe(name)}\\s*\\.\\s*(?:createServer|Server)\\b`);
    if (useRe.test(source)) return true;
  }

  // const { createServer, Server: S } = require('http'); ... createServer(
  // import { createServer, Server as S } from 'node:http'; ... createServer(
  const destructRe = new RegExp(`(?:const|let|var)\\s*\\{([^}]*)\\}\\s*=\\s*${req}`, 'g');
  const namedRe = new RegExp(`import\\s+(?:[\\w$]+\\s*,\\s*)?\\{([^}]*)\\}\\s*${from}`, 'g');
  const parts = [];
  for (const m of source.matchAll(destructRe)) {
    for (const part of m[1].split(',')) parts.push(part.split(':').map((x) => x.trim()));
  }
  for (const m of source.matchAll(namedRe)) {
    for (const part of m[1].split(',')) parts.push(part.split(/\s+as\s+/).map((x) => x.trim()));
  }
  for (const [orig, alias] of parts) {
    if (orig !== 'createServer' && orig !== 'Server') continue;
    const local = alias || orig;
    if (new RegExp(`(?<![\\w$.])${escapeRe(local)}\\s*\\(`).test(source)) return true;
  }
  return false;
}

// Block comments and whole-line // comments: enough to drop prose like "covers
// http.Server({ IncomingMessage })" without a tokenizer ('https://...' strings stay).
function stripComments(source) {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

function readTestSource(file) {
  const source = fs.readFileSync(file, 'utf8');
  const createsHttpsServer = createsServer(source, HTTPS_MODULES);
  return {
    flags: parseFlags(source),
    // An https test's comments often name http.Server (the options it shares with https);
    // only its code says whether it also makes an http server.
    createsServer: createsServer(createsHttpsServer ? stripComments(source) : source),
    createsHttpsServer,
  };
}

module.exports = { parseFlags, createsServer, readTestSource, SERVED_MODULES, HTTPS_MODULES };
