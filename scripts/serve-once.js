'use strict';
// `node scripts/serve-once.js`: starts a fast-http server from this checkout's lib/, sends it
// one request with node:http and prints `<status> <body>` and the addon file that served it.
// build:platforms runs it with FAST_HTTP_ADDON_PATH on each binary a local (or emulated)
// Node can load, so a cross-built binary is shown to serve, not only to link.
const http = require('node:http');
const { createServer } = require('../lib/index.js');

const server = createServer((req, res) => res.end(`served on ${process.platform}-${process.arch}`));
server.listen(0, '127.0.0.1', () => {
  http.get({ host: '127.0.0.1', port: server.address().port, path: '/' }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => { body += chunk; });
    res.on('end', () => {
      const addon = Object.keys(require.cache).find((f) => f.endsWith('.node'));
      console.log(`${res.statusCode} ${body} (${addon})`);
      server.close();
    });
  });
});
