'use strict';
// Loads the native addon, trying in order:
//   1. FAST_HTTP_ADDON_PATH, when set: that file and nothing else (a pinned build, or a test
//      simulating a missing or corrupt addon: falling back would hide what it asked for);
//   2. the prebuilt package `fast-http-native-<triple>` npm installed as an optional dependency;
//   3. a build from source in this package's folder (`npm run build`, or the install-time
//      build when no prebuilt package fits).
// In a git checkout of fast-http, 3 comes before 2: the local build is the code under
// development, and a published package npm put in the checkout's node_modules would be stale.
// When nothing loads, ONE error (code ERR_FAST_HTTP_NO_ADDON) says what was tried and what to do;
// lib/index.js turns it into node:http's server and a one-line warning, unless
// FAST_HTTP_REQUIRE_NATIVE=1.
//
// The native boundary of lib/, in one file: the addon, the flag values it defines (F_* request
// facts, R_* how to write a response, S_* server settings: src/binding/flags.rs), the server
// defaults and client-error statuses it declares, the JS objects it refers to by id, and its
// one-time init. What crosses is declared once, in the addon (src/binding/crossings.rs,
// `binding.contract`); lib/internal/native.d.ts is generated from it (scripts/check-contract.js
// --write) and lib/ is type-checked against it.
const fs = require('node:fs');
const path = require('node:path');
const { PACKAGE, binaryName, packageName, triple } = require('./binary-name');
const { METHODS, STATUS_CODES } = require('./node-internals');
const { SocketTable } = require('./socket-table');
const { makeOnEvents } = require('./events');
const { makeResponseBatch, guard } = require('./response-batch');

const root = path.join(__dirname, '..', '..');
const checkout = fs.existsSync(path.join(root, '.git'));

// The platforms a prebuilt package exists for: the main package's optionalDependencies.
function prebuiltTriples() {
  try {
    const deps = require('../../package.json').optionalDependencies || {};
    const prefix = packageName('');
    return Object.keys(deps).filter((n) => n.startsWith(prefix)).map((n) => n.slice(prefix.length));
  } catch {
    return [];
  }
}

// The name npm knows this copy by: its folder under node_modules (`fast-http` when installed
// with the README's alias, `fast-http-native` without), or the registry name in a checkout.
function installedName() {
  const parent = path.dirname(root);
  if (path.basename(parent) === 'node_modules') return path.basename(root);
  if (path.basename(path.dirname(parent)) === 'node_modules' && path.basename(parent)[0] === '@') {
    return `${path.basename(parent)}/${path.basename(root)}`;
  }
  return PACKAGE;
}

/**
 * Whether the app's package-lock.json (the nearest one above this package) lists `name`:
 * true, false, or null when there is none to read.
 */
function lockfileLists(name) {
  for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
    let lock;
    try {
      lock = JSON.parse(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8'));
    } catch (err) {
      if (err.code !== 'ENOENT') return null;
      if (path.dirname(dir) === dir) return null;
      continue;
    }
    return Object.keys(lock.packages ?? {}).some((p) => p.endsWith(`node_modules/${name}`));
  }
}

/** Why the prebuilt package for `t` is missing, and what brings it back, in one sentence. */
function missingPrebuilt(t, rebuild) {
  const pkg = packageName(t);
  const { version } = require('../../package.json');
  const bug = 'npm keeps optional platform packages in package-lock.json only for the OS it ' +
    'was made on (npm/cli#4828, e.g. a lockfile from macOS in a Linux Docker build)';
  const reinstall = 'delete node_modules and package-lock.json and run `npm install` on this ' +
    `machine, or add it to the app: \`npm install ${pkg}@${version}\``;
  switch (lockfileLists(pkg)) {
    case false:
      return `${pkg} (the prebuilt binary for ${t}) is not installed and package-lock.json ` +
        `does not list it: ${bug}. ${reinstall}; or ${rebuild}.`;
    case true:
      return `reinstall without --omit=optional / --no-optional so npm installs ${pkg} ` +
        `(the prebuilt binary for ${t}), or ${rebuild}.`;
    default:
      return `${pkg} (the prebuilt binary for ${t}) is not installed. Most often ${bug}: ` +
        `${reinstall}. An install with --omit=optional / --no-optional skips it too. Or ` +
        `${rebuild}.`;
  }
}

// What to do about a missing addon, in one line: the warning printed when fast-http falls back
// to node:http repeats it, and npm hides install-script output, so this is the guide users see.
function fixFor(t) {
  if (process.env.FAST_HTTP_ADDON_PATH) {
    return 'FAST_HTTP_ADDON_PATH points at that file: unset it to use the installed addon.';
  }
  if (process.platform === 'win32') {
    return 'fast-http has no Windows addon yet (docs/windows.md in the fast-http repository): ' +
      'apps run on node:http there.';
  }
  if (checkout) return `build it: \`npm run build\` in ${root} (needs Rust, https://rustup.rs).`;
  const rebuild = `install Rust (https://rustup.rs) and run \`npm rebuild ${installedName()}\``;
  const prebuilt = prebuiltTriples();
  if (prebuilt.includes(t)) return missingPrebuilt(t, rebuild);
  return `no prebuilt binary for ${t} (there are: ${prebuilt.join(', ')}): ${rebuild}.`;
}

function noAddon(t, tried, cause) {
  const fix = fixFor(t);
  const lines = [
    `fast-http: no usable native addon for ${t} (Node ${process.version}, ` +
      `N-API ${process.versions.napi}).`,
    ...tried.map(([what, why]) => `  - ${what}: ${why}`),
    `To fix: ${fix}`,
  ];
  if (!process.env.FAST_HTTP_ADDON_PATH && process.platform !== 'win32' && !checkout) {
    lines.push(`(\`npm run build\` in ${root} builds it by hand.)`);
  }
  const err = new Error(lines.join('\n'), cause ? { cause } : undefined);
  err.code = 'ERR_FAST_HTTP_NO_ADDON';
  // For the one-line warning of the node:http fallback (lib/index.js).
  err.platform = t;
  err.fix = fix;
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
  if (checkout) candidates.reverse();
  for (const [what, missing, resolve] of candidates) {
    const addon = attempt(tried, what, missing, resolve);
    if (addon) return addon;
  }
  throw noAddon(t, tried, tried.cause);
}

const addon = load();

/**
 * The array ended responses wait in during a batch (lib/internal/response-batch.js): 64 of
 * them, then they are handed over early.
 */
const responses = new Float64Array(addon.constants.RESPONSES_START +
  64 * addon.constants.RESPONSE_NUMBERS);
const batch = makeResponseBatch(addon, responses, addon.constants);
/** The addon as lib/ calls it: responses queued per batch, nothing overtaking them. */
const binding = guard(addon, batch);

/** The addon's flag values (JS never keeps its own copies). */
const flags = Object.freeze({ ...binding.flags });

/** The addon's named values in place of sentinel numbers (SNI_FAILED, NO_RESPONSE, ...). */
const constants = Object.freeze({ ...binding.constants });

/** node:http's server defaults and header-count limits, as the addon starts servers with. */
const defaults = Object.freeze({ ...binding.defaults });

function closingResponse(status) {
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`;
}

/**
 * What node:http writes for a parse error no 'clientError' listener handled, by error code
 * (socketOnError); `badRequestResponse` for the codes not listed.
 */
const clientErrorResponses = { __proto__: null };
for (const code of Object.keys(binding.clientErrorStatus)) {
  if (code !== 'default') clientErrorResponses[code] = closingResponse(binding.clientErrorStatus[code]);
}
const badRequestResponse = closingResponse(binding.clientErrorStatus.default);

/** Server objects by native server id. */
const servers = [];
/** Socket objects by native connection id, for connections JS holds objects for. */
const sockets = new SocketTable(flags.ID_INDEX_MASK);

let initialized = false;

/**
 * The array batches of events share with the addon (lib/internal/events.js): 32 KiB, some
 * 500 requests per call.
 */
const events = new Float64Array(4096);

/**
 * Gives the addon the JS handlers of its events and callbacks (once per thread): the events
 * through `onEvents` and `onBatch`, made from the addon's declarations, the direct callbacks
 * as they are; `ready(resource)`: whether a connection's groups may run in a batch;
 * `beginGroup(k, id)`: a batch's group k, of connection `id`, begins. Throws when one of
 * `binding.contract.callbacks` has no handler.
 */
function init(handlers, waiting, ready, beginGroup) {
  if (initialized) return;
  initialized = true;
  const codes = [];
  for (const code of Object.keys(STATUS_CODES)) codes.push([Number(code), STATUS_CODES[code]]);
  const slots = {
    group: constants.EVENTS_GROUP,
    count: constants.EVENTS_COUNT,
    ready: constants.EVENTS_READY,
    at: constants.EVENTS_AT,
    start: constants.EVENTS_START,
  };
  const registered = makeOnEvents(binding.contract.callbacks, handlers, events, slots, waiting,
    ready, beginGroup);
  for (const [name, , , isEvent] of binding.contract.callbacks) {
    if (!isEvent) registered[name] = handlers[name];
  }
  binding.init(registered, METHODS, codes, events, responses);
  // node:http writes an ended response at once, so it reaches the client even when the
  // process exits right after: write what is queued before this one exits.
  process.on('exit', () => binding.flushAll());
}

module.exports = {
  binding, flags, constants, defaults, clientErrorResponses, badRequestResponse, servers,
  sockets, events, init, responseBatch: batch,
};
