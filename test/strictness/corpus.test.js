'use strict';

// The strictness corpus (corpus.txt) against node:http and fast-http on this Node: each
// raw request, followed by `GET /follow-up` in the same write and in a later write, must
// get the same answers (status lines, Connection headers), the handler must see the same
// requests (method, url, version, raw headers, body, raw trailers, ended or aborted), and
// the same 'clientError' codes and reasons must be emitted. Cases where node emits a
// 'clientError' run once more with a 'clientError' listener (which changes what node
// writes). fast-http may be stricter than node only for the cases marked `stricter:` (the
// reason is in the file); `todo:` cases need a fix outside the parser.

const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const { load } = require('./corpus');
const { Servers, runCase, fast, nodeHttp } = require('./harness');

const cases = load();
const servers = { node: new Servers(nodeHttp), fast: null };

after(async () => {
  await servers.node.close();
  if (servers.fast) await servers.fast.close();
});

function fastServers() {
  if (!servers.fast) servers.fast = new Servers(fast());
  return servers.fast;
}

/** fast-http refused where node accepted, without serving anything node did not serve. */
function isStricter(node, mine) {
  return mine.clientErrors.length > 0 && mine.requests.length <= node.requests.length &&
    mine.requests.every((r, i) => r.url === node.requests[i].url);
}

async function compareMode(t, c, mode) {
  const node = await runCase(servers.node, c, mode);
  const mine = await runCase(fastServers(), c, mode);
  assert.equal(node.timedOut, false, `node:http timed out (${mode}): the case is broken`);
  try {
    assert.deepStrictEqual(mine, node, `${mode}: fast-http differs from node:http`);
  } catch (err) {
    if (!c.stricter || !isStricter(node, mine)) throw err;
    t.diagnostic(`${mode}: stricter than node (${c.stricter}): ` +
                 `node ${JSON.stringify(node.clientErrors)} / fast-http ` +
                 `${JSON.stringify(mine.clientErrors)}`);
  }
  return node;
}

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

for (const c of cases) {
  const options = c.todo ? { todo: c.todo } : {};
  // Stock node:http cannot be the judge where it never answers (the case says why).
  if (c.nodeHangs?.majors.includes(NODE_MAJOR)) options.skip = `node:http hangs: ${c.nodeHangs.reason}`;
  test(`strictness: ${c.name}`, options, async (t) => {
    const node = await compareMode(t, c, 'same-write');
    await compareMode(t, c, 'later-write');
    if (node.clientErrors.length > 0 && !c.listen.includes('clientError')) {
      await compareMode(t, { ...c, listen: [...c.listen, 'clientError'] }, 'same-write');
    }
  });
}

test('strictness: the corpus is large enough and well formed', () => {
  assert.ok(cases.length >= 150, `${cases.length} cases`);
  for (const c of cases) {
    assert.ok(!(c.stricter && c.todo), `${c.name}: stricter and todo`);
  }
});
