'use strict';
// What only OpenSSL tells, as node's https server tells it: its session cache ('newSession',
// 'resumeSession': the external session store node documents, shared by cluster workers or
// kept in Redis) and OCSP stapling ('OCSPRequest'). fast-http's TLS (rustls) fired none of
// them, so such a store never resumed a session. While the app listens for one of them, new
// connections are node's TLS's (lib/https/hand-off.js).
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const tls = require('node:tls');
const { test } = require('node:test');
const { certs, sameOnBoth: same } = require('./helpers');

const T = { timeout: 60000 };
const { SSL_OP_NO_TICKET } = crypto.constants;

/** One request over a new TLS connection; what the client saw, and its session. */
function request(port, options) {
  return new Promise((resolve) => {
    const out = { events: [] };
    const socket = tls.connect({
      host: '127.0.0.1', port, ca: certs.ca, servername: 'localhost', ...options,
    }, () => {
      out.events.push(`secureConnect ${socket.getProtocol()} reused=${socket.isSessionReused()}`);
      socket.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    const sessions = [];
    socket.on('session', (s) => sessions.push(s));
    socket.on('OCSPResponse', (r) => out.events.push(`OCSPResponse ${r?.toString()}`));
    let body = '';
    socket.setEncoding('latin1');
    socket.on('data', (d) => { body += d; });
    socket.on('error', (err) => out.events.push(`error ${err.code}`));
    socket.on('close', () => {
      out.events.push(`response ${JSON.stringify(body.slice(body.indexOf('\r\n\r\n') + 4))}`);
      resolve({ out, session: sessions[sessions.length - 1] });
    });
  });
}

/** A server of `impl` with an external session store; `clients` run against its port. */
async function withStore(impl, clients) {
  const seen = [];
  const store = new Map();
  const server = impl.createServer({ ...certs.rsa }, (req, res) => {
    seen.push(`request reused=${req.socket.isSessionReused()}`);
    res.end('ok');
  });
  server.on('newSession', (id, data, cb) => {
    seen.push(`newSession id=${id.length}B data=${Buffer.isBuffer(data)}`);
    store.set(id.toString('hex'), data);
    // The handshake waits for the store: 'secureConnection' comes after the callback.
    setImmediate(() => {
      seen.push('newSession stored');
      cb();
    });
  });
  server.on('resumeSession', (id, cb) => {
    const data = store.get(id.toString('hex'));
    seen.push(`resumeSession known=${data !== undefined}`);
    setImmediate(() => cb(null, data ?? null));
  });
  server.on('secureConnection', (s) => seen.push(`secureConnection reused=${s.isSessionReused()}`));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = await clients(server.address().port);
  await new Promise((resolve) => server.close(resolve));
  return { server: seen, client };
}


test('TLS 1.2 without tickets: newSession stores the session, resumeSession resumes it', T,
  async () => {
    const node = await same((impl) => withStore(impl, async (port) => {
      const options = { maxVersion: 'TLSv1.2', secureOptions: SSL_OP_NO_TICKET };
      const first = await request(port, options);
      const second = await request(port, { ...options, session: first.session });
      return [first.out, second.out];
    }));
    // A judge of something: node resumed from the store.
    assert.ok(node.server.includes('resumeSession known=true'), node.server.join('\n'));
    assert.ok(node.client[1].events[0].endsWith('reused=true'));
  });

test('TLS 1.2 with tickets: no newSession (OpenSSL sends no session id), the ticket resumes', T,
  async () => {
    await same((impl) => withStore(impl, async (port) => {
      const options = { maxVersion: 'TLSv1.2' };
      const first = await request(port, options);
      const second = await request(port, { ...options, session: first.session });
      return [first.out, second.out];
    }));
  });

test('TLS 1.3: newSession for each ticket', T, async () => {
  await same((impl) => withStore(impl, async (port) => {
    const first = await request(port, { minVersion: 'TLSv1.3' });
    const second = await request(port, { minVersion: 'TLSv1.3', session: first.session });
    return [first.out, second.out];
  }));
});

test('a listener added after listen() applies to the next connections', T, async () => {
  await same(async (impl) => {
    const seen = [];
    const server = impl.createServer({ ...certs.rsa }, (req, res) => res.end('ok'));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = server.address().port;
    const options = { maxVersion: 'TLSv1.2', secureOptions: SSL_OP_NO_TICKET };
    await request(port, options);
    const onNew = (id, data, cb) => {
      seen.push('newSession');
      cb();
    };
    server.on('newSession', onNew);
    await request(port, options);
    server.removeListener('newSession', onNew);
    const last = await request(port, options);
    await new Promise((resolve) => server.close(resolve));
    return { seen, last: last.out };
  });
});

test('OCSPRequest: the app staples a response the client receives', T, async () => {
  await same(async (impl) => {
    const seen = [];
    const server = impl.createServer({ ...certs.rsa }, (req, res) => res.end('ok'));
    server.on('OCSPRequest', (cert, issuer, cb) => {
      seen.push(`OCSPRequest cert=${Buffer.isBuffer(cert)} issuer=${issuer === null ? null :
        Buffer.isBuffer(issuer)}`);
      cb(null, Buffer.from('stapled'));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const withOcsp = await request(server.address().port, { requestOCSP: true });
    const without = await request(server.address().port, {});
    await new Promise((resolve) => server.close(resolve));
    return { seen, client: [withOcsp.out, without.out] };
  });
});

// Code that reaches into tls.Server's OpenSSL context (node has no API for ticket key
// callbacks): the context is the hidden node:https server's, whose TLS then serves the new
// connections (Node's test-https-resume-after-renew does this).
test('server._sharedCreds is an OpenSSL context that serves the next connections', T,
  async () => {
    await same(async (impl) => {
      const server = impl.createServer({ ...certs.rsa }, (req, res) => {
        res.end(`reused=${req.socket.isSessionReused()}`);
      });
      const context = server._sharedCreds.context;
      const keys = Buffer.alloc(48, 7);
      context.setTicketKeys(keys);
      const facts = [typeof context.enableTicketKeyCallback, context.getTicketKeys().equals(keys)];
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = server.address().port;
      const first = await request(port, { maxVersion: 'TLSv1.2' });
      const second = await request(port, { maxVersion: 'TLSv1.2', session: first.session });
      await new Promise((resolve) => server.close(resolve));
      return { facts, client: [first.out, second.out] };
    });
  });
