'use strict';
// Sending a request in pieces that the server reads one at a time. A sleep between two writes
// does not make them two reads: on a busy machine the server's next read can come after both
// pieces have arrived, and a test that logs what each read produced then sees one piece where
// it expected two. So the client waits until the server has read a piece before it sends the
// next one.
//
// "Has read" is the server socket's bytesRead: node:http counts it in the handle, whether the
// parser consumes the socket or not, and fast-http in the addon; both run the parser and emit
// the events for a read inside that read's callback, so once the count has grown (seen from
// a later macrotask) the server has also emitted what that piece caused.

const POLL_MS = 2;
const DEFAULT_TIMEOUT_MS = 10000;

/**
 * Keeps the server's connections by their remote port, so that a test's client finds the
 * server side of its own connection. Call before the client connects.
 */
function trackConnections(server) {
  const byPort = new Map();
  const waiting = new Map();
  server.on('connection', (socket) => {
    const port = socket.remotePort;
    byPort.set(port, socket);
    const w = waiting.get(port);
    if (w) {
      waiting.delete(port);
      for (const resolve of w) resolve(socket);
    }
  });
  return {
    /** The server side of `client`'s connection, once the server has accepted it. */
    of(client) {
      const port = client.localPort;
      if (byPort.has(port)) return Promise.resolve(byPort.get(port));
      return new Promise((resolve) => {
        if (!waiting.has(port)) waiting.set(port, []);
        waiting.get(port).push(resolve);
      });
    },
    /** The server side for a local port, if accepted yet (for pollers). */
    byPort(port) {
      return byPort.get(port);
    },
  };
}

function readCount(socket) {
  try {
    return socket.bytesRead;
  } catch {
    return -1;
  }
}

/**
 * Resolves true once `serverSocket` has read at least `n` bytes; false if it closed first or
 * `timeoutMs` passed (callers go on, and the comparison shows what happened).
 */
function waitForRead(serverSocket, n, timeoutMs = DEFAULT_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve) => {
    const check = () => {
      if (readCount(serverSocket) >= n) return resolve(true);
      if (Date.now() > deadline) return resolve(false);
      setTimeout(check, POLL_MS);
    };
    check();
  });
}

/**
 * Resolves true once `server` has accepted `n` connections (getConnections(), so no
 * 'connection' listener changes what the server does), false after `timeoutMs`.
 */
function waitForConnections(server, n = 1, timeoutMs = DEFAULT_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve) => {
    const check = () => server.getConnections((err, count) => {
      if (!err && count >= n) return resolve(true);
      if (Date.now() > deadline) return resolve(false);
      setTimeout(check, POLL_MS);
    });
    check();
  });
}

/**
 * Writes `pieces` on `client` one at a time, each once the server has read everything before
 * it, then (with `end`) half-closes once the server has read the last one. `client` must be
 * connected (or connecting: the first write waits for 'connect').
 */
async function sendPieces(tracker, client, pieces, { end = false, timeoutMs } = {}) {
  if (client.connecting) await new Promise((resolve) => client.once('connect', resolve));
  const serverSocket = await tracker.of(client);
  let sent = 0;
  for (const piece of pieces) {
    if (client.destroyed) return;
    client.write(piece);
    sent += Buffer.byteLength(piece);
    await waitForRead(serverSocket, sent, timeoutMs);
  }
  if (end && !client.destroyed) client.end();
}

module.exports = { trackConnections, waitForRead, waitForConnections, sendPieces };
