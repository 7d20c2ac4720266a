'use strict';
// The alert a client sends when it gives up on the handshake (an unknown CA, a certificate it
// does not like: the commonest TLS error a server sees) is what node's 'tlsClientError' says,
// OpenSSL's reason and code for that alert, and node's server sends nothing back. fast-http
// said ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR for every alert and answered with an
// unexpected_message alert of its own.
const assert = require('node:assert/strict');
const net = require('node:net');
const { test } = require('node:test');
const nodeHttps = require('node:https');
const { captureClientHello, certs, fastHttps } = require('./helpers');

const T = { timeout: 30000 };

/** Alert records in what the server sent (level, description). */
function alertsIn(bytes) {
  const alerts = [];
  for (let i = 0; i + 5 <= bytes.length;) {
    const len = bytes.readUInt16BE(i + 3);
    if (bytes[i] === 21 && len === 2) alerts.push([bytes[i + 5], bytes[i + 6]]);
    i += 5 + len;
  }
  return alerts;
}

/** The ClientHello, then (once the server answered it) a fatal alert `n` in the clear. */
async function sendAlert(impl, hello, n) {
  const server = impl.createServer({ ...certs.rsa }, (req, res) => res.end());
  const seen = [];
  server.on('tlsClientError', (err) => {
    seen.push({
      code: err.code,
      library: err.library,
      reason: err.reason,
      number: /error:([0-9A-F]{8}):/.exec(err.message)?.[1] ?? err.message,
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const received = await new Promise((resolve) => {
    const got = [];
    const c = net.connect(server.address().port, '127.0.0.1', () => c.write(hello));
    c.once('data', (d) => {
      got.push(d);
      // An alert OpenSSL ignores here (close_notify, TLS 1.3's user_cancelled, an unknown
      // one) leaves the handshake waiting: the FIN after it ends it ('socket hang up').
      c.end(Buffer.from([21, 3, 3, 0, 2, 2, n]));
      c.on('data', (more) => got.push(more));
    });
    c.on('error', () => {});
    c.on('close', () => resolve(Buffer.concat(got)));
  });
  await new Promise((resolve) => server.close(resolve));
  return { tlsClientError: seen, alertsBack: alertsIn(received) };
}

for (const maxVersion of ['TLSv1.3', 'TLSv1.2']) {
  // unknown_ca, bad_certificate, certificate_unknown, handshake_failure, internal_error,
  // certificate_required, close_notify, user_cancelled, a number with no meaning.
  for (const n of [48, 42, 46, 40, 80, 116, 0, 90, 255]) {
    test(`a client's alert ${n} over ${maxVersion}: node's tlsClientError, nothing back`, T,
      async () => {
        const hello = await captureClientHello({ maxVersion });
        const node = await sendAlert(nodeHttps, hello, n);
        assert.equal(node.tlsClientError.length, 1);
        assert.deepEqual(await sendAlert(fastHttps(), hello, n), node);
      });
  }
}

// openssl s_client that does not trust the server's CA (curl and browsers do the same): it
// sends unknown_ca in the handshake.
const { spawn, spawnSync } = require('node:child_process');
const haveOpenssl = !spawnSync('openssl', ['version']).error;

for (const version of ['-tls1_2', '-tls1_3']) {
  test(`s_client ${version} that does not trust the certificate: node's tlsClientError`,
    { ...T, skip: !haveOpenssl && 'no openssl CLI' }, async () => {
      const seen = async (impl) => {
        const server = impl.createServer({ ...certs.rsa }, (req, res) => res.end());
        const code = new Promise((resolve) => server.once('tlsClientError', (e) => resolve(e.code)));
        await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
        const client = spawn('openssl', ['s_client', '-connect',
          `127.0.0.1:${server.address().port}`, '-servername', 'localhost', '-verify_return_error',
          version], { stdio: ['pipe', 'ignore', 'ignore'] });
        client.stdin.end();
        const got = await code;
        await new Promise((resolve) => client.once('exit', resolve));
        await new Promise((resolve) => server.close(resolve));
        return got;
      };
      const node = await seen(nodeHttps);
      assert.equal(node, 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA');
      assert.equal(await seen(fastHttps()), node);
    });
}
