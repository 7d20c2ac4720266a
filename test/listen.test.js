'use strict';
// listen() errors look like node's: code, errno, syscall, address and port of the failed call.
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const fastHttp = require('..');

function listenError(impl, port, host) {
  return new Promise((resolve) => {
    const s = impl.createServer();
    s.on('error', (e) => resolve({
      message: e.message, code: e.code, errno: e.errno, syscall: e.syscall,
      address: e.address, port: e.port,
    }));
    if (host) s.listen(port, host);
    else s.listen(port);
  });
}

for (const host of [undefined, '127.0.0.1']) {
  test(`EADDRINUSE (host ${host ?? 'default'}) matches node:http`, async () => {
    const holder = http.createServer();
    await new Promise((r) => holder.listen(0, host, r));
    const { port } = holder.address();
    const fast = await listenError(fastHttp, port, host);
    const node = await listenError(http, port, host);
    holder.close();
    assert.deepEqual(fast, node);
  });
}
