//! A connection's input, through its HTTP/1 state machine, to the sink. The readiness driver
//! (or any other) calls the entry points: bytes arrived (`input`), the end of the input
//! (`input_ended`), and `before_read` between reads. What they parse becomes a batch of
//! events (`super::events`), handed over at each boundary node's parser has (after a body
//! piece), before a request whose answer the next bytes wait for (an upgrade), and at the
//! group's end.

use super::delivery::Group;
use super::events::Event;
use super::server::{
    S_HALF_OPEN, S_HAS_CONNECT, S_HAS_UPGRADE, S_UPGRADE_BODY, S_UPGRADE_CALLBACK,
};
use super::sink::Sink;
use super::state::*;
use crate::conn::{Action, Eof, Limits, F_ASK_UPGRADE};
use crate::proto::errors::{self, ParseError};
use crate::proto::parse;

/// A boundary: ends the group's calls so far (JS runs its tick queue, then its ticks and
/// promise jobs). Returns true when the connection's parser failed meanwhile: a handler
/// threw (JS said so), or the ticks after a body piece (`body_at`: its end in the bytes
/// being parsed) did: node's parser stopped there, and the rest of the read is dropped.
fn boundary<S: Sink>(g: &mut Group<S>, id: u64, body_at: Option<u32>) -> bool {
    let threw = g.end_calls();
    if let (Some(at), true) = (body_at, threw) {
        // The body's 'data' listeners run in those ticks (a body that came with its head
        // too): node's on_body callback failed, unless a handler's throw failed the parser
        // first.
        if !failed(id) {
            with(|r| r.handler_threw(id, at, true));
        }
    }
    failed(id)
}

/// Hands over what the group holds, as before a request whose answer the connection's next
/// bytes wait for (an upgrade); returns true when the parser failed meanwhile. Events JS
/// queued run first (a boundary), as node's parser calls come before the ticks they queue.
fn deliver_now<S: Sink>(g: &mut Group<S>, id: u64) -> bool {
    g.deliver();
    if g.waiting() {
        return boundary(g, id, None);
    }
    failed(id)
}

fn failed(id: u64) -> bool {
    with(|r| r.conn(id).map(|c| c.http.is_failed()))
        .flatten()
        .unwrap_or(false)
}

/// Between two reads of one group: what JS queued runs first, as node runs one read's
/// handlers before it reads again (the responses they write can throttle the parser, and
/// what JS holds at once is one read's requests). A parser that failed meanwhile fails the
/// next read itself.
pub(super) fn before_read<S: Sink>(g: &mut Group<S>, id: u64) {
    deliver_now(g, id);
}

/// Bytes arrived for connection `id` (plaintext): parsed at once, or after what its buffer
/// keeps (a partial message, injected bytes, input that waited while output was
/// throttled); what is not used yet stays buffered.
pub(super) fn input<S: Sink>(g: &mut Group<S>, id: u64, bytes: &[u8]) {
    let buffered = with(|r| {
        r.touch(id);
        r.conn(id).map(|c| !c.http.rbuf.is_empty())
    })
    .flatten();
    let Some(buffered) = buffered else { return };
    let tapping = is_tapping(id);
    if buffered {
        with(|r| r.conn(id).map(|c| c.http.rbuf.extend_from_slice(bytes)));
        input_buffered(g, id);
    } else {
        let used = process::<S>(id, bytes, g);
        with(|r| {
            if let Some(c) = r.conn(id) {
                if used < bytes.len() {
                    c.http.rbuf.extend_from_slice(&bytes[used..]);
                    c.http.compact_input();
                }
            }
        });
    }
    if tapping {
        let chunk = g.batch.span(bytes);
        g.batch.push(Event::Data { id, chunk });
    }
}

fn is_tapping(id: u64) -> bool {
    with(|r| r.conn(id).map(|c| c.has(C_TAP) && !c.http.is_upgraded()))
        .flatten()
        .unwrap_or(false)
}

/// Parses input kept in the connection's buffer (a partial message, injected bytes, or
/// input that waited while output was throttled).
pub(super) fn input_buffered<S: Sink>(g: &mut Group<S>, id: u64) {
    let Some(input) = with(|r| r.conn(id).map(|c| std::mem::take(&mut c.http.rbuf))).flatten()
    else {
        return;
    };
    let used = process::<S>(id, &input, g);
    with(|r| {
        if let Some(c) = r.conn(id) {
            let mut rest = input;
            let _ = rest.split_to(used.min(rest.len()));
            if !c.http.rbuf.is_empty() {
                rest.extend_from_slice(&c.http.rbuf);
            }
            c.http.rbuf = if rest.is_empty() {
                bytes::BytesMut::new()
            } else {
                rest
            };
            c.http.compact_input();
        }
    });
}

/// One step of the state machine over `buf`, with the server's limits.
fn next_action(r: &mut Reactor, id: u64, buf: &[u8]) -> Option<(u32, Action)> {
    let now = r.now;
    let sid = r.conns.get(id)?.server;
    let s = r.servers.get(sid as usize)?.as_ref()?;
    let mut parse = parse::Limits::new(s.cfg.max_header_size, s.leniency());
    parse.max_header_fields = if s.cfg.max_headers > 0 {
        s.cfg.max_headers
    } else {
        usize::MAX
    };
    let lim = Limits {
        methods: &r.methods,
        parse,
        upgrade: s.has(S_HAS_UPGRADE),
        connect: s.has(S_HAS_CONNECT),
        ask_upgrade: s.has(S_UPGRADE_CALLBACK),
        upgrade_body: s.has(S_UPGRADE_BODY),
    };
    let server_timeout = s.cfg.timeout;
    let c = r.conns.get_mut(id)?;
    let action = c.http.next(buf, &lim, now);
    if let Action::Dispatch(_, d) = &action {
        if d.after_idle {
            // A new request: the keep-alive timer gives way to server.timeout again.
            r.set_timeout(id, server_timeout);
        }
        r.stats.requests_dispatched += 1;
    }
    Some((sid, action))
}

/// Parses and dispatches what `input` holds. Returns how many bytes were used; the rest
/// stays buffered (a partial message, or output is throttled).
fn process<S: Sink>(id: u64, input: &[u8], g: &mut Group<S>) -> usize {
    let mut off = 0;
    loop {
        let rest = &input[off..];
        let Some((sid, action)) = with(|r| next_action(r, id, rest)).flatten() else {
            return off;
        };
        match action {
            Action::Stop => return off,
            Action::Consume(n) => off += n,
            Action::CloseNow => {
                with(|r| r.close_conn(id, 0));
                return input.len();
            }
            Action::Error(e) => {
                client_error(g, sid, id, e, Some(rest));
                return input.len();
            }
            Action::Raw(n) => {
                off += n;
                let chunk = g.batch.span(&rest[..n]);
                g.batch.push(Event::Data { id, chunk });
            }
            Action::Body(n, seq, (a, b)) => {
                off += n;
                let discard = with(|r| r.conn(id).map(|c| c.has(C_DISCARD_BODY)));
                if discard != Some(Some(true)) {
                    let chunk = g.batch.span(&rest[a..b]);
                    let at = off as u32;
                    g.batch.push(Event::Body { id, seq, chunk, at });
                    // node runs its ticks after each on_body callback.
                    if boundary(g, id, Some(at)) {
                        return input.len();
                    }
                }
            }
            Action::BodyEnd(n, seq, t) => {
                off += n;
                with(|r| r.conn(id).map(|c| c.flags &= !C_DISCARD_BODY));
                let trailers = t.as_deref().map(|t| g.batch.span(t));
                g.batch.push(Event::BodyEnd { id, seq, trailers });
            }
            Action::Upgrade(n, seq, body_done) => {
                off += n;
                let head = body_done.then(|| g.batch.span(&rest[..n]));
                g.batch.push(Event::Upgrade { id, seq, head });
            }
            Action::Dispatch(n, d) => {
                // A request JS answers at once (an upgrade: the connection's next bytes wait
                // for its answer) comes after what JS holds so far.
                let answer_now = d.flags & (parse::F_UPGRADE | F_ASK_UPGRADE) != 0;
                if answer_now && deliver_now(g, id) {
                    return input.len();
                }
                off += n;
                #[cfg(feature = "test-hooks")]
                super::test_hooks::maybe_panic(&rest[d.url.0..d.url.1]);
                // A body that came whole with the head is llhttp's on_body, then its
                // on_message_complete: JS runs its ticks between the two.
                let inline = d.flags & parse::F_UPGRADE == 0 && d.body.is_some_and(|(a, b)| b > a);
                let head_end = off - n + d.body.map_or(n, |(a, _)| a);
                let flags = if inline {
                    d.flags & !parse::F_BODY_DONE
                } else {
                    d.flags
                };
                let request = Event::Request {
                    sid,
                    id,
                    seq: d.seq,
                    method: d.method,
                    url: g.batch.span(&rest[d.url.0..d.url.1]),
                    headers: g.batch.span(&rest[d.headers.0..d.headers.1]),
                    flags,
                    body: d.body.map(|(a, b)| g.batch.span(&rest[a..b])),
                    head_end: head_end as u32,
                };
                g.batch.push(request);
                // A throwing handler (JS says so: node's on_headers_complete failed) stops
                // the parser there; the rest of the read is dropped.
                if answer_now && deliver_now(g, id) {
                    return input.len();
                }
                if d.flags & parse::F_INVALID_TE != 0 {
                    // llhttp emits the request, then rejects a non-chunked request coding.
                    with(|r| r.conn(id).map(|c| c.http.fail(errors::INVALID_TE)));
                    client_error(g, sid, id, errors::INVALID_TE, Some(rest));
                    return input.len();
                }
                with(|r| r.conn(id).map(|c| c.http.dispatched()));
                if inline {
                    if boundary(g, id, Some(off as u32)) {
                        return input.len();
                    }
                    g.batch.push(Event::BodyEnd {
                        id,
                        seq: d.seq,
                        trailers: None,
                    });
                }
            }
        }
    }
}

/// A parse error (the state machine is already `Failed`). JS decides, as node:http's
/// socketOnError does ('clientError' when anyone listens, else node's default answer),
/// since the server's 'clientError' emit is observable. Without `packet` it is the end of
/// the input that failed (node's parser.finish() in socketOnEnd: JS ends the socket first).
fn client_error<S: Sink>(
    g: &mut Group<S>,
    sid: u32,
    id: u64,
    e: ParseError,
    packet: Option<&[u8]>,
) {
    // node reports a header overflow at the end of the chunk it was parsing.
    let at = if e.code == "HPE_HEADER_OVERFLOW" {
        packet.map_or(0, |p| p.len()) as u32
    } else {
        e.at as u32
    };
    let packet = packet.map(|p| g.batch.span(p));
    g.batch.push(Event::ClientError {
        sid,
        id,
        code: e.code,
        reason: e.reason,
        packet,
        at,
    });
}

/// The end of connection `id`'s input (the peer's FIN, or its TLS close_notify).
pub(super) fn input_ended<S: Sink>(g: &mut Group<S>, id: u64) {
    let state = with(|r| {
        let c = r.conn(id)?;
        let sid = c.server;
        let tell_js = c.has(C_JS_WATCH) || c.http.eof_is_js();
        let half_open = r.server(sid).map(|s| s.has(S_HALF_OPEN)) == Some(true);
        let c = r.conn(id)?;
        let eof = c.http.eof(half_open);
        if eof == Eof::MidMessage {
            c.http.fail(errors::INVALID_EOF_STATE);
        }
        r.update_conn_ref(id);
        // A message cut short: JS emits 'end' itself, before the error (client_error).
        if tell_js && eof != Eof::MidMessage {
            r.defer(Deferred::End(id));
        }
        if eof == Eof::End {
            r.after_write(id);
        }
        Some((sid, eof))
    })
    .flatten();
    if let Some((sid, Eof::MidMessage)) = state {
        client_error(g, sid, id, errors::INVALID_EOF_STATE, None);
    }
}
