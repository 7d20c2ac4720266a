'use strict';

// A body with an unknown encoding: node's end() writes the head first (headersSent is true
// when ERR_UNKNOWN_ENCODING is thrown), and what the response does afterwards follows from
// that: node's socket stays corked with the head in it, so a later end() sends nothing until
// the socket goes (the scenarios destroy it), while write() uncorks it.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { compare, raw } = require('./helpers');

const GET = raw('GET / HTTP/1.1', 'Host: localhost', '', '');

function state(res) {
  return {
    headersSent: res.headersSent,
    writableEnded: res.writableEnded,
    writableFinished: res.writableFinished,
    finished: res.finished,
  };
}

function attempt(observer, res, fn) {
  try {
    fn();
    observer.events.push({ threw: null, ...state(res) });
  } catch (err) {
    observer.events.push({ threw: err.code, message: err.message, ...state(res) });
  }
}

function scenario(name, handler, until = 1, code = 'ERR_UNKNOWN_ENCODING') {
  test(name, { timeout: 30000 }, (t) => compare(t, {
    handler,
    request: GET,
    until,
    check: (s, observer) => {
      if (code !== null) assert.equal(observer.events[0].threw, code);
    },
  }));
}

/** The follow-up, then the connection destroyed a turn later (node would send nothing more). */
function thenDestroy(res, followUp) {
  const socket = res.socket;
  setImmediate(() => {
    followUp();
    setImmediate(() => socket.destroy());
  });
}

scenario('end(string, bogus encoding), then end(data)', (req, res, observer) => {
  attempt(observer, res, () => res.end('abc', 'bogus'));
  thenDestroy(res, () => attempt(observer, res, () => res.end('ok')));
}, 'close');

scenario('end(string, bogus encoding), then end()', (req, res, observer) => {
  attempt(observer, res, () => res.end('abc', 'bogus'));
  thenDestroy(res, () => attempt(observer, res, () => res.end()));
}, 'close');

scenario('end(Buffer, bogus encoding), then end()', (req, res, observer) => {
  attempt(observer, res, () => res.end(Buffer.from('abc'), 'bogus'));
  thenDestroy(res, () => attempt(observer, res, () => res.end()));
}, 'close');

// 'buffer' is no encoding Buffer knows; node 20 and 22 send the string, later ones differ.
scenario('end(string, \'buffer\'), then end()', (req, res, observer) => {
  attempt(observer, res, () => res.end('abc', 'buffer'));
  thenDestroy(res, () => attempt(observer, res, () => res.end()));
}, 'close', null);

scenario('end(string, bogus encoding), then write() and end()', (req, res, observer) => {
  attempt(observer, res, () => res.end('abc', 'bogus'));
  setImmediate(() => {
    attempt(observer, res, () => res.write('more'));
    attempt(observer, res, () => res.end());
  });
});

scenario('end(string, bogus encoding), then setHeader()', (req, res, observer) => {
  attempt(observer, res, () => res.end('abc', 'bogus'));
  attempt(observer, res, () => res.setHeader('X-Late', '1'));
  thenDestroy(res, () => attempt(observer, res, () => res.end()));
}, 'close');

scenario('end(string, bogus encoding), then destroy()', (req, res, observer) => {
  attempt(observer, res, () => res.end('abc', 'bogus'));
  setImmediate(() => res.destroy());
}, 'close');

scenario('writeHead() then end(string, bogus encoding)', (req, res, observer) => {
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  attempt(observer, res, () => res.end('abc', 'bogus'));
  setImmediate(() => attempt(observer, res, () => res.end('x')));
});

scenario('setHeader() then end(string, bogus encoding)', (req, res, observer) => {
  res.setHeader('Content-Type', 'text/plain');
  attempt(observer, res, () => res.end('abc', 'bogus'));
  thenDestroy(res, () => attempt(observer, res, () => res.end()));
}, 'close');

scenario('write(string, bogus encoding), then end()', (req, res, observer) => {
  attempt(observer, res, () => res.write('abc', 'bogus'));
  thenDestroy(res, () => attempt(observer, res, () => res.end()));
}, 'close');
