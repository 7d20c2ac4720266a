'use strict';
// The TLS fuzzer (bench/tls-fuzz/run.js) for a few seconds per run of the suite: damaged
// ClientHellos, bad records after real handshakes, requests in random pieces and noise, while
// a plain request must still be answered, then no connection or descriptor left and the
// server alive. Seed 5 killed the server before 9a2a781 (an N-API handle made outside a
// handle scope) within its first 10,000 cases; the long run (180 s) is in the issue notes.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

test('five seconds of TLS fuzzing: no crash, hang, leak or lost response', { timeout: 120000 }, () => {
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'bench', 'tls-fuzz', 'run.js'),
    '--seconds', '5', '--seed', '5', '--clients', '4'], { encoding: 'utf8', timeout: 100000 });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /^passed: no crash, hang, leak or lost response \(seed 5\)$/m);
  assert.match(r.stdout, /^cases: [1-9]\d* \(hello [1-9]\d*, noise [1-9]\d*, records [1-9]\d*, split [1-9]\d*\)$/m);
});
