'use strict';
// Requests and responses born with the prototype an Express app gives them (lib/http/
// born-with.js): whoever can look at them before the app still sees node's prototype, each
// scenario compared with node:http over several requests on one connection.
const { test } = require('node:test');
const assert = require('node:assert');
const dc = require('node:diagnostics_channel');
const express = require('express');
const { both } = require('./helpers/both');

const REQUESTS = 4;

/** Sends REQUESTS keep-alive GETs to `server`, one after the other, then closes it. */
function requests(server, log, done) {
  server.listen(0, async () => {
    const url = `http://127.0.0.1:${server.address().port}/`;
    for (let i = 0; i < REQUESTS; i++) {
      const r = await fetch(url);
      log.push(`${r.status} ${await r.text()}`);
    }
    server.close(done);
  });
}

/** Where `obj`'s prototype chain starts: the app's, node's (or fast-http's), or else. */
function protoOf(obj, app, impl) {
  const p = Object.getPrototypeOf(obj);
  if (p === app.request || p === app.response) return 'app';
  if (p === impl.IncomingMessage.prototype || p === impl.ServerResponse.prototype) return 'node';
  return 'other';
}

function expressApp(impl, log) {
  const app = express();
  app.get('/', (req, res) => {
    log.push(`app sees ${protoOf(req, app, impl)} ${protoOf(res, app, impl)}`);
    res.send('ok');
  });
  return app;
}

test('a request listener before the app sees node\'s prototypes', { timeout: 30000 },
  async () => {
    const logs = await both((impl, log, done) => {
      const server = impl.createServer();
      const app = expressApp(impl, log);
      server.on('request', (req, res) => {
        log.push(`first sees ${protoOf(req, app, impl)} ${protoOf(res, app, impl)}`);
      });
      server.on('request', app);
      requests(server, log, done);
    });
    assert.deepStrictEqual(logs['fast-http'], logs['node:http']);
  });

test('an emit wrapper sees node\'s prototypes', { timeout: 30000 }, async () => {
  const logs = await both((impl, log, done) => {
    const app = expressApp(impl, log);
    const server = impl.createServer(app);
    const emit = server.emit;
    server.emit = function (event, req, res) {
      if (event === 'request') log.push(`wrapper sees ${protoOf(req, app, impl)} ${protoOf(res, app, impl)}`);
      return emit.apply(this, arguments);
    };
    requests(server, log, done);
  });
  assert.deepStrictEqual(logs['fast-http'], logs['node:http']);
});

test('a request-start subscriber sees node\'s prototypes', { timeout: 30000 }, async () => {
  const logs = await both((impl, log, done) => {
    const app = expressApp(impl, log);
    const server = impl.createServer(app);
    const onStart = ({ request, response }) => {
      log.push(`subscriber sees ${protoOf(request, app, impl)} ${protoOf(response, app, impl)}`);
    };
    dc.subscribe('http.server.request.start', onStart);
    requests(server, log, () => {
      dc.unsubscribe('http.server.request.start', onStart);
      done();
    });
  });
  assert.deepStrictEqual(logs['fast-http'], logs['node:http']);
});

test('a listener that replaces the app between requests sees node\'s prototypes',
  { timeout: 30000 }, async () => {
    const logs = await both((impl, log, done) => {
      const app = expressApp(impl, log);
      const server = impl.createServer(app);
      let n = 0;
      const plain = (req, res) => {
        log.push(`plain sees ${protoOf(req, app, impl)} ${protoOf(res, app, impl)}`);
        res.end('plain');
      };
      server.on('request', () => {
        // After two requests the app gives way to a plain handler, and back.
        if (++n === 2) {
          server.removeAllListeners('request');
          server.on('request', plain);
        }
      });
      server.removeListener('request', app);
      server.prependListener('request', app);
      requests(server, log, done);
    });
    assert.deepStrictEqual(logs['fast-http'], logs['node:http']);
  });

test('Express\'s requests and responses behave as on node:http when born with its prototypes',
  { timeout: 30000 }, async () => {
    const logs = await both((impl, log, done) => {
      const app = express();
      app.use((req, res, next) => {
        log.push(`${req.method} ${req.path} ${req.protocol} ${req.get('host') !== undefined}`);
        log.push(`instanceof ${req instanceof impl.IncomingMessage} ${res instanceof impl.ServerResponse}`);
        // (rawHeaders / rawTrailers are own once read: test/known-differences.test.js)
        const own = Object.keys(req).filter((k) => !k.startsWith('_') && !k.startsWith('raw'));
        log.push(`own ${own.sort().join(',')}`);
        next();
      });
      app.get('/', (req, res) => res.status(201).json({ query: req.query, ok: true }));
      requests(impl.createServer(app), log, done);
    });
    assert.deepStrictEqual(logs['fast-http'], logs['node:http']);
  });
