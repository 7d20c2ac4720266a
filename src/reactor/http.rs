//! Bytes read from a connection, through its HTTP/1 state machine, to the sink.

use super::io::ReadStep;
use super::secure;
use super::server::{
    S_HALF_OPEN, S_HAS_CONNECT, S_HAS_UPGRADE, S_UPGRADE_BODY, S_UPGRADE_CALLBACK,
};
use super::sink::{ClientError, Request, Sink, F_QUEUED};
use super::state::*;
use crate::conn::{Action, Eof, Limits, F_ASK_UPGRADE};
use crate::proto::errors::{self, ParseError};
use crate::proto::parse;

/// A request callback threw (llhttp's error when on_headers_complete returns -1).
const CB_HEADERS_COMPLETE: ParseError =
    ParseError::new("HPE_CB_HEADERS_COMPLETE", "User callback error");

/// A body callback threw (node sets llhttp's HPE_USER with this code and reason).
const JS_EXCEPTION: ParseError = ParseError::new("HPE_JS_EXCEPTION", "JS Exception");

/// Reads what the socket has (the registration is edge-triggered), parsing as it goes, all
/// inside one sink scope: JS runs its ticks once at the end, as after one node:http read.
///
/// A read shorter than the buffer emptied the receive queue, and data or a FIN arriving
/// after this readiness event was reported raises a new edge, so reading stops there
/// instead of paying a second recv for EAGAIN (one recv per request instead of two). With
/// `drain` (the event already reported the peer's FIN or an error, or nothing says the
/// queue was seen empty: a yielded or resumed read) it reads until the socket would block.
pub fn read_conn<S: Sink>(id: u64, drain: bool) {
    let mut group = Group::<S> {
        scope: S::scope(Some(id)),
        queued: false,
    };
    read_loop::<S>(id, drain, &mut group);
    // Output goes at the batch's end. A process that dies before (a throw, a rejection,
    // process.exit()) sends it from the uncaught-exception path and the exit hook, as
    // node:http has sent it (test/liveness.test.js). Flushing here, before the read's ticks,
    // cost 15-20 % of a request's CPU at 64 connections: the client is woken per response
    // instead of once per batch (A/B medians, json 17.7 vs 14.6 µs/req).
    drop(group);
}

/// A read's sink scope: JS runs its ticks and promise jobs where it ends and at each
/// boundary: after each piece of a body, as node does after llhttp's on_body callbacks (not
/// after a request's head or its end, which run inside the read's scope).
pub struct Group<S: Sink> {
    scope: Option<S::Scope>,
    /// A request dispatched with F_QUEUED waits in JS's tick queue, and so does everything of
    /// its connection JS hears after it (JS keeps the order) until the next boundary.
    queued: bool,
}

impl<S: Sink> Drop for Group<S> {
    fn drop(&mut self) {
        drop(self.scope.take());
    }
}

/// Ends the group's calls so far: JS runs its tick queue, then its ticks and promise jobs.
/// Returns true when a queued handler threw, or the ticks after a body piece (`body_at`: its
/// end in the bytes being parsed) did: node's parser stopped there, and the rest of the read
/// is dropped.
fn boundary<S: Sink>(g: &mut Group<S>, id: u64, body_at: Option<u32>) -> bool {
    let threw = g.scope.as_mut().is_some_and(|s| S::boundary(s));
    let queued = std::mem::take(&mut g.queued);
    let failed = || {
        with(|r| r.conn(id).map(|c| c.http.is_failed()))
            .flatten()
            .unwrap_or(false)
    };
    match body_at {
        Some(at) if threw => {
            // The body's 'data' listeners run in those ticks (a body that came with its head
            // too): node's on_body callback failed, unless a queued handler's throw failed
            // the parser first.
            if !failed() {
                with(|r| r.handler_threw(id, at, true));
            }
            failed()
        }
        _ => queued && failed(),
    }
}

impl Reactor {
    /// A handler JS ran from its tick queue threw (see F_QUEUED): a request's (`body` false)
    /// or a body 'data' listener's, at `at` in the bytes being parsed. node's parser callback
    /// failed, and llhttp fails every later read of the connection with that error.
    pub fn handler_threw(&mut self, id: u64, at: u32, body: bool) {
        let e = if body {
            JS_EXCEPTION
        } else {
            CB_HEADERS_COMPLETE
        };
        if let Some(c) = self.conn(id) {
            c.http.fail(e.at(at as usize));
        }
    }
}

fn read_loop<S: Sink>(id: u64, drain: bool, g: &mut Group<S>) {
    process_buffered::<S>(id, g);
    for _ in 0..READS_PER_EVENT {
        // Queued handlers run before the next read, as node runs one read's before it reads
        // again: the responses they write can throttle the parser, and what JS holds at once
        // is one read's requests.
        if g.queued {
            boundary::<S>(g, id, None);
        }
        let step = with(|r| r.read_once(id)).unwrap_or(ReadStep::Stop);
        let short = match step {
            ReadStep::Scratch(_, n) | ReadStep::Buffered(n) => n < SCRATCH,
            _ => false,
        };
        match step {
            ReadStep::Scratch(buf, n) => {
                with(|r| r.touch(id));
                let tapping = is_tapping(id);
                let used = process::<S>(id, &buf[..n], g);
                if tapping {
                    S::data(id, &buf[..n]);
                }
                with(|r| {
                    if let Some(c) = r.conn(id) {
                        if used < n {
                            c.http.rbuf.extend_from_slice(&buf[used..n]);
                            c.http.compact_input();
                        }
                    }
                    r.give_back_scratch(buf);
                });
            }
            ReadStep::Buffered(n) => {
                with(|r| r.touch(id));
                let tapped = with(|r| {
                    r.conn(id)
                        .filter(|c| c.has(C_TAP) && !c.http.is_upgraded())
                        .map(|c| c.http.rbuf[c.http.rbuf.len() - n..].to_vec())
                })
                .flatten();
                process_buffered::<S>(id, g);
                if let Some(bytes) = tapped {
                    S::data(id, &bytes);
                }
            }
            ReadStep::Again => {}
            ReadStep::Secure => {
                if !secure::on_event::<S>(id) {
                    return;
                }
            }
            ReadStep::Eof => {
                on_eof::<S>(id, g);
                return;
            }
            ReadStep::Error(e) => {
                with(|r| r.close_conn(id, e));
                return;
            }
            ReadStep::Stop => return,
        }
        if short && hup_eof(id) {
            on_eof::<S>(id, g);
            return;
        }
        if short && !drain {
            return;
        }
    }
    // Still readable after READS_PER_EVENT reads: yield to the rest of the event loop
    // (timers, other I/O) and continue on its next turn.
    with(|r| {
        if let Some(c) = r.conn(id) {
            c.flags |= C_READ_PENDING;
        }
        r.yielded.push(id);
        r.handles.start_idle();
    });
}

/// libuv's uv__stream_io: after a short read on a hung-up socket that is still being read,
/// the input has ended (the pending error, a reset, is never read).
fn hup_eof(id: u64) -> bool {
    with(|r| {
        r.conn(id).is_some_and(|c| {
            c.has(C_HUP) && !c.has(C_READ_PAUSED) && !c.http.throttled && !c.http.peer_eof
        })
    })
    .unwrap_or(false)
}

fn is_tapping(id: u64) -> bool {
    with(|r| r.conn(id).map(|c| c.has(C_TAP) && !c.http.is_upgraded()))
        .flatten()
        .unwrap_or(false)
}

/// Parses input kept in the connection's buffer (a partial message, injected bytes, or
/// input that waited while output was throttled).
fn process_buffered<S: Sink>(id: u64, g: &mut Group<S>) {
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
                client_error::<S>(sid, id, e, Some(rest), g);
                return input.len();
            }
            Action::Raw(n) => {
                off += n;
                S::data(id, &rest[..n]);
            }
            Action::Body(n, seq, (a, b)) => {
                off += n;
                let discard = with(|r| r.conn(id).map(|c| c.has(C_DISCARD_BODY)));
                if discard != Some(Some(true)) {
                    let queue = may_queue(g);
                    if S::body(id, seq, &rest[a..b], off as u32, queue) {
                        // node's on_body callback threw: as after a throwing request handler,
                        // the parser stops and fails every later read.
                        with(|r| r.handler_threw(id, off as u32, true));
                        return input.len();
                    }
                    g.queued |= queue;
                    if boundary::<S>(g, id, Some(off as u32)) {
                        return input.len();
                    }
                }
            }
            Action::BodyEnd(n, seq, t) => {
                off += n;
                with(|r| r.conn(id).map(|c| c.flags &= !C_DISCARD_BODY));
                S::body_end(id, seq, t.as_deref());
            }
            Action::Upgrade(n, seq, body_done) => {
                off += n;
                S::upgrade(id, seq, body_done.then_some(&rest[..n]));
            }
            Action::Dispatch(n, d) => {
                let queues = queueable(d.flags) && may_queue(g);
                // A request JS answers at once (an upgrade) comes after the queued ones.
                if !queues && g.queued && boundary::<S>(g, id, None) {
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
                let threw = S::request(&Request {
                    sid,
                    id,
                    seq: d.seq,
                    method: d.method,
                    url: &rest[d.url.0..d.url.1],
                    headers: &rest[d.headers.0..d.headers.1],
                    flags: if queues { flags | F_QUEUED } else { flags },
                    body: d.body.map(|(a, b)| &rest[a..b]),
                    head_end: head_end as u32,
                });
                g.queued |= queues;
                // A throwing shouldUpgradeCallback (F_ASK_UPGRADE) is not that: node's request
                // stays an upgrade that its connection's next bytes complete (Reading::Asking).
                if threw && d.flags & F_ASK_UPGRADE == 0 {
                    // node's on_headers_complete failed: llhttp stops there (the rest of the
                    // read is dropped) and fails every later read with that error.
                    with(|r| r.handler_threw(id, head_end as u32, false));
                    return input.len();
                }
                if d.flags & parse::F_INVALID_TE != 0 {
                    // llhttp emits the request, then rejects a non-chunked request coding.
                    with(|r| r.conn(id).map(|c| c.http.fail(errors::INVALID_TE)));
                    client_error::<S>(sid, id, errors::INVALID_TE, Some(rest), g);
                    return input.len();
                }
                with(|r| r.conn(id).map(|c| c.http.dispatched()));
                if inline {
                    if boundary::<S>(g, id, Some(off as u32)) {
                        return input.len();
                    }
                    S::body_end(id, d.seq, None);
                }
            }
        }
    }
}

/// Whether what goes to JS next may wait in its tick queue (F_QUEUED): behind what already
/// waits there, or when JS ran nothing since the last boundary. Once it ran something, ticks
/// that queued would run first, where node calls the listener before them (a request, a body
/// piece or an error after a body that ended in this read).
fn may_queue<S: Sink>(g: &Group<S>) -> bool {
    g.queued || !S::touched()
}

/// Whether a request with these flags runs from JS's tick queue (F_QUEUED): all but an
/// upgrade, whose answer the connection's next bytes wait for.
fn queueable(flags: u32) -> bool {
    flags & (parse::F_UPGRADE | F_ASK_UPGRADE) == 0
}

/// A parse error (the state machine is already `Failed`), which JS queues (see F_QUEUED). JS
/// decides, as node:http's socketOnError does ('clientError' when anyone listens, else node's
/// default answer), since the server's 'clientError' emit is observable. Without `packet` it
/// is the end of the input that failed (node's parser.finish() in socketOnEnd: JS ends the
/// socket first).
fn client_error<S: Sink>(
    sid: u32,
    id: u64,
    e: ParseError,
    packet: Option<&[u8]>,
    g: &mut Group<S>,
) {
    let queue = may_queue(g);
    // node reports a header overflow at the end of the chunk it was parsing.
    let at = if e.code == "HPE_HEADER_OVERFLOW" {
        packet.map_or(0, |p| p.len()) as u32
    } else {
        e.at as u32
    };
    S::client_error(
        &ClientError {
            sid,
            id,
            code: e.code,
            reason: e.reason,
            packet,
            at,
        },
        queue,
    );
    g.queued |= queue;
}

fn on_eof<S: Sink>(id: u64, g: &mut Group<S>) {
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
        client_error::<S>(sid, id, errors::INVALID_EOF_STATE, None, g);
    }
}
