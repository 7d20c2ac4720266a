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
