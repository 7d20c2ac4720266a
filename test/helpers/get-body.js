'use strict';
// GET / from a server on 127.0.0.1 (node's client, no agent): resolves with the body.
const http = require('node:http');

function getBody(port) {
  return new Promise((resolve, reject) => {
    http.get({ port, host: '127.0.0.1', path: '/', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

module.exports = { getBody };
