'use strict';
// `node -r fast-http/register app.js`, `node --import fast-http/register app.js` (or
// `require('fast-http/register')` first thing in an app): node:http's and node:https's servers
// become fast-http's, however the app or its dependencies reach node:http or node:https
// (require, static or dynamic import, with or without `node:`, process.getBuiltinModule).
// fast-http itself (its server code and the addon) is loaded when something first takes
// either module, not here, and patches both then: an app that never serves http pays only for
// what is below (figures in the README's "Use").
const Module = require('node:module');
const path = require('node:path');
const stats = require('./internal/stats');

// Each patched module's server exports, and where fast-http's API has them.
const MODULES = [
  { id: 'http', names: ['createServer', 'Server', 'IncomingMessage', 'ServerResponse'],
    api: (fast) => fast },
  { id: 'https', names: ['createServer', 'Server'], api: (fast) => fast.https },
];
const libDir = __dirname + path.sep;

let patched = false;
// True while fast-http's own modules load: they take node's classes from node:http.
let loading = false;
// Per module, its own values, kept while the getters below stand in for them.
let originals = null;
// Server exports ('http.Server', ...) the app assigned itself while they were getters: patch()
// leaves them.
const assigned = new Set();
// module.registerHooks()' handle while its resolve hook waits for node:http or node:https.
let hooks = null;

/**
 * fast-http's API, or null when its addon cannot load: the app then keeps node:http, with the
 * one warning line lib/index.js writes (platform and fix), unless FAST_HTTP_REQUIRE_NATIVE=1
 * asks to fail instead (index.js throws then).
 */
function loadFast() {
  let fast;
  try {
    fast = require('./index');
  } catch (err) {
    if (process.env.FAST_HTTP_REQUIRE_NATIVE === '1') throw err;
    // A missing addon does not throw (index.js falls back itself); anything else is a bug in
    // fast-http, and the app still starts, on node:http.
    const why = String(err?.message ?? err).split('\n')[0];
    process.stderr.write(`fast-http/register: keeping node:http (${why})\n`);
    return null;
  }
  return fast.native ? fast : null;
}

function setValue(http, name, value) {
  Object.defineProperty(http, name, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * Patches node:http and node:https both (the first one taken loads the other, ~4 ms, so that
 * no hook has to stay for the second one). Returns `mod`.
 */
function patch(mod) {
  if (patched) return mod;
  patched = true;
  let fast = null;
  // Loaded from here, they are taken as fast-http's own (Module._load leaves them).
  const builtins = MODULES.map((m) => require(`node:${m.id}`));
  loading = true;
  try {
    fast = loadFast();
  } finally {
    loading = false;
    // Whatever happens, the getters go: node's values come back, then fast-http's over them.
    if (originals !== null) {
      MODULES.forEach((m, i) => {
        for (const name of m.names) {
          if (Object.getOwnPropertyDescriptor(builtins[i], name)?.get !== undefined) {
            setValue(builtins[i], name, originals[m.id][name]);
          }
        }
      });
      originals = null;
    }
  }
  // The hook has done its work (a failed load leaves the modules as they are for good).
  hooks?.deregister();
  hooks = null;
  if (fast === null) return mod;
  MODULES.forEach((m, i) => {
    const api = m.api(fast);
    for (const name of m.names) {
      if (!assigned.has(`${m.id}.${name}`)) builtins[i][name] = api[name];
    }
  });
  // ESM `import { createServer } from 'node:http'` sees the patched functions too.
  Module.syncBuiltinESMExports();
  return mod;
}

function isHttp(request) {
  return request === 'http' || request === 'node:http' || request === 'https' ||
    request === 'node:https';
}

// require('http') / require('node:http'), from the app or any dependency.
const originalLoad = Module._load;
Module._load = function load(request, parent, isMain) {
  const exports = originalLoad.apply(this, arguments);
  // fast-http's own modules load node's http as it is (they capture node's classes).
  if (!patched && isHttp(request) && !parent?.filename?.startsWith(libDir)) {
    patch(exports);
  }
  return exports;
};

// ESM imports of node:http do not go through Module._load, and nothing in an entry file's
// name says whether some module will import it (a CommonJS app's import() of an ESM
// dependency, .mts, .ts under type stripping, require() of ESM). Two ways to see them:
if (typeof Module.registerHooks === 'function') {
  // Node 22.15+ / 23.5+: resolution hooks run in this thread, synchronously, before the
  // importing module links, so node:http is patched before anyone binds its exports. With a
  // hook, every require and import of the app costs more (~20 us), so it goes once patched.
  const { pathToFileURL } = require('node:url');
  const libURL = pathToFileURL(libDir).href;
  hooks = Module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (!patched && isHttp(specifier) && !context.parentURL?.startsWith(libURL)) {
        patch(null);
      }
      return nextResolve(specifier, context);
    },
  });
  if (typeof process.getBuiltinModule === 'function') {
    const getBuiltinModule = process.getBuiltinModule;
    process.getBuiltinModule = function getBuiltinModule_(id) {
      const mod = Reflect.apply(getBuiltinModule, this, arguments);
      if (!patched && !loading && isHttp(id)) patch(mod);
      return mod;
    };
    Object.defineProperty(process.getBuiltinModule, 'name', { value: 'getBuiltinModule' });
  }
} else {
  // Older Nodes (20, 22 before 22.15): module.register()'s hooks run in a thread that costs
  // ~40 ms of CPU at every start, and loading node:http costs ~4 ms, so node:http is loaded
  // now (node:https too, ~4 ms more) and their server exports become getters that load
  // fast-http the first time anything reads them: an import (each import of a builtin syncs
  // its ESM facade, which reads every export), process.getBuiltinModule, or code holding the
  // module object.
  originals = {};
  for (const m of MODULES) {
    const builtin = require(`node:${m.id}`);
    const own = originals[m.id] = {};
    for (const name of m.names) {
      own[name] = builtin[name];
      const get = function get() {
        // While patch() runs (`patched` already set), code it calls (an APM's require hook
        // patching node:https as patch() loads it) reads node's value.
        if (loading || patched || readByFastHttp(get)) return own[name];
        patch(builtin);
        return builtin[name];
      };
      Object.defineProperty(builtin, name, {
        enumerable: true,
        configurable: true,
        get,
        set(value) {
          // What an app assigns before anything read the export stays, as on node's module.
          assigned.add(`${m.id}.${name}`);
          setValue(builtin, name, value);
        },
      });
    }
  }
}

/**
 * Whether the code reading a getter is fast-http's own (taking node's classes, e.g. an app's
 * `require('fast-http')` under register): it must get node's value, and not start a patch
 * that would load fast-http again from inside its own loading.
 */
function readByFastHttp(getter) {
  const { prepareStackTrace, stackTraceLimit } = Error;
  const holder = {};
  try {
    Error.stackTraceLimit = 1;
    Error.prepareStackTrace = (_, frames) => frames;
    Error.captureStackTrace(holder, getter);
    const file = holder.stack[0]?.getFileName();
    return typeof file === 'string' && file.startsWith(libDir) && file !== __filename;
  } catch {
    return false;
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
}

stats.hook();

module.exports = { patch };
