'use strict';
// Requests of several keep-alive connections that one turn of the loop reads: fast-http hands
// them to JS in one call (src/binding/sink.rs, issue #34 item 1), and node's order must hold
// as when each socket's read is a callback of its own: a handler's ticks and promise jobs run
// before the next connection's handler, each handler in its connection's async context, and
// a connection destroyed by an earlier handler is not read again.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const tls = require('node:tls');
const os = require('node:os');
const path = require('node:path');
const { once } = require('node:events');

const FIXTURE = path.join(__dirname, 'fixtures', 'batch-order.js');

/** A keep-alive connection whose responses (Content-Length bodies) are read in turn. */
async function connect(port, secure) {
  const socket = secure ?
    tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false }) :
    net.connect(port, '127.0.0.1');
  await once(socket, secure ? 'secureConnect' : 'connect');
  let buffered = '';
  const waiting = [];
  const take = () => {
    while (waiting.length > 0) {
      const m = /\r\ncontent-length: (\d+)\r\n(?:.*\r\n)*?\r\n/i.exec(buffered);
      if (m === null) return;
      const end = m.index + m[0].length + Number(m[1]);
      if (buffered.length < end) return;
      const body = buffered.slice(m.index + m[0].length, end);
      buffered = buffered.slice(end);
      waiting.shift().resolve(body);
    }
  };
  socket.setEncoding('latin1');
  socket.on('data', (d) => {
    buffered += d;
    take();
  });
  // A connection the server destroys with its request unread is reset.
  socket.on('error', () => {});
  socket.on('close', () => {
    for (const w of waiting.splice(0)) w.resolve(null);
  });
  return {
    port: socket.localPort,
    /** Sends a GET; resolves when its bytes are in the kernel, with the response's promise. */
    send(url) {
      const answer = new Promise((resolve) => waiting.push({ resolve }));
      return new Promise((resolve) => {
        socket.write(`GET ${url} HTTP/1.1\r\nHost: x\r\n\r\n`, () => resolve({ answer }));
      });
    },
    /** Sends GETs in one write (one read takes them all); resolves as send does, with each answer. */
    sendAll(urls) {
      const answers = urls.map(() => new Promise((resolve) => waiting.push({ resolve })));
      return new Promise((resolve) => {
        socket.write(urls.map((url) => `GET ${url} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''),
          () => resolve(answers));
      });
    },
    async get(url) {
      return (await this.send(url)).answer;
    },
    end: () => socket.destroy(),
  };
}

/**
 * The fixture for `impl` (with `crash`, a throw may end it; with `secure`, over https): three
 * warm keep-alive connections, the third's `/block` holding the loop while `during(a, b, flag)`
 * sends on the other two (one turn then reads both: fast-http, one batch) and resolves with
 * the answers' promises. Resolves with those answers and the log, or with `crash`, what the
 * process printed.
 */
async function runTurn(impl, during, { crash = false, secure = false } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-batch-'));
  const flag = path.join(dir, 'go');
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const args = [FIXTURE, impl, flag, crash ? 'crash' : '', secure ? 'https' : ''];
  const child = spawn(process.execPath, args, {
    env, stdio: ['ignore', 'pipe', crash ? 'pipe' : 'inherit'],
  });
  let stderr = '';
  child.stderr?.setEncoding('latin1').on('data', (d) => { stderr += d; });
  const exited = once(child, 'exit');
  try {
    child.stdout.setEncoding('latin1');
    const lines = [];
    let partial = '';
    let wake = null;
    child.stdout.on('data', (d) => {
      partial += d;
      const parts = partial.split('\n');
      partial = parts.pop();
      lines.push(...parts);
      wake?.();
    });
    const line = async () => {
      while (lines.length === 0) await new Promise((resolve) => { wake = resolve; });
      return lines.shift();
    };
    const port = Number(await line());
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => connect(port, secure)));
    for (const conn of [a, b, c]) assert.equal(await conn.get('/warm'), 'warm');
    const blocked = await c.send('/block');
    assert.equal(await line(), 'blocking');
    const sent = await during(a, b, flag);
    fs.writeFileSync(flag, '');
    assert.equal(await blocked.answer, 'unblocked');
    if (crash) {
      await exited;
      return { stderr };
    }
    const answers = await Promise.all(sent);
    const log = JSON.parse(await c.get('/log'));
    for (const conn of [a, b, c]) conn.end();
    return { log, answers };
  } finally {
    child.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** runTurn with `/a` (and `query` on it) and `/b` sent while the loop is held. */
function run(impl, query, options) {
  return runTurn(impl, async (a, b) => (await Promise.all([
    a.send(`/a${query(b)}`),
    b.send('/b'),
  ])).map((s) => s.answer), options);
}

/**
 * runTurn where connection a sends `/quick` and `/slow?ms=20` in one write, then connection b
 * `/wait`, which spins until this client has seen `/quick`'s answer. Resolves with the three
 * answers.
 */
async function runHeld(impl, secure) {
  const { answers } = await runTurn(impl, async (a, b, flag) => {
    const [quick, slow] = await a.sendAll(['/quick', '/slow?ms=20']);
    const wait = await b.send('/wait');
    quick.then(() => fs.writeFileSync(`${flag}.seen`, ''));
    return [quick, slow, wait.answer];
  }, { secure });
  return answers;
}

for (const secure of [false, true]) {
  test('a response ended early in a long batch reaches the client before the batch\'s later ' +
    `handlers run, as node:http writes it at end()${secure ? ' (https)' : ''}`,
  { timeout: 60_000 }, async () => {
    for (const impl of ['node:http', 'fast-http']) {
      assert.deepEqual(await runHeld(impl, secure), ['quick', 'slow', 'seen'], impl);
    }
  });
}

/** The log as each handler's run: [handler, async id, tick, promise job] per request. */
function runs(log) {
  const out = [];
  for (let i = 0; i < log.length; i += 4) out.push(log.slice(i, i + 4));
  return out;
}

for (const secure of [false, true]) {
  const over = secure ? ' (https)' : '';

  test('two connections read in one turn: each handler\'s ticks and promise jobs before the ' +
    `next handler, in its connection's async context${over}`, { timeout: 60_000 }, async () => {
    for (const impl of ['node:http', 'fast-http']) {
      const { log, answers } = await run(impl, () => '', { secure });
      assert.deepEqual(answers, ['a', 'b'], impl);
      const seen = runs(log).sort((x, y) => x[0].localeCompare(y[0]));
      assert.deepEqual(seen, ['a', 'b'].map((name) => [
        `${name}: handler`,
        `${name}: same async id as its connection's first request: true`,
        `${name}: tick`,
        `${name}: promise job`,
      ]), `${impl}: ${JSON.stringify(log)}`);
    }
  });

  test('a handler that destroys another connection read in the same turn: that ' +
    `connection's request is never emitted on its destroyed socket${over}`,
  { timeout: 60_000 }, async () => {
    for (const impl of ['node:http', 'fast-http']) {
      const { log, answers } = await run(impl, (b) => `?destroy=${b.port}`, { secure });
      assert.equal(answers[0], 'a', impl);
      // node reads the two sockets in the order the kernel reports them: /b first (then it
      // is answered, or destroyed before its answer went), or never.
      assert.ok(!log.some((l) => l.includes('destroyed socket')),
        `${impl}: ${JSON.stringify(log)}`);
      assert.equal(log.filter((l) => l === 'a: handler').length, 1, impl);
    }
  });
}

test('a handler that throws: the next connection read in the same turn is still answered, ' +
  'after the throw went to \'uncaughtException\'', { timeout: 60_000 }, async () => {
  const logs = {};
  for (const impl of ['node:http', 'fast-http']) {
    const { log, answers } = await run(impl, () => '?throw');
    assert.deepEqual(answers, ['a', 'b'], impl);
    logs[impl] = log;
  }
  // What each connection's request logged, in order (node reads the two sockets in the
  // order the kernel reports them).
  const of = (log, name) => log.filter((l) => l.startsWith(`${name}:`));
  for (const name of ['a', 'b']) {
    assert.deepEqual(of(logs['fast-http'], name), of(logs['node:http'], name), name);
  }
});

test('a handler that throws with no \'uncaughtException\' listener: node\'s source excerpt',
  { timeout: 60_000 }, async () => {
    const printed = {};
    for (const impl of ['node:http', 'fast-http']) {
      const { stderr } = await run(impl, () => '?throw', { crash: true });
      printed[impl] = stderr.split('\n').slice(0, 6).join('\n');
    }
    assert.match(printed['node:http'], /throw new Error\(`boom in \$\{name\}`\);\n\s+\^\n/);
    assert.equal(printed['fast-http'], printed['node:http']);
  });
