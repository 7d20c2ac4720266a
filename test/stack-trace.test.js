'use strict';
// An uncaught throw in a listener: node prints the source line of the throw, a caret under
// it and the stack. Under fast-http/register all of it must be node's
// (test/fixtures/throw-in-handler.js, compared on node:http).
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');

const REGISTER = path.resolve(__dirname, '..', 'lib', 'register.js');
const APP = path.join(__dirname, 'fixtures', 'throw-in-handler.js');

function run(where, register) {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  delete env.NODE_OPTIONS;
  const args = register ? ['-r', REGISTER, APP, where] : [APP, where];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the app did not exit (${where}, register: ${register})\n${stderr}`));
    }, 30000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** What node printed: `file:line`, the source line, the caret line and the first app frame. */
function report({ code, stderr }) {
  const lines = stderr.split('\n').filter((l) => !l.startsWith('fast-http/register:'));
  const start = lines.findIndex((l) => l.startsWith(`${APP}:`));
  assert.notEqual(start, -1, `no source excerpt in:\n${stderr}`);
  return {
    code,
    location: lines[start],
    source: lines[start + 1],
    caret: lines[start + 2],
    message: lines.find((l) => l.startsWith('Error: ')),
    appFrame: lines.find((l) => l.startsWith('    at ') && l.includes(APP)),
  };
}

async function compareRuns(where) {
  const node = report(await run(where, false));
  const fast = report(await run(where, true));
  return { node, fast };
}

const WHERE = ['request', 'request-split', 'data', 'data-later', 'end', 'connection',
  'clientError', 'timeout'];
for (const where of WHERE) {
  test(`a throw in '${where}': the source excerpt and the first app frame`, { timeout: 60000 },
    async () => {
      const { node, fast } = await compareRuns(where);
      assert.equal(node.code, 1);
      // The caret goes under the `throw` (V8's message of the throw), not under `new Error`
      // (the error's own stack, all a throw inside an N-API call leaves): fast-http runs
      // these listeners from the tick queue (lib/http/tick-queue.js).
      assert.deepStrictEqual(fast, node);
    });
}
