'use strict';
// Small things the fixtures (test/ecosystem/fixtures/*.js) share.

const fs = require('node:fs');
const path = require('node:path');

const TLS_DIR = path.join(__dirname, '..', '..', 'fixtures', 'tls');

/** The test certificates (test/fixtures/tls): the CA, the server's for localhost, a client's. */
const tlsFiles = {
  ca: () => fs.readFileSync(path.join(TLS_DIR, 'ca-cert.pem')),
  server: () => ({
    key: fs.readFileSync(path.join(TLS_DIR, 'server-rsa-key.pem')),
    cert: fs.readFileSync(path.join(TLS_DIR, 'server-rsa-cert.pem')),
  }),
  client: () => ({
    key: fs.readFileSync(path.join(TLS_DIR, 'client-key.pem')),
    cert: fs.readFileSync(path.join(TLS_DIR, 'client-cert.pem')),
  }),
};

/** Bounds a wait that should end on its own; never an expectation about time. */
const HANG_BOUND_MS = 5_000;

/** listen(port, host) as a promise of the port. */
function listen(server, port = 0, host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address().port);
    });
  });
}

/** Calls server.close() and resolves whether its callback ran (bounded: a hang is a result). */
function closeServer(server, bound = HANG_BOUND_MS) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ calledBack: false }), bound);
    timer.unref();
    try {
      server.close((err) => {
        clearTimeout(timer);
        resolve({ calledBack: true, error: err ? err.code : null });
      });
    } catch (err) {
      clearTimeout(timer);
      resolve({ calledBack: false, threw: err.code || err.message });
    }
  });
}

/** Resolves with the first of `events` that `emitter` emits, or 'none' after `bound` ms. */
function firstEvent(emitter, events, bound = HANG_BOUND_MS) {
  return new Promise((resolve) => {
    const done = (name) => () => {
      clearTimeout(timer);
      for (const [ev, fn] of handlers) emitter.removeListener(ev, fn);
      resolve(name);
    };
    const handlers = events.map((ev) => [ev, done(ev)]);
    for (const [ev, fn] of handlers) emitter.once(ev, fn);
    const timer = setTimeout(done('none'), bound);
    timer.unref();
  });
}

/** A stream-like sink for loggers (morgan): each write is recorded as one entry. */
function recordingStream(ctx, name) {
  return { write: (line) => ctx.record(name, String(line)) };
}

module.exports = { HANG_BOUND_MS, tlsFiles, listen, closeServer, firstEvent, recordingStream };
