'use strict';
// A waiting pipelined response counts its head as node's outputData does without making the
// text (lib/http/response-head.js headLength): the count must be the text's length for every
// combination of the automatic headers.
const { test } = require('node:test');
const assert = require('node:assert');
const { headText, headLength } = require('../lib/http/response-head');
const { flags } = require('../lib/internal/native');

const AUTO = ['R_DATE', 'R_CONN_KEEP_ALIVE', 'R_CONN_CLOSE', 'R_KA_TIMEOUT', 'R_CONTENT_LENGTH',
  'R_CHUNKED'].map((name) => flags[name]);

test('headLength is the length of headText for every automatic header', { timeout: 10000 }, () => {
  const cases = [
    { statusCode: 200, statusMessage: 'OK', lines: 'Content-Type: text/plain\r\n' },
    { statusCode: 404, statusMessage: 'N\u00f6t F\u00f6und', lines: '' },
    { statusCode: 999, statusMessage: '', lines: 'X: \u20ac\r\nY: z\r\n' },
  ];
  let checked = 0;
  for (const c of cases) {
    for (let mask = 0; mask < 1 << AUTO.length; mask++) {
      const headFlags = AUTO.reduce((f, bit, i) => (mask & (1 << i) ? f | bit : f), 0);
      for (const [kat, max, length] of [[5000, 0, 0], [65000, 100, 9], [999, 1, 1234567]]) {
        const res = {
          statusCode: c.statusCode, statusMessage: c.statusMessage, _contentLength: length,
          _keepAliveTimeout: kat, _maxRequestsPerSocket: max,
        };
        const head = { flags: headFlags, lines: c.lines };
        assert.strictEqual(headLength(res, head), headText(res, head).length,
          `${c.statusCode} flags ${headFlags} kat ${kat} max ${max} length ${length}`);
        checked++;
      }
    }
  }
  assert.strictEqual(checked, 3 * 64 * 3);
});
