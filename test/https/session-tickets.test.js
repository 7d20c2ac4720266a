'use strict';
// Session tickets as node's (OpenSSL's) server hands them out: how many NewSessionTickets a
// client gets after a full handshake, none after a resumption with a valid ticket (so the
// client's getSession() stays the one it resumed with, node's test-https-agent-session-reuse),
// and fresh ones when the ticket was sealed with keys replaced by setTicketKeys, for TLSv1.2
// and TLSv1.3, on node's https server and fast-http's.
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const tls = require('node:tls');
const { test } = require('node:test');
const { clientOptions, httpsImpls, serverOptions, startServer } = require('./helpers');

const T = { timeout: 60000 };

/**
 * One request over a new TLS connection (with `session` to resume): the sessions the client
 * was given ('session' events), whether it resumed, and its getSession() once the response
 * has ended (every ticket comes before the response).
 */
function exchange(port, maxVersion, session) {
  return new Promise((resolve, reject) => {
    const sessions = [];
    const sock = tls.connect(clientOptions(port, { maxVersion, session }));
    sock.on('session', (s) => sessions.push(s));
    sock.on('error', reject);
    sock.on('secureConnect', () => {
      sock.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });
    sock.resume();
    sock.on('end', () => {
      resolve({ sessions, reused: sock.isSessionReused(), session: sock.getSession() });
    });
  });
}

/** A scenario's facts on one implementation: what the client saw on each connection. */
async function scenario(impl, maxVersion, extra) {
  const srv = await startServer(impl, serverOptions(extra), (req, res) => res.end('ok'));
  try {
    const full = await exchange(srv.port, maxVersion);
    const first = full.sessions.at(-1);
    const resumed = await exchange(srv.port, maxVersion, first);
    const again = await exchange(srv.port, maxVersion, resumed.session);
    srv.server.setTicketKeys(crypto.randomBytes(48));
    const oldKeys = await exchange(srv.port, maxVersion, first);
    const newKeys = await exchange(srv.port, maxVersion, oldKeys.sessions.at(-1));
    const facts = (c, from) => ({
      tickets: c.sessions.length,
      reused: c.reused,
      // A resumption without a new ticket leaves the client with the session it used.
      sameSession: from !== undefined && c.session.equals(from),
    });
    return {
      full: facts(full),
      resumed: facts(resumed, first),
      again: facts(again, resumed.session),
      oldKeys: facts(oldKeys, first),
      newKeys: facts(newKeys, oldKeys.sessions.at(-1)),
    };
  } finally {
    await srv.close();
  }
}

// With an SNICallback the handshake waits for JS after the ClientHello (another path).
const sni = { SNICallback: (servername, cb) => cb(null, null) };

const variants = [];
for (const [what, extra] of [['', {}], [', SNICallback', sni]]) {
  for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) variants.push([maxVersion + what, maxVersion, extra]);
}

for (const [name, maxVersion, extra] of variants) {
  test(`NewSessionTickets per connection: full, resumed, after setTicketKeys (${name})`, T,
    async () => {
      const [node, fast] = httpsImpls();
      const expected = await scenario(node.impl, maxVersion, extra);
      // node's own: tickets after full handshakes only (two in TLSv1.3, one in TLSv1.2).
      assert.equal(expected.full.tickets, maxVersion === 'TLSv1.3' ? 2 : 1);
      assert.equal(expected.resumed.tickets, 0);
      assert.equal(expected.resumed.reused, true);
      assert.deepStrictEqual(await scenario(fast.impl, maxVersion, extra), expected);
    });
}
