'use strict';
// secureProtocol 'TLSv1_2_method' (node's way to say TLS 1.2 only, which its own tests use):
// a native server speaking TLS 1.2 only, as node's.
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { raw } = require('../wire/helpers');
const { fastHttps, isFastHttpServer, onBoth, serverOptions, startServer, summarize, tlsExchange } =
  require('./helpers');

const T = { timeout: 30000 };
const GET = raw('GET / HTTP/1.1', 'Host: localhost', '', '');

for (const secureProtocol of ['TLSv1_2_method', 'TLSv1_2_server_method']) {
  test(`secureProtocol ${secureProtocol}: TLS 1.2 only, natively`, T, async () => {
    const options = serverOptions({ secureProtocol });
    assert.ok(isFastHttpServer(fastHttps().createServer(options)), 'made node\'s own server');
    const runs = await onBoth(async (impl) => {
      const seen = [];
      const srv = await startServer(impl, options, (req, res) => {
        seen.push(req.socket.getProtocol());
        res.end('ok');
      });
      try {
        const r = await tlsExchange(srv.port, GET, { until: 1 });
        return { client: { ...summarize(r), secure: r.secure }, seen, events: srv.events };
      } finally {
        await srv.close();
      }
    });
    assert.deepEqual(runs['node:https'].seen, ['TLSv1.2']);
    assert.deepStrictEqual(runs['fast-http'], runs['node:https']);
  });
}
