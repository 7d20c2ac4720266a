'use strict';
// An uncaught throw in a listener: node prints the source line of the throw, a caret under
// it and the stack. Under fast-http/register the source line and the first frame inside
// the app must be node's (test/fixtures/throw-in-handler.js, compared on node:http).
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

for (const where of ['request', 'request-split', 'data', 'end', 'connection']) {
  test(`a throw in '${where}': the source line and the first app frame`, { timeout: 60000 },
    async () => {
      const { node, fast } = await compareRuns(where);
      assert.equal(node.code, 1);
      const pick = ({ code, location, source, message, appFrame }) =>
        ({ code, location, source, message, appFrame });
      // The split case's source line is where N-API leaves it: see the caret tests below.
      if (where === 'request-split') {
        assert.deepStrictEqual({ ...pick(fast), location: null, source: null },
          { ...pick(node), location: null, source: null });
      } else {
        assert.deepStrictEqual(pick(fast), pick(node));
      }
    });
}

// A listener the addon calls through N-API (napi_make_callback / napi_call_function) throws
// into N-API's own non-verbose v8::TryCatch, which keeps the exception but not V8's message
// (the throw's position); napi_fatal_exception then makes a new message from the error's
// own stack, which points where the error was made. Listeners node runs from the tick queue
// (a body's 'data' and 'end') keep node's caret.
for (const where of ['request', 'request-split', 'connection']) {
  test(`a throw in '${where}': the caret under the throw`, {
    timeout: 60000,
    todo: 'N-API drops the throw\'s position (the caret goes under `new Error`)',
  }, async () => {
    const { node, fast } = await compareRuns(where);
    assert.deepStrictEqual([fast.location, fast.source, fast.caret],
      [node.location, node.source, node.caret]);
  });
}

for (const where of ['data', 'end']) {
  test(`a throw in '${where}': the caret under the throw`, { timeout: 60000 }, async () => {
    const { node, fast } = await compareRuns(where);
    assert.deepStrictEqual([fast.location, fast.source, fast.caret],
      [node.location, node.source, node.caret]);
  });
}
