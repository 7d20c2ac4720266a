'use strict';
// `node -r fast-http/register` when the native addon cannot load: the app must keep running
// on node:http, with exactly one warning line on stderr; FAST_HTTP_REQUIRE_NATIVE=1 makes it
// fail instead. The addon is made unloadable with FAST_HTTP_ADDON_PATH (the path of the
// binary to load), pointed at a missing file and at a corrupt one.
// These test the preload itself: with ECO_FAST_IMPL=node there is no preload to test.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startApp, request, NODE_IMPL } = require('./helpers/three-way');

const skip = NODE_IMPL && 'ECO_FAST_IMPL=node: there is no preload to test';

/** Runs plain-app.js under register with `env`; resolves with what it showed. */
async function runPlainApp(env) {
  const app = await startApp('register', 'plain-app.js', {}, { env });
  let res;
  let close;
  try {
    res = await request(app.port);
    close = await app.close();
  } finally {
    await app.stop();
  }
  return {
    body: res.body,
    isFastHttp: app.isFastHttp,
    info: app.info,
    close,
    stderrLines: app.stderr().split('\n').filter((l) => l.trim() !== ''),
  };
}

describe('register when the addon cannot load', { skip }, () => {
  let dir;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eco-addon-'));
    fs.writeFileSync(path.join(dir, 'corrupt.node'), 'not an ELF file\n');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('with the addon: fast-http serves, nothing on stderr', async () => {
    const r = await runPlainApp({});
    assert.equal(r.body, 'hello');
    assert.equal(r.isFastHttp, true);
    assert.deepEqual(r.stderrLines, []);
  });

  for (const [label, file] of [['a missing addon', 'missing.node'], ['a corrupt addon', 'corrupt.node']]) {
    it(`with ${label}: node:http serves, one warning line`, async () => {
      const r = await runPlainApp({ FAST_HTTP_ADDON_PATH: path.join(dir, file) });
      assert.equal(r.body, 'hello');
      assert.deepEqual(r.info, { httpServerIsNodes: true, servedByNodesServer: true });
      assert.equal(r.isFastHttp, false);
      assert.equal(r.close.calledBack, true);
      assert.equal(r.stderrLines.length, 1, `stderr:\n${r.stderrLines.join('\n')}`);
      assert.match(r.stderrLines[0], /fast-http/);
    });

    it(`with ${label} and FAST_HTTP_REQUIRE_NATIVE=1: the app fails`, async () => {
      const env = { FAST_HTTP_ADDON_PATH: path.join(dir, file), FAST_HTTP_REQUIRE_NATIVE: '1' };
      await assert.rejects(runPlainApp(env), (err) => {
        assert.notEqual(err.exitCode, 0, err.message);
        assert.match(err.stderr, /fast-http/);
        return true;
      });
    });
  }
});
