//! The HTTP/1 connection state machine: pure (no I/O, no N-API), driven by events (bytes
//! read, end of input, responses finished, pause, shutdown) and answering with actions for
//! the reactor to carry out. The reactor owns the transport and the timers; this decides
//! what the bytes are and when the connection ends.
//!
//! State follows hyper's h1 `State { reading, writing, keep_alive }`: `Reading` says what
//! the next input bytes are, `KeepAlive` what happens at the next message boundary, and
//! `Writing` whether our side of the connection is still open. Pipelined responses keep
//! request order in `out` (RFC 9112 §9.3.2).

pub mod out;
#[cfg(test)]
mod tests;

pub use out::{OutQueue, Pinned};

use crate::proto::decode::{Decoder, Event};
use crate::proto::errors::ParseError;
use crate::proto::parse::{self, Framing, HeadParser, Methods};
use bytes::BytesMut;

/// Output waiting for the kernel above which no new request is parsed until it drains (node
/// pauses a pipelining client's socket the same way while its writes queue up).
pub const OUTPUT_HIGH_WATER: usize = 64 * 1024;

/// Set in a dispatched request's flags when JS decides whether it upgrades (`ask_upgrade`):
/// the connection waits until `decide_upgrade`.
pub const F_ASK_UPGRADE: u32 = 1 << 24;

/// Set in a dispatched Upgrade request's flags when its body, if it upgrades, goes through
/// the request before the connection is handed over (`Limits::upgrade_body`): JS emits
/// 'upgrade' at `Action::Upgrade`, not at the dispatch.
pub const F_UPGRADE_BODY: u32 = 1 << 25;

/// What the server knows that decides how a request is read.
pub struct Limits<'a> {
    pub methods: &'a Methods,
    /// maxHeaderSize, the most header fields, insecureHTTPParser.
    pub parse: parse::Limits,
    /// The server listens for 'upgrade' / 'connect'.
    pub upgrade: bool,
    pub connect: bool,
    /// server.shouldUpgradeCallback is the app's: whether an Upgrade request (not CONNECT)
    /// upgrades is known only once JS has called it, so `upgrade` does not decide.
    pub ask_upgrade: bool,
    /// Node 26+: an Upgrade request's body is read as the request's (node's parserOnIncoming
    /// no longer skips it), and the upgraded protocol starts after it.
    pub upgrade_body: bool,
}

/// What the next input bytes are.
#[derive(Debug, Clone)]
pub enum Reading {
    /// A request head (or the empty lines llhttp skips between messages).
    Head,
    /// The body of request `seq`.
    Body { seq: u32, dec: Box<Decoder> },
    /// An Upgrade or CONNECT request took (or may take) the connection over.
    Upgrade(Upgrading),
    /// The parser failed: like llhttp, every later chunk fails again with the same error (a
    /// 'clientError' listener may keep the socket open).
    Failed(Box<ParseError>),
}

/// Where an upgrade stands.
#[derive(Debug, Clone)]
pub enum Upgrading {
    /// The body of Upgrade request `seq` (`Limits::upgrade_body`); `told`: JS was told to
    /// emit 'upgrade' before the body ended (the read that brought the head ended first).
    Body {
        seq: u32,
        dec: Box<Decoder>,
        told: bool,
    },
    /// Upgrade request `seq`'s body ended: the rest of this read is the protocol's first
    /// bytes, then the connection is `Done`.
    AfterBody { seq: u32 },
    /// The connection was handed over ('upgrade' / 'connect'): bytes go to JS as they are.
    Done,
    /// The head of Upgrade request `seq` went to JS, which decides whether the connection
    /// upgrades (`decide_upgrade`) before the reactor goes on; `body` reads the request's
    /// body if it does not.
    Asking {
        seq: u32,
        body: Option<Box<Decoder>>,
    },
    /// JS decided while the bytes after the head were being parsed: the rest of them is
    /// dropped, then the connection is `Done` or reads the next `Head`. Upgraded, JS
    /// already has them (the upgrade's `head`); refused, llhttp stops after an upgrade
    /// request all the same and node drops the rest of that read.
    Decided { upgraded: bool },
    /// JS gave no answer (the app's shouldUpgradeCallback threw). node's request stays an
    /// upgrade: the connection's next bytes upgrade it (JS emits 'upgrade' with them, or
    /// destroys the socket when nobody listens).
    Undecided,
}

/// What happens at the next message boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepAlive {
    /// Another request may follow.
    Open,
    /// The last request asked to close (`Connection: close`, HTTP/1.0): llhttp fails on any
    /// byte after it.
    Closing,
    /// No more requests are served (a response closed the connection, the peer ended, JS
    /// ended the socket): later bytes are dropped.
    Done,
}

/// Whether our side still sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writing {
    Open,
    /// Send FIN once the output is written.
    EndAfterFlush,
    /// FIN was sent.
    Shut,
}

/// A request head to hand to JS. Ranges are offsets into the bytes given to `next`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    pub seq: u32,
    pub method: u16,
    pub url: (usize, usize),
    pub headers: (usize, usize),
    pub flags: u32,
    /// The body when it came whole with the head, or the first bytes of an upgraded protocol.
    pub body: Option<(usize, usize)>,
    /// The request arrived on an idle keep-alive connection (its keep-alive timer ends).
    pub after_idle: bool,
}

/// A step of a body's decoder (`body_step`): its end (bytes used, the request, how it ended),
/// or what to do otherwise.
enum BodyStep {
    End(usize, u32, crate::proto::decode::Done),
    Other(Action),
}

/// What to do with the next bytes. The first field of each variant that has one is how many
/// bytes of the input it used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing more can be done with these bytes now: they stay buffered.
    Stop,
    /// Bytes used without anything to tell.
    Consume(usize),
    Dispatch(usize, Dispatch),
    Body(usize, u32, (usize, usize)),
    /// The body of request `seq` ended, with its trailer lines if any.
    BodyEnd(usize, u32, Option<Vec<u8>>),
    /// Bytes of an upgraded connection.
    Raw(usize),
    /// JS emits 'upgrade' for request `seq` whose body goes through the request: `true`,
    /// the body ended and the bytes used are the protocol's first (node's `head`); `false`,
    /// the body is still coming (node 26 emits at the end of the read with an UpgradeStream).
    Upgrade(usize, u32, bool),
    /// A parse error: the reactor reports it (the state is already `Failed`).
    Error(ParseError),
    /// Close at once (CONNECT nobody listens for, as node:http destroys it).
    CloseNow,
}

/// What the end of the peer's input means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eof {
    /// Upgraded: JS hears 'end' and decides.
    Upgraded,
    /// httpAllowHalfOpen with responses pending: the last one ends the connection.
    Wait,
    /// A message was cut short (llhttp's HPE_INVALID_EOF_STATE).
    MidMessage,
    /// End our side once the output is written (node:http ends as soon as the peer ends).
    End,
}

/// What to do once the output is fully written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flushed {
    /// Send FIN now.
    pub fin: bool,
    /// JS ended the socket and hears that FIN went out (its `_final` completes).
    pub tell_js: bool,
    /// Close the connection (a `Connection: close` response is written, or both sides
    /// have ended).
    pub close: bool,
}

/// The result of a response finishing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// No request is waiting for its response: the keep-alive timer starts.
    pub idle: bool,
    /// Output drained below the high-water mark: parsing may resume.
    pub resume: bool,
}

#[derive(Debug)]
pub struct Http1 {
    pub reading: Reading,
    /// A request head cut by the end of a read (its parse state lives between reads). A
    /// head that arrives whole is parsed on the stack: an idle connection holds no parser.
    head: Option<Box<HeadParser>>,
    pub keep_alive: KeepAlive,
    pub writing: Writing,
    /// Unparsed input: a message cut by the end of a read, or input that waits while output
    /// is throttled.
    pub rbuf: BytesMut,
    pub out: OutQueue,
    next_seq: u32,
    /// Requests dispatched whose responses have not finished.
    pub inflight: u32,
    /// Loop time the current request started arriving (0 = between requests).
    pub req_start: u64,
    /// The current request's head is complete (headersTimeout no longer applies).
    pub headers_done: bool,
    /// The peer sent FIN.
    pub peer_eof: bool,
    /// No request is parsed while output is above OUTPUT_HIGH_WATER.
    pub throttled: bool,
    /// The idle time is keep-alive time (after the last response).
    pub keep_alive_idle: bool,
    /// JS ended the socket (`socket.end()`): it hears when FIN is sent.
    pub end_requested: bool,
}

impl Http1 {
    pub fn new(now: u64) -> Http1 {
        Http1 {
            reading: Reading::Head,
            head: None,
            keep_alive: KeepAlive::Open,
            writing: Writing::Open,
            rbuf: BytesMut::new(),
            out: OutQueue::default(),
            next_seq: 0,
            inflight: 0,
            // Like node's parser, a new connection counts as a request starting now, so a
            // client that sends nothing meets headersTimeout.
            req_start: now.max(1),
            headers_done: false,
            peer_eof: false,
            throttled: false,
            keep_alive_idle: false,
            end_requested: false,
        }
    }

    /// Decides what the next bytes of `buf` are, updating the state. `buf` starts with the
    /// first unused byte; call again with the rest after each action until `Stop`.
    pub fn next(&mut self, buf: &[u8], lim: &Limits<'_>, now: u64) -> Action {
        match &self.reading {
            Reading::Head => self.next_head(buf, lim, now),
            Reading::Body { .. } => self.next_body(buf, lim),
            Reading::Upgrade(_) => self.next_upgrade(buf, lim),
            Reading::Failed(_) if buf.is_empty() => Action::Stop,
            Reading::Failed(e) => Action::Error(**e),
        }
    }

    /// A request body.
    fn next_body(&mut self, buf: &[u8], lim: &Limits<'_>) -> Action {
        let (n, seq, done) = match self.body_step(buf, lim) {
            BodyStep::End(n, seq, done) => (n, seq, done),
            BodyStep::Other(a) => return a,
        };
        self.message_complete(Reading::Head);
        if done.close && self.keep_alive == KeepAlive::Open {
            // `Connection: close` in the trailers: llhttp reads nothing more as HTTP
            // (bytes after the message fail, HPE_CLOSED_CONNECTION).
            self.keep_alive = KeepAlive::Closing;
        } else if done.keep && self.keep_alive == KeepAlive::Closing {
            // `Connection: keep-alive` in an HTTP/1.0 request's trailers: llhttp
            // reads the next request after all.
            self.keep_alive = KeepAlive::Open;
        }
        // After an upgrade nobody took, llhttp stops: the rest of the read is
        // dropped (node serves the request only).
        let n = if done.upgrade { buf.len() } else { n };
        Action::BodyEnd(n, seq, done.trailers)
    }

    /// One step of the body being read (a request's, or an upgrade's): its data, an error,
    /// more input wanted, or its end, which each caller completes its own way.
    fn body_step(&mut self, buf: &[u8], lim: &Limits<'_>) -> BodyStep {
        let (seq, dec) = match &mut self.reading {
            Reading::Body { seq, dec } | Reading::Upgrade(Upgrading::Body { seq, dec, .. }) => {
                (*seq, dec)
            }
            _ => {
                debug_assert!(false, "body_step outside a body");
                return BodyStep::Other(Action::Stop);
            }
        };
        BodyStep::Other(match dec.step(buf, &lim.parse) {
            Err(e) => self.error(e),
            Ok((n, Event::Data(a, b))) => Action::Body(n, seq, (a, b)),
            Ok((n, Event::Done(done))) => return BodyStep::End(n, seq, done),
            Ok((0, Event::NeedMore)) => Action::Stop,
            Ok((n, Event::NeedMore)) => Action::Consume(n),
        })
    }

    /// A message ended: what is read next, and no request is under way.
    fn message_complete(&mut self, next: Reading) {
        self.reading = next;
        self.req_start = 0;
        self.headers_done = false;
    }

    /// Bytes of a connection an upgrade took, or may take, over.
    fn next_upgrade(&mut self, buf: &[u8], lim: &Limits<'_>) -> Action {
        let Reading::Upgrade(up) = &mut self.reading else {
            debug_assert!(false, "next_upgrade outside an upgrade");
            return Action::Stop;
        };
        match up {
            Upgrading::Done if buf.is_empty() => Action::Stop,
            Upgrading::Done => Action::Raw(buf.len()),
            Upgrading::Body { .. } => self.next_upgrade_body(buf, lim),
            Upgrading::AfterBody { seq } => {
                let seq = *seq;
                self.reading = Reading::Upgrade(Upgrading::Done);
                Action::Upgrade(buf.len(), seq, true)
            }
            Upgrading::Asking { .. } => {
                // No answer: llhttp stopped at the failed callback, the rest of the read is
                // dropped.
                *up = Upgrading::Undecided;
                Action::Consume(buf.len())
            }
            Upgrading::Undecided if buf.is_empty() => Action::Stop,
            Upgrading::Undecided => {
                self.reading = Reading::Upgrade(Upgrading::Done);
                self.keep_alive = KeepAlive::Done;
                self.req_start = 0;
                Action::Raw(buf.len())
            }
            Upgrading::Decided { upgraded } => {
                self.reading = if *upgraded {
                    Reading::Upgrade(Upgrading::Done)
                } else {
                    Reading::Head
                };
                Action::Consume(buf.len())
            }
        }
    }

    /// The body of an Upgrade request that goes through the request first.
    fn next_upgrade_body(&mut self, buf: &[u8], lim: &Limits<'_>) -> Action {
        match self.body_step(buf, lim) {
            BodyStep::End(n, seq, done) => {
                self.message_complete(Reading::Upgrade(Upgrading::AfterBody { seq }));
                Action::BodyEnd(n, seq, done.trailers)
            }
            // The read is used up with the body unfinished: node emits now.
            BodyStep::Other(Action::Stop) => match &mut self.reading {
                Reading::Upgrade(Upgrading::Body { seq, told, .. }) if !*told => {
                    *told = true;
                    Action::Upgrade(0, *seq, false)
                }
                _ => Action::Stop,
            },
            BodyStep::Other(a) => a,
        }
    }

    /// A request head, once the connection may read one.
    fn next_head(&mut self, buf: &[u8], lim: &Limits<'_>, now: u64) -> Action {
        debug_assert!(matches!(self.reading, Reading::Head));
        if buf.is_empty() {
            return Action::Stop;
        }
        match self.keep_alive {
            KeepAlive::Open => {}
            // llhttp's `closed` state: CR and LF are skipped, anything else fails.
            KeepAlive::Closing => {
                return match parse::after_close(buf) {
                    Err(e) => self.error(e),
                    Ok(()) => Action::Consume(buf.len()),
                }
            }
            KeepAlive::Done => return Action::Consume(buf.len()),
        }
        // Only what can be written counts: responses queued behind an unfinished one wait on
        // it, and it may be waiting on the next request (node stops reading on the socket's
        // own backlog, not on responses still waiting for the socket).
        if self.out.unsent() > OUTPUT_HIGH_WATER {
            self.throttled = true;
            return Action::Stop;
        }
        if self.req_start == 0 {
            self.req_start = now.max(1);
        }
        let parsed = match self.head.as_mut() {
            Some(p) => p.parse(buf, lim.methods, &lim.parse),
            None => {
                let mut p = HeadParser::default();
                let r = p.parse(buf, lim.methods, &lim.parse);
                if let Ok(None) = r {
                    self.head = Some(Box::new(p));
                }
                r
            }
        };
        if !matches!(parsed, Ok(None)) {
            self.head = None;
        }
        match parsed {
            Ok(None) => Action::Stop,
            Err(e) => self.error(e),
            Ok(Some(h)) => self.start_request(buf, h, lim),
        }
    }

    /// A complete request head: what is read after it, and the request for JS.
    fn start_request(&mut self, buf: &[u8], head: parse::RequestHead, lim: &Limits<'_>) -> Action {
        debug_assert!(matches!(self.reading, Reading::Head));
        let connect = head.flags & parse::F_CONNECT != 0;
        if connect && !lim.connect {
            // node:http destroys a CONNECT connection nobody listens for.
            return Action::CloseNow;
        }
        let after_idle = std::mem::take(&mut self.keep_alive_idle);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.inflight += 1;
        self.headers_done = true;
        let dec = match head.framing {
            Framing::None => None,
            Framing::Length(n) => Some(Decoder::for_length(n)),
            Framing::Chunked => Some(Decoder::chunked(head.flags)),
        };
        let (consumed, flags, body) = if head.flags & parse::F_UPGRADE != 0 {
            self.read_after_upgrade(seq, buf, &head, dec, lim)
        } else {
            self.read_after_head(seq, buf, &head, head.flags, dec)
        };
        Action::Dispatch(
            consumed,
            Dispatch {
                seq,
                method: head.method,
                url: head.url,
                headers: head.headers,
                flags,
                body,
                after_idle,
            },
        )
    }

    /// What follows a plain request's head (or an upgrade that does not happen): its body,
    /// whole in `buf` or still to come. Returns (bytes used, flags, body range).
    fn read_after_head(
        &mut self,
        seq: u32,
        buf: &[u8],
        head: &parse::RequestHead,
        mut flags: u32,
        dec: Option<Decoder>,
    ) -> (usize, u32, Option<(usize, usize)>) {
        let paused_upgrade = flags & parse::F_UPGRADE != 0;
        flags &= !parse::F_UPGRADE;
        let mut consumed = head.head_len;
        let mut body = None;
        let mut dec = match head.framing {
            Framing::Length(n) if (buf.len() - head.head_len) as u64 >= n => {
                let end = head.head_len + n as usize;
                body = Some((head.head_len, end));
                consumed = end;
                flags |= parse::F_BODY_DONE;
                None
            }
            _ => dec,
        };
        if paused_upgrade {
            // llhttp stops after an upgrade request (its head, or its body) even when nobody
            // listens for 'upgrade': node serves the request and drops the rest of that read.
            dec = dec.map(Decoder::of_upgrade);
            if dec.is_none() {
                consumed = buf.len();
            }
        }
        if let Some(dec) = dec {
            self.reading = Reading::Body {
                seq,
                dec: Box::new(dec),
            };
        }
        if flags & parse::F_KEEP_ALIVE == 0 {
            // After a request that closes the connection nothing more is read as HTTP.
            self.keep_alive = KeepAlive::Closing;
        }
        (consumed, flags, body)
    }

    /// What follows an Upgrade or CONNECT request's head: the upgraded protocol, its body
    /// first, JS's decision, or (nobody listens) a plain request. Returns (bytes used, flags,
    /// body range).
    fn read_after_upgrade(
        &mut self,
        seq: u32,
        buf: &[u8],
        head: &parse::RequestHead,
        dec: Option<Decoder>,
        lim: &Limits<'_>,
    ) -> (usize, u32, Option<(usize, usize)>) {
        let mut flags = head.flags;
        let connect = flags & parse::F_CONNECT != 0;
        let ask = lim.ask_upgrade && !connect;
        let upgrade = (connect || lim.upgrade) && !ask;
        if !upgrade && !ask {
            return self.read_after_head(seq, buf, head, flags, dec);
        }
        if lim.upgrade_body && !connect && dec.is_some() {
            flags |= F_UPGRADE_BODY;
        }
        // Only the head is used until JS decides, or until the upgraded protocol starts; the
        // rest is what it starts with (node's `head`), or the body and what follows.
        let rest = Some((head.head_len, buf.len()));
        match dec {
            Some(dec) if upgrade && flags & F_UPGRADE_BODY != 0 => {
                self.reading = Reading::Upgrade(Upgrading::Body {
                    seq,
                    dec: Box::new(dec),
                    told: false,
                });
                self.keep_alive = KeepAlive::Done;
                (head.head_len, flags, None)
            }
            body if ask => {
                self.reading = Reading::Upgrade(Upgrading::Asking {
                    seq,
                    body: body.map(Box::new),
                });
                if flags & parse::F_KEEP_ALIVE == 0 {
                    self.keep_alive = KeepAlive::Closing;
                }
                (head.head_len, flags | F_ASK_UPGRADE, rest)
            }
            _ => {
                self.reading = Reading::Upgrade(Upgrading::Done);
                self.keep_alive = KeepAlive::Done;
                self.req_start = 0;
                (buf.len(), flags, rest)
            }
        }
    }

    fn error(&mut self, e: ParseError) -> Action {
        self.fail(e);
        Action::Error(e)
    }

    /// The request just dispatched was handed to JS. One without a body still to come
    /// completes now, as llhttp's on_message_complete follows on_headers_complete: until then
    /// the connection is not idle (closeIdleConnections, timeouts).
    pub fn dispatched(&mut self) {
        if matches!(self.reading, Reading::Head) {
            self.req_start = 0;
            self.headers_done = false;
        }
    }

    /// After parsing stopped for more bytes and the rest was kept in `rbuf`: drops what the
    /// head parser skipped without counting (bounded memory however the bytes come).
    pub fn compact_input(&mut self) {
        if let (Reading::Head, Some(p)) = (&self.reading, self.head.as_mut()) {
            p.compact(&mut self.rbuf);
        }
    }

    /// The input failed to parse (or was rejected after dispatch, as llhttp rejects a
    /// non-chunked request coding).
    pub fn fail(&mut self, e: ParseError) {
        self.reading = Reading::Failed(Box::new(e));
        self.keep_alive = KeepAlive::Done;
        self.req_start = 0;
    }

    /// The request timed out (headersTimeout / requestTimeout) and was reported: as node's
    /// connections list drops it from the sweep, it is not reported again. The parser goes
    /// on (what JS does with the socket decides what follows).
    pub fn timed_out(&mut self) {
        self.req_start = 0;
    }

    pub fn is_failed(&self) -> bool {
        matches!(self.reading, Reading::Failed(_))
    }

    pub fn is_upgraded(&self) -> bool {
        matches!(
            self.reading,
            Reading::Upgrade(Upgrading::Done | Upgrading::Decided { upgraded: true })
        )
    }

    /// Whether the peer's end is JS's to handle: upgraded, or an upgrade JS emitted while
    /// its body was still coming (node 26 reads no error into that end: the UpgradeStream
    /// ends, and node's socketOnEnd ends the socket).
    pub fn eof_is_js(&self) -> bool {
        self.is_upgraded()
            || matches!(
                self.reading,
                Reading::Upgrade(Upgrading::Body { told: true, .. })
            )
    }

    /// JS decided whether the Upgrade request it was asked about upgrades the connection
    /// (server.shouldUpgradeCallback). Refused, it is a plain request: its body is read as
    /// one (llhttp stops after it, see `Decoder::of_upgrade`), and without one it is complete.
    /// Accepted with `upgrade_body` (`Limits::upgrade_body`), a body is read as the request's
    /// first (`Reading::UpgradeBody`). Returns false when nothing was being asked.
    pub fn decide_upgrade(&mut self, upgrade: bool, upgrade_body: bool) -> bool {
        let Reading::Upgrade(Upgrading::Asking { seq, body }) = &mut self.reading else {
            return false;
        };
        let (seq, body) = (*seq, body.take());
        if let (true, true, Some(dec)) = (upgrade, upgrade_body, &body) {
            self.reading = Reading::Upgrade(Upgrading::Body {
                seq,
                dec: dec.clone(),
                told: false,
            });
            self.keep_alive = KeepAlive::Done;
            return true;
        }
        if upgrade {
            self.reading = Reading::Upgrade(Upgrading::Decided { upgraded: true });
            self.keep_alive = KeepAlive::Done;
            self.req_start = 0;
            return true;
        }
        match body {
            Some(dec) => {
                self.reading = Reading::Body {
                    seq,
                    dec: Box::new(dec.of_upgrade()),
                }
            }
            None => self.message_complete(Reading::Upgrade(Upgrading::Decided { upgraded: false })),
        }
        true
    }

    /// Whether a request is being received (or the connection upgraded): node's connections
    /// list counts it as not idle, from a message's first byte (a new connection's too) to
    /// its end. Whether its response is done is JS's to say (closeIdleConnections).
    pub fn mid_message(&self) -> bool {
        self.req_start != 0 || self.is_upgraded()
    }

    /// Whether the headers/request timeout sweep looks at this connection, and what it sees:
    /// (started at, headers complete).
    pub fn request_clock(&self) -> Option<(u64, bool)> {
        (self.req_start != 0).then_some((self.req_start, self.headers_done))
    }

    /// The peer ended its side. `half_open`: server.httpAllowHalfOpen.
    pub fn eof(&mut self, half_open: bool) -> Eof {
        self.peer_eof = true;
        if self.eof_is_js() {
            return Eof::Upgraded;
        }
        // An undecided upgrade gets no response to wait for (node ends the socket).
        let undecided = matches!(self.reading, Reading::Upgrade(Upgrading::Undecided));
        if self.inflight > 0 && half_open && !undecided {
            // The last pending response ends the connection (response_done).
            self.no_more_requests();
            return Eof::Wait;
        }
        let mid_message = !matches!(self.reading, Reading::Failed(_))
            && (matches!(
                self.reading,
                Reading::Body { .. } | Reading::Upgrade(Upgrading::Body { .. })
            ) || self.rbuf.iter().any(|&b| b != b'\r' && b != b'\n'));
        if mid_message {
            return Eof::MidMessage;
        }
        // node:http (httpAllowHalfOpen false) ends its side as soon as the peer ends, whether
        // or not responses are still pending; they are aborted when the socket closes.
        self.end_after_flush();
        Eof::End
    }

    fn no_more_requests(&mut self) {
        if self.keep_alive == KeepAlive::Open {
            self.keep_alive = KeepAlive::Done;
        }
    }

    fn end_after_flush(&mut self) {
        self.no_more_requests();
        if self.writing == Writing::Open {
            self.writing = Writing::EndAfterFlush;
        }
    }

    /// JS ended the socket (`socket.end()`): FIN once the output is written, then JS hears.
    /// What the peer still sends is parsed, as node's parser goes on after socket.end().
    pub fn shutdown(&mut self) {
        self.end_requested = true;
        if self.writing == Writing::Open {
            self.writing = Writing::EndAfterFlush;
        }
    }

    /// The response to request `seq` is complete (its bytes are queued). None when it still
    /// waits behind an earlier one.
    pub fn response_done(&mut self, seq: u32, close: bool) -> Option<Finished> {
        let completed = self.out.finish(seq, close);
        if completed == 0 {
            return None;
        }
        self.inflight = self.inflight.saturating_sub(completed);
        // A response that closes the connection does not stop the parser: as node's, it
        // goes on with what the read held (those requests are served, their responses
        // dropped) until the connection closes once the output is written.
        // The rest of the request body still goes to JS: the app may read it after
        // responding, and node's req._dump() decides when it is dropped.
        let idle = self.inflight == 0;
        if idle && self.peer_eof {
            self.end_after_flush();
        }
        let resume = self.throttled && self.out.unsent() < OUTPUT_HIGH_WATER;
        if resume {
            self.throttled = false;
        }
        if idle {
            // node:http arms the keep-alive timer when the last response finishes.
            self.keep_alive_idle = true;
        }
        Some(Finished { idle, resume })
    }

    /// The output is fully written: what follows.
    pub fn flushed(&mut self) -> Flushed {
        let close_after = self.out.close_after;
        if !close_after && self.writing == Writing::Open {
            return Flushed::default();
        }
        let fin = self.writing != Writing::Shut;
        self.writing = Writing::Shut;
        Flushed {
            fin,
            tell_js: fin && std::mem::take(&mut self.end_requested),
            // node:http destroys the socket once a `Connection: close` response is written
            // (destroySoon); after a plain end() it waits for the peer's FIN.
            close: close_after || self.peer_eof,
        }
    }

    /// Whether the connection still needs the event loop: reading (`reading`: input is
    /// wanted, and no FIN yet) or writing.
    pub fn is_active(&self, reading: bool) -> bool {
        (reading && !self.peer_eof) || !self.out.is_flushed()
    }
}
