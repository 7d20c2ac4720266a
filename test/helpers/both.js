'use strict';
// Runs one scenario on node:http and on fast-http, one after the other, and returns what
// each logged: tests compare the two logs (node's is the spec).
const nodeHttp = require('node:http');
const fastHttp = require('../..');

/** `scenario(impl, log, done)` calls done() when finished; a scenario that hangs fails. */
async function both(scenario, timeoutMs = 10000) {
  const logs = {};
  for (const [name, impl] of [['node:http', nodeHttp], ['fast-http', fastHttp]]) {
    const log = [];
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} hung: ${log.join(', ')}`)),
        timeoutMs);
      scenario(impl, log, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    logs[name] = log;
  }
  return logs;
}

module.exports = { both };
