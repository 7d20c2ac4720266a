'use strict';
// OpenSSL's errors as node's https server reports them: a record that does not open after the
// handshake is the TLSSocket's error (then 'clientError'), with library, reason and code (TLS
// 1.2's AES-GCM failure comes from OpenSSL 3's provider); a handshake that fails is
// 'tlsClientError' with the same fields. fast-http gave a bare 'read EPROTO' for the first and
// only `code` for the second. The messages differ by design (OpenSSL's adds a thread id,
// function and source line): the packed error number in them is compared.
const assert = require('node:assert/strict');
const net = require('node:net');
const tls = require('node:tls');
const { test } = require('node:test');
const nodeHttps = require('node:https');
const { certs, fastHttps } = require('./helpers');

const T = { timeout: 30000 };

function describe(err) {
  return {
    keys: Object.keys(err).join(','),
    code: err.code,
    library: err.library,
    reason: err.reason,
    number: /error:([0-9A-F]{8}):/.exec(err.message)?.[1] ?? err.message,
  };
}

/** What `impl`'s server shows for one connection that `act(port)` makes and ends. */
async function serverSide(impl, act, { clientError = true } = {}) {
  const server = impl.createServer({ ...certs.rsa }, (req, res) => res.end());
  const events = [];
  let closed;
  const gone = new Promise((resolve) => { closed = resolve; });
  // node's 'connection' socket is the raw one under the TLSSocket; the close an app sees on
  // req.socket is the TLSSocket's (fast-http has one object for both).
  server.on('connection', (socket) => socket.on('close', closed));
  server.on('secureConnection', (socket) => {
    events.push('secureConnection');
    socket.on('close', (hadError) => events.push({ close: hadError }));
  });
  server.on('tlsClientError', (err) => events.push({ tlsClientError: describe(err) }));
  if (clientError) {
    server.on('clientError', (err, socket) => {
      events.push({ clientError: describe(err) });
      socket.destroy();
    });
  }
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await act(server.address().port);
  await gone;
  await new Promise((resolve) => server.close(resolve));
  return events;
}

/**
 * A real handshake, then `record` written under the TLS layer, on the raw socket (with
 * `afterResponse`, once a first request has its response).
 */
function badRecordAfterHandshake(maxVersion, record, { afterResponse = false } = {}) {
  return (port) => new Promise((resolve) => {
    const raw = net.connect(port, '127.0.0.1');
    const c = tls.connect({ socket: raw, rejectUnauthorized: false, maxVersion }, () => {
      if (afterResponse) c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      else raw.write(record);
    });
    if (afterResponse) c.once('data', () => raw.write(record));
    c.on('error', () => {});
    raw.on('error', () => {});
    raw.on('close', resolve);
  });
}

// An application-data record of 60 bytes nobody can open.
const GARBAGE_RECORD = Buffer.concat([Buffer.from([23, 3, 3, 0, 60]), Buffer.alloc(60, 7)]);

for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) {
  test(`a record that does not open after a ${maxVersion} handshake: OpenSSL's error`, T,
    async () => {
      const act = badRecordAfterHandshake(maxVersion, GARBAGE_RECORD);
      const node = await serverSide(nodeHttps, act);
      assert.ok(node.some((e) => e.clientError), JSON.stringify(node));
      assert.deepEqual(await serverSide(fastHttps(), act), node);
    });
}

/** A record of `type`, record version `version` and a body of `len` bytes. */
function record(type, version, len) {
  return Buffer.concat([Buffer.from([type, 3, version, len >> 8, len & 255]), Buffer.alloc(len, 7)]);
}

// Records OpenSSL's record layer refuses for their header, before decrypting: TLS 1.3's
// types other than application_data (bad record type), another record version (wrong version
// number), a TLS 1.2 GCM record shorter than its nonce and tag (OpenSSL 3.0's provider says
// invalid aad, 3.5's record layer decryption failed). rustls called each a record that does
// not decrypt. The record comes after a first response, in a read of its own (one in the read
// that brings the client's Finished is still named as one that does not decrypt).
for (const [maxVersion, name, bytes] of [
  ['TLSv1.3', 'a handshake record in the clear', record(22, 3, 4)],
  ['TLSv1.3', 'a change_cipher_spec', record(20, 3, 1)],
  ['TLSv1.3', 'an unknown record type', record(99, 3, 1)],
  ['TLSv1.3', 'an alert in the clear', record(21, 3, 2)],
  ['TLSv1.3', 'another record version', record(23, 1, 30)],
  ['TLSv1.3', 'a record of 16 bytes', record(23, 3, 16)],
  ['TLSv1.2', 'another record version', record(23, 1, 30)],
  ['TLSv1.2', 'a record of 23 bytes', record(23, 3, 23)],
  ['TLSv1.2', 'an empty record', record(23, 3, 0)],
  ['TLSv1.2', 'a change_cipher_spec', record(20, 3, 1)],
  ['TLSv1.2', 'an unknown record type', record(99, 3, 1)],
  ['TLSv1.2', 'an unknown record type of 30 bytes', record(99, 3, 30)],
  ['TLSv1.2', 'a record of 24 bytes', record(23, 3, 24)],
]) {
  test(`${maxVersion}, ${name} after a response: OpenSSL's error`, T, async () => {
    const act = badRecordAfterHandshake(maxVersion, bytes, { afterResponse: true });
    const node = await serverSide(nodeHttps, act);
    assert.ok(node.some((e) => e.clientError), JSON.stringify(node));
    assert.deepEqual(await serverSide(fastHttps(), act), node);
  });
}

test('a record that does not open, no clientError listener: the socket closes with it', T,
  async () => {
    const act = badRecordAfterHandshake('TLSv1.2', GARBAGE_RECORD);
    const node = await serverSide(nodeHttps, act, { clientError: false });
    assert.deepEqual(node.slice(0, 1), ['secureConnection']);
    assert.deepEqual(await serverSide(fastHttps(), act, { clientError: false }), node);
  });

test('a handshake that fails: tlsClientError with library, reason and code', T, async () => {
  const act = (port) => new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1', () => c.write(Buffer.from([0x16, 0x07, 0x07, 0, 1, 0])));
    c.on('error', () => {});
    c.on('close', resolve);
    c.resume();
  });
  const node = await serverSide(nodeHttps, act);
  assert.ok(node.some((e) => e.tlsClientError?.library), JSON.stringify(node));
  assert.deepEqual(await serverSide(fastHttps(), act), node);
});
