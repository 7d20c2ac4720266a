'use strict';
// fast-http is node:http's module and fast-http/https node:https's, with the server half
// replaced: every name node's module exports is there (npm test runs this file on Node 20, 22,
// 24 and 26, whose node:http differ), the client half is node's own objects, and names that
// node defines as accessors (globalAgent, maxHeaderSize) behave as node's. Client calls made
// through fast-http's exports reach servers of both kinds.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const fast = require('..');
const fastHttps = require('../lib/https');
const { listenLocal } = require('./helpers/listen-local');
const { key, cert, ca } = require('./helpers/tls-fixtures');

const root = path.join(__dirname, '..');
const TIMEOUT = 30_000;
const FAST_OWN = ['isFastHttpServer', 'native', 'https'];

/** Each export's kind on a module: 'value', 'get', 'get+set'. */
function kinds(mod, keys) {
  return Object.fromEntries(keys.map((k) => {
    const d = Object.getOwnPropertyDescriptor(mod, k);
    return [k, d.get ? (d.set ? 'get+set' : 'get') : 'value'];
  }));
}

/** A GET through `client` (a module's get), resolving with status, body and the agent used. */
function get(client, options) {
  return new Promise((resolve, reject) => {
    const req = client.get(options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode, body, req }));
    });
    req.on('error', reject);
  });
}

test("require('fast-http') has node:http's exports, in node's order, then its own",
  { timeout: TIMEOUT }, () => {
    assert.deepEqual(Object.keys(fast), [...Object.keys(http), ...FAST_OWN]);
  });

test("require('fast-http/https') has node:https's exports, in node's order",
  { timeout: TIMEOUT }, () => {
    assert.deepEqual(Object.keys(fastHttps), Object.keys(https));
    assert.equal(fast.https, fastHttps);
  });

test("the client half is node's own objects; the server half fast-http's",
  { timeout: TIMEOUT }, () => {
    const server = new Set(['createServer', 'Server', 'IncomingMessage', 'ServerResponse']);
    for (const k of Object.keys(http)) {
      if (server.has(k)) assert.notEqual(fast[k], http[k], `fast-http's own ${k}`);
      else assert.equal(fast[k], http[k], `node:http's ${k}`);
    }
    for (const k of Object.keys(https)) {
      if (k === 'createServer' || k === 'Server') assert.notEqual(fastHttps[k], https[k], k);
      else assert.equal(fastHttps[k], https[k], `node:https's ${k}`);
    }
  });

test("accessors are node's: maxHeaderSize is a getter, globalAgent is node's to set",
  { timeout: TIMEOUT }, () => {
    const accessors = Object.keys(http).filter((k) => kinds(http, [k])[k] !== 'value');
    assert.deepEqual(kinds(fast, accessors), kinds(http, accessors));
    assert.equal(fast.maxHeaderSize, http.maxHeaderSize);
    // As on node's module: a getter without a setter refuses an assignment in strict code.
    assert.throws(() => {
      http.maxHeaderSize = 1;
    }, TypeError);
    assert.throws(() => {
      fast.maxHeaderSize = 1;
    }, TypeError);
    const original = http.globalAgent;
    const mine = new http.Agent();
    try {
      fast.globalAgent = mine;
      assert.equal(http.globalAgent, mine, 'set on fast-http, seen by node:http');
      http.globalAgent = original;
      assert.equal(fast.globalAgent, original, 'set on node:http, seen by fast-http');
    } finally {
      http.globalAgent = original;
    }
  });

test("what an APM does to node:http's request is what fast-http's request is", {
  timeout: TIMEOUT,
}, () => {
  const original = http.request;
  function wrapped(...args) {
    return Reflect.apply(original, this, args);
  }
  try {
    http.request = wrapped;
    assert.equal(fast.request, wrapped);
    fast.request = original;
    assert.equal(http.request, original, 'an assignment on fast-http is node:http\'s');
  } finally {
    http.request = original;
  }
});

test('client calls through fast-http: get, request, Agent, globalAgent, ClientRequest', {
  timeout: TIMEOUT,
}, async () => {
  const server = fast.createServer((req, res) => res.end(`${req.method} ${req.url}`));
  const port = await listenLocal(server);
  const original = http.globalAgent;
  try {
    const got = await get(fast, { host: '127.0.0.1', port, path: '/get' });
    assert.deepEqual([got.status, got.body], [200, 'GET /get']);
    assert.ok(got.req instanceof fast.ClientRequest);

    const agent = new fast.Agent({ keepAlive: false });
    let added = 0;
    const addRequest = agent.addRequest;
    agent.addRequest = function counted(...args) {
      added++;
      return Reflect.apply(addRequest, this, args);
    };
    // Set through fast-http, used by node's request() when no agent is given.
    fast.globalAgent = agent;
    const body = await new Promise((resolve, reject) => {
      const req = fast.request({ host: '127.0.0.1', port, path: '/request', method: 'POST' },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => resolve(text));
        });
      req.on('error', reject);
      req.end('x');
    });
    assert.equal(body, 'POST /request');
    assert.equal(added, 1, 'the request went through the agent set as fast-http.globalAgent');
    agent.destroy();
  } finally {
    http.globalAgent = original;
    server.close();
  }
});

test('client calls through fast-http/https: get and globalAgent, against its own server', {
  timeout: TIMEOUT,
}, async () => {
  const server = fastHttps.createServer({ key, cert }, (req, res) => res.end(`tls ${req.url}`));
  const port = await listenLocal(server);
  const original = https.globalAgent;
  try {
    const agent = new fastHttps.Agent({ ca, keepAlive: false });
    // node:https's request() reads its module's globalAgent: set through fast-http/https.
    fastHttps.globalAgent = agent;
    assert.equal(https.globalAgent, agent);
    const got = await get(fastHttps, { host: '127.0.0.1', port, path: '/s', servername: 'localhost' });
    assert.deepEqual([got.status, got.body], [200, 'tls /s']);
    assert.equal(got.req.agent, agent);
    agent.destroy();
  } finally {
    https.globalAgent = original;
    server.close();
  }
});

// ESM: the named exports a module can import from node:http, it can import from fast-http.
test("import('fast-http') names every export of import('node:http'), as the same objects", {
  timeout: TIMEOUT,
}, async () => {
  const names = (ns) => Object.keys(ns).filter((k) => k !== 'default');
  const [nodeNs, fastNs, nodeHttpsNs, fastHttpsNs] = await Promise.all([
    import('node:http'), import('fast-http-native'), import('node:https'),
    import('fast-http-native/https'),
  ]);
  for (const [node, mine, what] of [[nodeNs, fastNs, 'http'], [nodeHttpsNs, fastHttpsNs, 'https']]) {
    const missing = names(node).filter((k) => !(k in mine));
    assert.deepEqual(missing, [], `fast-http's ${what} ESM exports lack these`);
    assert.equal(mine.default, what === 'http' ? fast : fastHttps);
  }
  assert.equal(fastNs.get, nodeNs.get);
  assert.equal(fastNs.createServer, fast.createServer);
  assert.equal(fastHttpsNs.request, nodeHttpsNs.request);
  assert.equal(fastHttpsNs.createServer, fastHttps.createServer);
});

// Where no addon loads the server half is node's too, and the module is still whole.
test('without the addon: the same names, all node:http\'s own', { timeout: TIMEOUT }, () => {
  const r = spawnSync(process.execPath, ['-e', `
    const http = require('node:http'), https = require('node:https');
    const fast = require('fast-http-native'), fastHttps = require('fast-http-native/https');
    const same = (a, b) => Object.keys(b).every((k) => a[k] === b[k]);
    console.log(JSON.stringify({
      keys: Object.keys(fast), httpsKeys: Object.keys(fastHttps), native: fast.native,
      sameHttp: same(fast, http), sameHttps: same(fastHttps, https),
    }));`], {
    cwd: root, encoding: 'utf8', timeout: TIMEOUT - 5000,
    env: { ...process.env, FAST_HTTP_ADDON_PATH: path.join(root, 'no-such-addon.node'),
      FAST_HTTP_REQUIRE_NATIVE: '' },
  });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout);
  assert.deepEqual(got, {
    keys: [...Object.keys(http), ...FAST_OWN], httpsKeys: Object.keys(https), native: false,
    sameHttp: true, sameHttps: true,
  });
  assert.match(r.stderr, /^fast-http: no native addon for /);
});
