'use strict';
// A body's 'data' listener that throws fails the connection's parser, as node's on_body
// callback does (HPE_JS_EXCEPTION: 400, or 'clientError'; what followed in the read is never
// parsed; the next read is answered with the error), whether the body came with its head or
// in a later read; a throwing 'end' listener does not (the message had completed). Before,
// fast-http went on parsing after a throw in the 'data' listener of a body that came with
// its head. Each case runs in a child of its own (the throw is the process's uncaught
// exception).
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');

const CHILD = path.join(__dirname, 'fixtures', 'body-throw-child.js');

function run(impl, kind, listen, warm) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, impl, kind, listen, warm], { timeout: 20000 },
      (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout))));
  });
}

// 'warm': the connection answered a request first, so fast-http hands the POST over in a
// batch of connections' requests (its body piece is a boundary that hands the batch over).
for (const kind of ['data-with-head', 'data-later', 'end', 'end-later']) {
  for (const listen of ['', 'listen']) {
    for (const warm of ['', 'warm']) {
      test(`${kind}${listen ? ', with a clientError listener' : ''}${warm ? ', after a GET' : ''}`,
        { timeout: 60000 }, async () => {
          const node = await run('node:http', kind, listen, warm);
          const fast = await run('fast-http', kind, listen, warm);
          assert.deepEqual(fast, node);
          if (kind.startsWith('data')) assert.ok(!node.includes('request /2'), 'node parsed on');
        });
    }
  }
}
