'use strict';
// The JS ↔ addon contract (src/binding/contract.rs): the addon rejects a missing, extra or
// mistyped argument instead of reading it as 0, and scripts/check-contract.js fails when lib/
// and the addon's declarations disagree (shown here on copies with a deliberate mismatch).
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { binding, flags, constants, defaults } = require('../lib/internal/native');

const root = path.join(__dirname, '..');
const script = path.join(root, 'scripts', 'check-contract.js');

function check(...args) {
  const r = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 110000 });
  return { status: r.status, out: r.stdout + r.stderr };
}

function typeError(fn, re) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof TypeError, String(err));
    assert.strictEqual(err.code, 'ERR_INVALID_ARG_TYPE');
    assert.match(err.message, re);
    return true;
  });
}

test('a missing, extra or mistyped argument throws instead of reading as 0', { timeout: 10000 },
  () => {
    typeError(() => binding.pause(), /pause\(\): argument 'id' must be number, got nothing/);
    typeError(() => binding.pause(1), /argument 'paused' must be boolean, got nothing/);
    typeError(() => binding.setTimeout(1, '5'), /argument 'ms' must be number, got a string/);
    typeError(() => binding.serverFlags(0, 1), /argument 'value' must be number/);
    typeError(() => binding.discardBody(1, 2), /takes 1 arguments, got 2/);
    typeError(() => binding.inject(1, 'text'), /argument 'bytes' must be Uint8Array/);
    typeError(() => binding.raw(1, 5, false, 0, false), /argument 'data' must be string \| Uint8Array/);
    typeError(() => binding.respond(1, 0, 200, null, '', {}, 0, ''), /argument 'body'/);
    typeError(() => binding.serverConfig(2 ** 20, { timeout: '5' }),
      /serverConfig\(\): options\.timeout must be number, got a string/);
    // A well-typed call on a connection that does not exist is a no-op.
    assert.strictEqual(binding.discardBody(2 ** 40), undefined);
  });

test('an object argument refuses a misspelt, missing or mistyped field', { timeout: 10000 },
  () => {
    typeError(() => binding.serverConfig(2 ** 20, { timout: 5 }),
      /serverConfig\(\): options\.timout is not a field of ServerOptions/);
    typeError(() => binding.tlsContextCreate({ ca: [] }),
      /tlsContextCreate\(\): spec\.pairs must be Array<\[Uint8Array, Uint8Array\]>, got undefined/);
    typeError(() => binding.tlsContextCreate({
      pairs: [['cert', new Uint8Array(1)]], ca: [], requestCert: false,
      rejectUnauthorized: true, minVersion: 0x303, maxVersion: 0x304, alpn: [], tickets: true,
    }), /spec\.pairs\[0\]\[0\] must be Uint8Array, got a string/);
  });

test('sentinel values are named constants from the addon', { timeout: 10000 }, () => {
  assert.deepStrictEqual(Object.keys(constants).sort(),
    ['ALPN_NONE', 'ALPN_NOT_ASKED', 'BATCH_LAST_READ', 'BATCH_OPEN', 'EVENTS_AT',
      'EVENTS_COUNT', 'EVENTS_GROUP', 'EVENTS_PROGRESS', 'EVENTS_READY', 'EVENTS_START',
      'NO_RESPONSE', 'RESPONSES_COUNT', 'RESPONSES_HELD_AT',
      'RESPONSES_OPEN', 'RESPONSES_START', 'RESPONSE_NUMBERS',
      'SENT_HEAD', 'SNI_FAILED', 'SNI_SERVER_CONTEXT']);
  assert.deepStrictEqual(binding.contract.constants, { ...constants });
});

test('init refuses a callbacks object without the events entry or a direct callback',
  { timeout: 10000 }, () => {
    const events = new Float64Array(8);
    typeError(() => binding.init({}, [], [], events), /callbacks\.onEvents must be a function/);
    typeError(() => binding.init({ onEvents() {} }, [], [], events),
      /callbacks\.onBatch must be a function/);
    typeError(() => binding.init({ onEvents() {}, onBatch() {} }, [], [], events),
      /callbacks\.onSecure must be a function/);
    typeError(() => binding.init(null, [], [], events), /argument 'callbacks'/);
    const registered = { onEvents() {}, onBatch() {} };
    for (const [name, , , isEvent] of binding.contract.callbacks) {
      if (!isEvent) registered[name] = () => {};
    }
    typeError(() => binding.init(registered, [], [], new Float32Array(8)),
      /argument 'events' must be Float64Array/);
  });

test('the events decoder reads each event as the addon declares it', { timeout: 10000 }, () => {
  const { makeOnEvents } = require('../lib/internal/events');
  const callbacks = binding.contract.callbacks;
  const kind = (name) => callbacks.findIndex(([n]) => n === name);
  const seen = [];
  const handlers = {};
  for (const [name, , , isEvent] of callbacks) {
    if (isEvent) handlers[name] = function (...args) { seen.push([name, this, ...args]); };
  }
  const shared = new Float64Array(128);
  const slots = {
    group: constants.EVENTS_GROUP, count: constants.EVENTS_COUNT, ready: constants.EVENTS_READY,
    at: constants.EVENTS_AT, start: constants.EVENTS_START,
  };
  const begun = [];
  const { onEvents, onBatch } = makeOnEvents(callbacks, handlers, shared, slots, () => true,
    (resource) => resource.ready, (k, id) => begun.push([k, id, shared[slots.group]]));
  // Two events: a request (numbers: sid id seq method flags headEnd; values: url, head,
  // body) and a close (id, errno).
  const request = (id) => [kind('onRequest'), 1, id, 0, 3, 0x10, 99];
  shared[slots.group] = 7;
  shared[slots.count] = 2;
  shared.set([...request(42), kind('onClose'), 42, -104], constants.EVENTS_START);
  const resource = { ready: true };
  onEvents.call(resource, '/a', 'Host: x\r\n', undefined);
  assert.deepStrictEqual(seen, [
    ['onRequest', resource, 1, 42, 0, 3, '/a', 'Host: x\r\n', 0x10, undefined, 99],
    ['onClose', resource, 42, -104],
  ]);
  assert.strictEqual(shared[constants.EVENTS_COUNT], 1, 'JS says events wait');
  assert.strictEqual(shared[constants.EVENTS_READY], 1, 'JS says the resource is ready');
  onEvents.call({ ready: false }, '/a', 'Host: x\r\n', undefined);
  assert.strictEqual(shared[constants.EVENTS_READY], 0);

  // A batch of two connections' groups: [events, connection], then the events; the
  // resource is each group's first value.
  seen.length = 0;
  const at = 40;
  shared[slots.group] = 11;
  shared[slots.count] = 2;
  shared[slots.at] = at;
  shared.set([1, 42, ...request(42), 2, 43, ...request(43), ...request(43)], at);
  const a = { a: 1 };
  const b = { b: 1 };
  onBatch(a, '/a', 'H: a\r\n', undefined, b, '/b', 'H: b\r\n', undefined, '/c', 'H: c\r\n',
    undefined);
  assert.deepStrictEqual(seen, [
    ['onRequest', a, 1, 42, 0, 3, '/a', 'H: a\r\n', 0x10, undefined, 99],
    ['onRequest', b, 1, 43, 0, 3, '/b', 'H: b\r\n', 0x10, undefined, 99],
    ['onRequest', b, 1, 43, 0, 3, '/c', 'H: c\r\n', 0x10, undefined, 99],
  ]);
  assert.deepStrictEqual(begun, [[0, 42, 11], [1, 43, 12]], 'each group its own number');
  assert.throws(() => makeOnEvents(callbacks, {}, shared, slots, () => false, () => true,
    () => {}),
    /no handler for the addon's 'onRequest' events/);
});

test('the constants JS uses come from the addon', { timeout: 10000 }, () => {
  for (const k of ['VERSION_MAJOR_SHIFT', 'VERSION_MINOR_SHIFT', 'VERSION_DIGIT_MASK']) {
    assert.strictEqual(typeof flags[k], 'number', k);
  }
  assert.deepStrictEqual(Object.keys(binding.clientErrorStatus).sort(),
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 'HPE_HEADER_OVERFLOW', 'default']);
  for (const k of ['keepAliveTimeout', 'headersTimeout', 'requestTimeout', 'maxHeaderPairs']) {
    assert.ok(defaults[k] > 0, k);
  }
  assert.deepStrictEqual(binding.callbacks, binding.contract.callbacks.map(([n]) => n));
});

test('scripts/check-contract.js passes on this tree', { timeout: 120000 }, () => {
  const r = check();
  assert.strictEqual(r.status, 0, r.out);
  assert.match(r.out, /2 passed, 0 failed/);
});

function libCopy(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-contract-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(path.join(root, 'lib'), dir, { recursive: true });
  return dir;
}

/** Replaces `from` in the first file of `dir` holding it (wherever lib/ keeps that code). */
function edit(dir, from, to) {
  for (const e of fs.readdirSync(dir, { recursive: true })) {
    const file = path.join(dir, e);
    if (!file.endsWith('.js') && !file.endsWith('.d.ts')) continue;
    const text = fs.readFileSync(file, 'utf8');
    if (text.includes(from)) return fs.writeFileSync(file, text.replace(from, to));
  }
  assert.fail(`no file of ${dir} holds ${from}`);
}

test('a call that disagrees with the declarations fails the check', { timeout: 120000 }, (t) => {
  const lib = libCopy(t);
  // A missing argument, an unknown export, an unknown flag and an unknown callback.
  edit(lib, 'binding.discardBody(', 'binding.discardBodies(');
  edit(lib, 'binding.tap(this[kId], ', 'binding.tap(');
  edit(lib, 'F_ASK_UPGRADE, F_UPGRADE_BODY,',
    'F_ASK_UPGRADE, F_UPGRADE_BODY, F_NO_SUCH_FLAG,');
  edit(lib, 'init({\n  onRequest,', 'init({\n  onNoSuchEvent() {},\n  onRequest,');
  const r = check('--lib', lib);
  assert.strictEqual(r.status, 1, r.out);
  assert.match(r.out, /not ok - lib\/ uses the native module as declared/);
  assert.match(r.out, /discardBodies/);
  assert.match(r.out, /Expected 2 arguments, but got 1/);
  assert.match(r.out, /F_NO_SUCH_FLAG/);
  assert.match(r.out, /onNoSuchEvent/);
  assert.match(r.out, /1 passed, 1 failed/);
});

test('native.d.ts that is not what the addon declares fails the check', { timeout: 120000 },
  (t) => {
    const lib = libCopy(t);
    edit(lib, 'pause(id: number, paused: boolean)',
      'pause(id: number, paused: number)');
    const r = check('--lib', lib);
    assert.strictEqual(r.status, 1, r.out);
    assert.match(r.out, /not ok - native\.d\.ts is generated from the addon's declarations/);
  });

test('a handler that disagrees with its callback, or an unknown constant, fails the check',
  { timeout: 120000 }, (t) => {
    const lib = libCopy(t);
    // A handler taking an argument the addon does not pass, one using an argument as what it
    // is not (onRequest's method is the parser's method index, a number), an unknown constant.
    edit(lib, 'function onDrain(id) {', 'function onDrain(id, extra) {');
    edit(lib, 'function onRequest(sid, id, seq, method, url, headerBlock, flags, body, headEnd) {',
      'function onRequest(sid, id, seq, method, url, headerBlock, flags, body, headEnd) {\n' +
      '  if (method.length > 7) return;');
    edit(lib, 'const { NO_RESPONSE } = require(', 'const { NO_RESPONSE, NO_SUCH } = require(');
    const r = check('--lib', lib);
    assert.strictEqual(r.status, 1, r.out);
    assert.match(r.out, /native-events\.js:\d+: The type of a function declaration must match/);
    assert.match(r.out, /Property 'length' does not exist on type 'number'/);
    assert.match(r.out, /'NO_SUCH' is not in require/);
  });

test('respondBatch refuses responses past its array instead of dropping them', { timeout: 10000 }, () => {
  require('..'); // registers the array with the addon
  typeError(() => binding.respondBatch(1e6, undefined, '', undefined, undefined),
    /respondBatch\(\): response 1000000 is past the responses array/);
});
