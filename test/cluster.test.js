'use strict';
// cluster workers serving one port with fast-http, compared with node:http on the running
// Node: round-robin hand-off and a shared listening socket, maxConnections in a worker (the
// primary hands the connection to another worker on Node 22+) and dropMaxConnection ('drop').
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const path = require('node:path');

const app = path.join(__dirname, 'fixtures', 'cluster-app.js');

function run(impl, policy) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [app], {
      env: { ...process.env, IMPL: impl, NODE_CLUSTER_SCHED_POLICY: policy },
      timeout: 30000,
    }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${impl} ${policy}: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

for (const policy of ['rr', 'none']) {
  test(`cluster (${policy}): served, refused at maxConnections, dropped`, async () => {
    const node = await run('node', policy);
    const fast = await run('fast', policy);
    assert.deepEqual(fast, node);
    assert.equal(node.filter((l) => l.startsWith('HTTP/1.1 200 OK ok /')).length, 6);
  });
}
