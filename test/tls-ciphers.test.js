'use strict';
// node's `ciphers` / `ecdhCurve` strings as the native TLS layer's suites and groups, or null
// where the native layer cannot serve exactly what node's OpenSSL would.
const { test } = require('node:test');
const assert = require('node:assert');
const tls = require('node:tls');
const { toSuites, toGroups } = require('../lib/internal/tls-ciphers');

test('explicit suite names map to IANA names, in order', { timeout: 5000 }, () => {
  assert.deepStrictEqual(toSuites('ECDHE-RSA-AES128-GCM-SHA256'),
    ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256']);
  assert.deepStrictEqual(toSuites('TLS_AES_128_GCM_SHA256'), ['TLS_AES_128_GCM_SHA256']);
  assert.deepStrictEqual(
    toSuites('ECDHE-ECDSA-CHACHA20-POLY1305:TLS_CHACHA20_POLY1305_SHA256:' +
      'ECDHE-RSA-AES256-GCM-SHA384::TLS_AES_256_GCM_SHA384'),
    ['TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_256_GCM_SHA384',
      'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384']);
});

test('exclusions: of listed suites remove them, of disjoint aliases nothing', { timeout: 5000 },
  () => {
    assert.deepStrictEqual(
      toSuites('ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:!aNULL:!eNULL:!MD5:' +
        '-ECDHE-RSA-AES128-GCM-SHA256'),
      ['TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384']);
    // '-' lets a later item add it again, '!' does not.
    assert.deepStrictEqual(
      toSuites('ECDHE-RSA-AES128-GCM-SHA256:-ECDHE-RSA-AES128-GCM-SHA256:' +
        'ECDHE-RSA-AES128-GCM-SHA256'),
      ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256']);
    assert.strictEqual(
      toSuites('!ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256'), null);
  });

test('what cannot be served exactly is null', { timeout: 5000 }, () => {
  for (const s of [
    'HIGH:!aNULL', 'DEFAULT', 'ALL', 'AESGCM', 'ECDHE-RSA-AES128-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256:AES128-GCM-SHA256', 'DHE-RSA-AES128-GCM-SHA256',
    'TLS_AES_128_CCM_SHA256', '!TLS_AES_128_GCM_SHA256', 'ECDHE-RSA-AES128-GCM-SHA256:@STRENGTH',
    'ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0', '+ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256,ECDHE-RSA-AES256-GCM-SHA384', '!ECDSA', '', ':', 42,
  ]) {
    assert.strictEqual(toSuites(s), null, String(s));
  }
});

test("node's default list is the native default, in node's order", { timeout: 5000 }, () => {
  const expected = [
    'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256',
    'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
    'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
    'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
    'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  ];
  assert.deepStrictEqual(toSuites(tls.DEFAULT_CIPHERS), expected);
  assert.deepStrictEqual(toSuites(undefined), expected);
});

test('ecdhCurve as groups', { timeout: 5000 }, () => {
  // OpenSSL 3.5's default names the hybrid post-quantum group first; 3.0 has none.
  const [major, minor] = process.versions.openssl.split('.').map(Number);
  const pq = major > 3 || (major === 3 && minor >= 5);
  const auto = pq ? ['X25519MLKEM768', 'X25519', 'P-256', 'P-384'] : [];
  assert.deepStrictEqual(toGroups('auto'), auto);
  assert.deepStrictEqual(toGroups(undefined), auto);
  assert.deepStrictEqual(toGroups('X25519MLKEM768:X25519'), pq ? ['X25519MLKEM768', 'X25519'] : null);
  assert.deepStrictEqual(toGroups('P-384'), ['P-384']);
  assert.deepStrictEqual(toGroups('prime256v1:X25519:secp384r1'), ['P-256', 'X25519', 'P-384']);
  for (const s of ['X448', 'P-521', 'secp521r1', 'X25519:ffdhe2048', '', 'auto:X25519', 7]) {
    assert.strictEqual(toGroups(s), null, String(s));
  }
});
