'use strict';
// Errors fast-http raises itself read as node's: `TypeError [ERR_INVALID_CHAR]: ...` in
// String(err), in the stack's first line and in util.inspect(), with name, code, message,
// classes and own keys as node's internal errors have them. Each misuse runs on node:http
// and on fast-http and the two descriptions must be equal.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const util = require('node:util');
const { both } = require('./helpers/both');

function describe(err) {
  return {
    name: err.name,
    code: err.code,
    message: err.message,
    string: String(err),
    stackHead: String(err.stack).split('\n')[0],
    inspectHead: util.inspect(err).split('\n')[0],
    constructor: err.constructor.name,
    isError: err instanceof Error,
    isTypeError: err instanceof TypeError,
    isRangeError: err instanceof RangeError,
    keys: Object.keys(err),
    own: Object.getOwnPropertyNames(err).sort(),
  };
}

/** Runs `misuse(req, res)` in a request handler on both servers; returns each's description. */
function inHandler(misuse) {
  return both((impl, log, done) => {
    const server = impl.createServer((req, res) => {
      try {
        misuse(req, res);
        log.push('no error');
      } catch (err) {
        log.push(describe(err));
      }
      res.destroy();
    });
    server.listen(0, '127.0.0.1', () => {
      http.get({ port: server.address().port, host: '127.0.0.1' })
        .on('error', () => {})
        .on('close', () => server.close(done));
    });
  });
}

/** Runs `misuse(server)` on a server of each implementation. */
function onServer(misuse) {
  return both((impl, log, done) => {
    misuse(impl, log, done);
  });
}

function check(logs) {
  assert.notEqual(logs['node:http'][0], 'no error', 'node:http threw nothing: the test is broken');
  assert.deepStrictEqual(logs['fast-http'], logs['node:http']);
}

const handlerCases = {
  'ERR_HTTP_INVALID_STATUS_CODE from end()': (req, res) => {
    res.statusCode = 99;
    res.end('x');
  },
  'ERR_INVALID_CHAR from end()': (req, res) => {
    res.statusMessage = 'bad\nmessage';
    res.end('x');
  },
  'ERR_INVALID_CHAR from writeHead()': (req, res) => {
    res.writeHead(200, 'bad\rmessage', { 'X-A': 'b' });
  },
  'ERR_HTTP_TRAILER_INVALID from end()': (req, res) => {
    res.setHeader('Trailer', 'X-T');
    res.setHeader('Content-Length', '1');
    res.end('x');
  },
  'ERR_HTTP_TRAILER_INVALID from writeHead()': (req, res) => {
    res.writeHead(200, { Trailer: 'X-T', 'Content-Length': '1' });
  },
  'ERR_HTTP_SOCKET_ENCODING from socket.setEncoding()': (req) => {
    req.socket.setEncoding('utf8');
  },
  'ERR_INVALID_ARG_TYPE from socket.setTimeout()': (req) => {
    req.socket.setTimeout(1000, 'not a function');
  },
};

for (const [name, misuse] of Object.entries(handlerCases)) {
  test(name, { timeout: 20000 }, async () => check(await inHandler(misuse)));
}

function thrown(fn, log) {
  try {
    fn();
    log.push('no error');
  } catch (err) {
    log.push(describe(err));
  }
}

const serverCases = {
  'ERR_INVALID_ARG_TYPE from createServer()': (impl, log, done) => {
    thrown(() => impl.createServer('options'), log);
    done();
  },
  'ERR_SOCKET_BAD_PORT from listen()': (impl, log, done) => {
    thrown(() => impl.createServer().listen(70000), log);
    done();
  },
  'ERR_INVALID_ARG_VALUE from listen()': (impl, log, done) => {
    thrown(() => impl.createServer().listen({ host: 'localhost' }), log);
    done();
  },
  'ERR_INVALID_ARG_TYPE from listen() with a bad signal': (impl, log, done) => {
    thrown(() => impl.createServer().listen({ port: 0, signal: 1 }), log);
    done();
  },
  'ERR_SERVER_ALREADY_LISTEN from listen()': (impl, log, done) => {
    const server = impl.createServer();
    server.listen(0, '127.0.0.1', () => {
      thrown(() => server.listen(0, '127.0.0.1'), log);
      server.close(done);
    });
  },
  'ERR_SERVER_NOT_RUNNING from close()': (impl, log, done) => {
    impl.createServer().close((err) => {
      log.push(describe(err));
      done();
    });
  },
};

for (const [name, misuse] of Object.entries(serverCases)) {
  test(name, { timeout: 20000 }, async () => check(await onServer(misuse)));
}

test('ERR_HTTP_REQUEST_TIMEOUT in \'clientError\'', { timeout: 20000 }, async () => {
  const net = require('node:net');
  check(await both((impl, log, done) => {
    const server = impl.createServer({ requestTimeout: 300, connectionsCheckingInterval: 50 });
    server.on('clientError', (err, socket) => {
      log.push(describe(err));
      socket.destroy();
    });
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1');
      client.on('error', () => {});
      client.write('GET / HTTP/1.1\r\nHost: x\r\n');
      client.on('close', () => server.close(done));
    });
  }));
});
