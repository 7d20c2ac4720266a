'use strict';
// Starts `server` on an ephemeral port of 127.0.0.1 and resolves once it listens; rejects with
// the server's 'error', or when it has not listened within `timeout` ms.
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

module.exports = { listenLocal };
