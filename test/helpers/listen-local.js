'use strict';
// A test server's start and end on loopback, bounded in time.

/**
 * Starts `server` on an ephemeral port of 127.0.0.1; resolves with the port once it listens,
 * rejects with the server's 'error' or when it has not listened within `timeout` ms.
 */
function listenLocal(server, timeout = 15000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('listen() timed out')), timeout);
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      clearTimeout(timer);
      server.removeListener('error', reject);
      resolve(server.address().port);
    });
  });
}

/**
 * Closes `server` and destroys `sockets` (the server's connections); resolves on 'close', or
 * after 2 s: a comparison already captured must not hang the suite on a server that never
 * reports 'close' (the test's own event log fails it then).
 */
function closeBounded(server, sockets) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 2000);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    if (typeof server.closeAllConnections === 'function') server.closeAllConnections();
    for (const s of sockets) s.destroy();
  });
}

module.exports = { listenLocal, closeBounded };
