'use strict';

// The reason phrase as node's writeHead() takes it: an explicit '' is sent as it is (the
// status line ends after the code's space), a falsy statusMessage set before an implicit
// head gets the code's default text, and anything else is sent as its string form.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { compare, raw } = require('./helpers');

const GET = raw('GET / HTTP/1.1', 'Host: localhost', '', '');

function scenario(name, handler) {
  test(name, { timeout: 30000 }, (t) => compare(t, {
    handler: (req, res, observer) => {
      handler(req, res);
      const m = res.statusMessage;
      observer.events.push({ statusMessage: `${typeof m} ${m}`, statusCode: res.statusCode });
    },
    request: GET,
    until: 1,
    check: (s) => assert.match(s.wire, /^HTTP\/1\.1 /),
  }));
}

scenario('writeHead(200, \'\') sends an empty reason', (req, res) => {
  res.writeHead(200, '');
  res.end('no status text');
});

scenario('writeHead(200, \'\', {headers}) sends an empty reason', (req, res) => {
  res.writeHead(200, '', { 'Content-Type': 'text/plain' });
  res.end('no status text');
});

scenario('writeHead(404, \'\') with no body', (req, res) => {
  res.writeHead(404, '');
  res.end();
});

scenario('writeHead(200, \'\') then write() and end()', (req, res) => {
  res.writeHead(200, '');
  res.write('a');
  res.end('b');
});

scenario('writeHead(200, \'\') then flushHeaders()', (req, res) => {
  res.writeHead(200, '');
  res.flushHeaders();
  res.end('b');
});

scenario('statusMessage = \'\' then end()', (req, res) => {
  res.statusMessage = '';
  res.end('x');
});

scenario('statusMessage = \'\' then writeHead(200, {headers})', (req, res) => {
  res.statusMessage = '';
  res.writeHead(200, { 'X-A': '1' });
  res.end('x');
});

scenario('statusMessage = 123 then end()', (req, res) => {
  res.statusMessage = 123;
  res.end('x');
});

scenario('statusMessage = 123 then end() with no body', (req, res) => {
  res.statusMessage = 123;
  res.end();
});

scenario('statusMessage = 123 then writeHead(201)', (req, res) => {
  res.statusMessage = 123;
  res.writeHead(201);
  res.end(Buffer.from('x'));
});

scenario('statusMessage = 123 then write()', (req, res) => {
  res.statusMessage = 123;
  res.write('a');
  res.end();
});

scenario('statusMessage = 0 then end()', (req, res) => {
  res.statusMessage = 0;
  res.end('x');
});

scenario('statusMessage = null then end()', (req, res) => {
  res.statusMessage = null;
  res.end('x');
});

scenario('statusMessage = undefined then end()', (req, res) => {
  res.statusMessage = undefined;
  res.end('x');
});

scenario('statusMessage = an object with toString() then end()', (req, res) => {
  res.statusMessage = { toString: () => 'From Object' };
  res.end('x');
});

scenario('statusMessage = true then writeHead(200, {headers})', (req, res) => {
  res.statusMessage = true;
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  res.end('x');
});

scenario('statusMessage = 1.5 then setHeader() and end()', (req, res) => {
  res.statusMessage = 1.5;
  res.setHeader('X-A', 'b');
  res.end('x');
});

scenario('writeHead(200, \'é\') with a string body', (req, res) => {
  res.writeHead(200, 'é');
  res.end('x');
});
