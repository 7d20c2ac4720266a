'use strict';
// Loads the native addon, trying in order:
//   1. FAST_HTTP_ADDON_PATH, when set: that file and nothing else (a pinned build, or a test
//      simulating a missing or corrupt addon: falling back would hide what it asked for);
//   2. the prebuilt package `fast-http-<triple>` npm installed as an optional dependency;
//   3. a build from source in this package's folder (`npm run build`, or the install-time
//      build when no prebuilt package fits).
// In a git checkout of fast-http, 3 comes before 2: the local build is the code under
// development, and a published package npm put in the checkout's node_modules would be stale.
// When nothing loads, ONE error (code ERR_FAST_HTTP_NO_ADDON) says what was tried and what to do.
//
// The native boundary of lib/, in one file: the addon, the flag values it defines (F_* request
// facts, R_* how to write a response, S_* server settings: src/binding/flags.rs), the server
// options it takes, the JS objects it refers to by id, and its one-time init.
const fs = require('node:fs');
const path = require('node:path');
const { binaryName, packageName, triple } = require('./binary-name');
const { METHODS, STATUS_CODES } = require('./node-internals');

const root = path.join(__dirname, '..', '..');

function prebuiltTriples() {
  try {
    const deps = require('../package.json').optionalDependencies || {};
    return Object.keys(deps).map((name) => name.replace(/^fast-http-/, ''));
  } catch {
    return [];
  }
}

function noAddon(t, tried, cause) {
  const lines = [
    `fast-http: no usable native addon for ${t} (Node ${process.version}, ` +
      `N-API ${process.versions.napi}).`,
    ...tried.map(([what, why]) => `  - ${what}: ${why}`),
  ];
  const prebuilt = prebuiltTriples();
  if (process.env.FAST_HTTP_ADDON_PATH) {
    lines.push('FAST_HTTP_ADDON_PATH points at that file; unset it to use the installed addon.');
  } else if (process.platform === 'win32') {
    lines.push('Windows is not supported yet (see docs/windows.md in the fast-http repository).');
  } else {
    if (prebuilt.includes(t)) {
      lines.push(`A prebuilt binary exists for ${t}: reinstall fast-http without ` +
        `--omit=optional / --no-optional so npm installs ${packageName(t)}.`);
    } else {
      lines.push(`No prebuilt binary for ${t} (there are: ${prebuilt.join(', ')}).`);
    }
    lines.push(`Or build it from source with Rust installed (https://rustup.rs): ` +
      `\`npm rebuild fast-http\`, or \`npm run build\` in ${root}.`);
  }
  const err = new Error(lines.join('\n'), cause ? { cause } : undefined);
  err.code = 'ERR_FAST_HTTP_NO_ADDON';
  return err;
}

// require() of one candidate: the module, or null with the reason noted in `tried`.
function attempt(tried, what, missing, resolve) {
  let file;
  try {
    file = resolve();
  } catch {
    tried.push([what, missing]);
    return null;
  }
  try {
    return require(file);
  } catch (err) {
    tried.push([what, `failed to load (${err.message.split('\n')[0]})`]);
    tried.cause ??= err;
    return null;
  }
}

function load() {
  const t = triple();
  const tried = [];
  const forced = process.env.FAST_HTTP_ADDON_PATH;
  if (forced) {
    const file = path.resolve(forced);
    const addon = attempt(tried, `FAST_HTTP_ADDON_PATH=${file}`, 'no such file', () => {
      if (!fs.existsSync(file)) throw new Error('missing');
      return file;
    });
    if (addon) return addon;
    throw noAddon(t, tried, tried.cause);
  }
  const local = path.join(root, binaryName(t));
  const candidates = [
    [packageName(t), 'not installed', () => require.resolve(packageName(t))],
    [local, 'not built', () => {
      if (!fs.existsSync(local)) throw new Error('missing');
      return local;
    }],
  ];
  if (fs.existsSync(path.join(root, '.git'))) candidates.reverse();
  for (const [what, missing, resolve] of candidates) {
    const addon = attempt(tried, what, missing, resolve);
    if (addon) return addon;
  }
  throw noAddon(t, tried, tried.cause);
}

const binding = load();

/** The addon's flag values (JS never keeps its own copies). */
const flags = Object.freeze({ ...binding.flags });

/** Server objects by native server id. */
const servers = [];
/** Socket objects by native connection id, for connections JS holds objects for. */
const sockets = new Map();

let initialized = false;

/** Gives the addon the JS callbacks it calls for native events (once per thread). */
function init(handlers) {
  if (initialized) return;
  initialized = true;
  const codes = [];
  for (const code of Object.keys(STATUS_CODES)) codes.push(Number(code), STATUS_CODES[code]);
  binding.init(handlers, METHODS, codes);
  // node:http writes an ended response at once, so it reaches the client even when the
  // process exits right after: write what is queued before this one exits.
  process.on('exit', binding.flushAll);
}

module.exports = { binding, flags, servers, sockets, init };
