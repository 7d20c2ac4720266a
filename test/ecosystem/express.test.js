'use strict';
// Express and its middleware ecosystem on node:http vs fast-http (createServer and
// -r register): what the client and the app observe must be the same.
const assert = require('node:assert/strict');
const { threeWay, request, maskResponse } = require('./helpers/three-way');

/** The cookie pair a Set-Cookie header sets (what a browser sends back). */
function cookiesOf(res) {
  const out = [];
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    if (res.rawHeaders[i].toLowerCase() === 'set-cookie') out.push(res.rawHeaders[i + 1].split(';')[0]);
  }
  return out.join('; ');
}

const HOOK_MASKS = {
  'x-response-time': (v) => (/^\d+\.\d{3}ms$/.test(v) ? '<ms>' : v),
  'set-cookie': (v) => v.replace(/^sid=s%3A[^;]+/, 'sid=s%3A<session id>'),
};

threeWay('express-session, cookie-session, morgan, response-time (on-headers hooks)', {
  fixture: 'express-hooks.js',
  async exercise(app) {
    const seen = [];
    const get = async (path, headers = {}) => {
      const res = await request(app.port, { path, headers });
      seen.push({ path, ...maskResponse(res, HOOK_MASKS) });
      return res;
    };
    for (const prefix of ['/es', '/cs']) {
      const login = await get(`${prefix}/login`);
      await get(`${prefix}/whoami`, { cookie: cookiesOf(login) });
      await get(`${prefix}/whoami`);
    }
    for (const path of ['/end-string', '/end-buffer', '/end-empty', '/write-head', '/stream', '/json-404']) {
      await get(path);
    }
    return seen;
  },
  normalize(result) {
    return {
      ...result,
      app: result.app.map(([name, line]) => [name, line.replace(/sid=s%3A[^;]+/, 'sid=s%3A<session id>')]),
    };
  },
  check({ client, app }) {
    const byPath = (p) => client.filter((r) => r.path === p);
    assert.match(cookiesOf(byPath('/es/login')[0]), /^sid=s%3A<session id>$/);
    assert.match(cookiesOf(byPath('/cs/login')[0]), /^cs=.*; cs\.sig=/);
    assert.equal(JSON.parse(byPath('/es/whoami')[0].body).user, 'ann');
    assert.equal(JSON.parse(byPath('/cs/whoami')[0].body).user, 'bob');
    for (const r of client) assert.ok(r.rawHeaders.includes('X-Response-Time'), r.path);
    assert.equal(app.length, client.length);
    for (const [, line] of app) assert.match(line, /head-hook-ran\n$/);
  },
});

// ---------------------------------------------------------------------------
// compression

const zlib = require('node:zlib');
const {
  rawExchange, write, splitResponse, maskHeadLines, digest, tick, until,
} = require('./helpers/three-way');

function decode(res) {
  const i = res.rawHeaders.findIndex((h, n) => n % 2 === 0 && /^content-encoding$/i.test(h));
  const enc = i === -1 ? 'identity' : res.rawHeaders[i + 1];
  if (enc === 'gzip') return zlib.gunzipSync(res.body);
  if (enc === 'deflate') return zlib.inflateSync(res.body);
  if (enc === 'br') return zlib.brotliDecompressSync(res.body);
  return res.body;
}

threeWay('compression: small and large bodies, sent at once and streamed', {
  fixture: 'compression.js',
  async exercise(app) {
    const seen = [];
    for (const path of ['/small', '/large', '/large-end', '/stream', '/json']) {
      for (const enc of ['gzip', 'deflate, br;q=0', undefined]) {
        const headers = enc ? { 'accept-encoding': enc } : {};
        const res = await request(app.port, { path, headers, bodyAs: 'buffer' });
        // Compressed bytes compare exactly (the same zlib); decoded, they are the text.
        if (res.body) res.decoded = digest(decode(res));
        if (res.body) res.body = digest(res.body);
        seen.push({ label: `${path} ${enc}`, ...maskResponse(res) });
      }
    }
    return seen;
  },
  check({ client }) {
    const get = (label) => client.find((r) => r.label === label);
    assert.ok(!get('/small gzip').rawHeaders.includes('Content-Encoding'));
    for (const p of ['/large', '/large-end', '/stream', '/json']) {
      assert.equal(get(`${p} gzip`).rawHeaders[get(`${p} gzip`).rawHeaders.indexOf('Content-Encoding') + 1], 'gzip', p);
      assert.ok(!get(`${p} undefined`).rawHeaders.includes('Content-Encoding'), p);
      assert.equal(get(`${p} gzip`).decoded, get(`${p} undefined`).decoded, p);
    }
  },
});

// ---------------------------------------------------------------------------
// body-parser

/** A JSON body of exactly `n` bytes. */
function jsonOf(n) {
  return JSON.stringify({ a: 'x'.repeat(n - 8) });
}

function bytes(n, seed = 1) {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

function pieces(buf, count) {
  const size = Math.ceil(buf.length / count);
  const out = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}


/**
 * A POST over a raw socket to a handler that pauses the request: the head, the body but its
 * last piece in separate writes, then (once the paused request holds all it will read before
 * pausing its socket) the last piece, then the app's 'release'. Resolves with the masked
 * response (the server closes: Connection: close).
 */
async function pausedPost(app, path, body, { count = 5 } = {}) {
  const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n` +
    `Connection: close\r\nContent-Length: ${body.length}\r\n\r\n`;
  const parts = pieces(body, count);
  const r = await rawExchange(app.port, async (socket) => {
    await write(socket, head);
    await app.waitFor('paused');
    let written = 0;
    for (const p of parts.slice(0, -1)) {
      await write(socket, p);
      written += p.length;
      await tick();
    }
    await until(async () => {
      const b = await app.call('buffered');
      return b.length >= b.hwm || b.length === written;
    });
    await write(socket, parts.at(-1));
    await app.call('release');
  });
  const { head: lines, body: resBody } = splitResponse(r.bytes);
  return { label: path, ended: r.ended, head: maskHeadLines(lines), body: resBody.toString('latin1') };
}

threeWay('body-parser: json / urlencoded / raw at and over their limits; a paused raw body', {
  fixture: 'body-parser.js',
  async exercise(app) {
    const { LIMIT, RAW_LIMIT } = app.info;
    const seen = [];
    const post = async (label, path, type, body) => {
      const res = await request(app.port, { method: 'POST', path, body, headers: { 'content-type': type } });
      seen.push({ label, ...maskResponse(res) });
    };
    await post('json at limit', '/json', 'application/json', jsonOf(LIMIT));
    await post('json over limit', '/json', 'application/json', jsonOf(LIMIT + 1));
    await post('form at limit', '/form', 'application/x-www-form-urlencoded', `a=${'y'.repeat(LIMIT - 2)}`);
    await post('form over limit', '/form', 'application/x-www-form-urlencoded', `a=${'y'.repeat(LIMIT - 1)}`);
    await post('raw at limit', '/raw', 'application/octet-stream', bytes(RAW_LIMIT));
    await post('raw over limit', '/raw', 'application/octet-stream', bytes(RAW_LIMIT + 1));
    await post('raw chunked over limit', '/raw', 'application/octet-stream', pieces(bytes(RAW_LIMIT + 100), 6));
    seen.push(await pausedPost(app, '/raw-paused', bytes(RAW_LIMIT, 7)));
    return seen;
  },
  check({ client, app }) {
    const status = (label) => client.find((r) => r.label === label).status;
    assert.equal(status('json at limit'), 200);
    assert.equal(status('json over limit'), 413);
    assert.equal(status('form at limit'), 200);
    assert.equal(status('form over limit'), 413);
    assert.equal(status('raw at limit'), 200);
    assert.equal(status('raw over limit'), 413);
    assert.equal(status('raw chunked over limit'), 413);
    const paused = client.at(-1);
    assert.match(paused.head[0], /^HTTP\/1.1 200 OK$/);
    assert.equal(JSON.parse(paused.body).bytes, 40 * 1024);
    assert.deepEqual(app.slice(-2), [['paused', '/raw-paused'], ['resumed', '/raw-paused']]);
  },
});

// ---------------------------------------------------------------------------
// multipart

const BOUNDARY = '----eco-boundary-7MA4YWxkTrZu0gW';

function multipart(parts) {
  const chunks = [];
  for (const p of parts) {
    let head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename) head += `; filename="${p.filename}"\r\nContent-Type: ${p.type}`;
    chunks.push(Buffer.from(`${head}\r\n\r\n`), Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

threeWay('multipart uploads: multer (and its file size limit) and busboy', {
  fixture: 'multipart.js',
  async exercise(app) {
    const { FILE_LIMIT } = app.info;
    const form = (file) => multipart([
      { name: 'title', data: 'a title' },
      { name: 'doc', filename: 'doc.bin', type: 'application/octet-stream', data: file },
      { name: 'note', data: 'ünïcode' },
    ]);
    const headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
    const seen = [];
    for (const [label, path, file] of [
      ['multer', '/multer', bytes(FILE_LIMIT - 1000, 3)],
      ['multer over limit', '/multer', bytes(FILE_LIMIT + 1000, 4)],
      ['busboy', '/busboy', bytes(100 * 1024, 5)],
    ]) {
      const body = form(file);
      const res = await request(app.port, {
        method: 'POST', path, headers: { ...headers, 'content-length': body.length }, body: pieces(body, 7),
      });
      seen.push({ label, ...maskResponse(res) });
    }
    return seen;
  },
  check({ client, app }) {
    assert.equal(client[0].status, 200);
    assert.equal(JSON.parse(client[0].body).files[0].size, 64 * 1024 - 1000);
    assert.equal(client[1].status, 413);
    assert.equal(client[2].body, 'ok');
    assert.deepEqual(app.at(-1), ['close', true]);
  },
});
