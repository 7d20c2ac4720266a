//! The reactor driven through its command API, as the binding drives it: a real poll and
//! loopback sockets, a fake event loop (`TestLoop`: a clock the test moves) and a fake sink
//! that records what JS would hear.

use super::commands::Respond;
use super::event_loop::EventLoop;
use super::events::{Batch, Event};
use super::readiness::{batch, run_poll};
use super::server::{ServerCfg, S_HAS_UPGRADE, S_UPGRADE_CALLBACK};
use super::sink::Sink;
use super::state::*;
use super::timers::run_timers;
use crate::conn::F_ASK_UPGRADE;
use crate::net::Listener;
use crate::net::{self, TcpOptions};
use crate::proto::parse;
use crate::proto::response::{Head, Raw, Response, R_CONN_KEEP_ALIVE, R_CONTENT_LENGTH};
use mio::Poll;
use std::cell::Cell;
use std::cell::RefCell;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ev {
    Connection(u64),
    Request {
        id: u64,
        seq: u32,
        url: Vec<u8>,
        flags: u32,
    },
    BodyEnd(u64, u32),
    Data(u64, Vec<u8>),
    Drain(u64),
    Close(u64, i32),
    End(u64),
    Timeout(u64),
    Released(u64),
    Other(&'static str),
}

thread_local! {
    static EVENTS: RefCell<Vec<Ev>> = const { RefCell::new(Vec::new()) };
    static CLOCK: Cell<u64> = const { Cell::new(1000) };
}

pub(super) fn record(e: Ev) {
    EVENTS.with(|v| v.borrow_mut().push(e));
}

pub(super) fn events() -> Vec<Ev> {
    EVENTS.with(|v| v.borrow().clone())
}

pub(super) struct TestSink;

/// The embedder's side, faked as lib/http/native-events.js decides: an event runs now when it
/// must (an upgrade request, an upgrade, data, a body's end, anything outside a group) or
/// when JS ran something now in its group; else it waits in the tick queue, which runs at
/// the group's next boundary or end (then the ticks, which throw when the test says so).
/// A handler whose request `url` is THROW_ON throws: as JS's `deliver` does, the fake tells
/// the reactor (`handler_threw`) when a throw fails the parser, and what the connection had
/// waiting is dropped.
#[derive(Default)]
struct FakeJs {
    group: u64,
    ran_in: Option<u64>,
    queued: Vec<(Event, Vec<u8>)>,
}

thread_local! {
    static JS: RefCell<FakeJs> = RefCell::new(FakeJs::default());
    /// A request for this URL throws in its handler.
    static THROW_ON: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

fn next_group() {
    JS.with(|j| j.borrow_mut().group += 1);
}

/// Whether the event's handler may wait in the tick queue.
fn queueable(e: &Event) -> bool {
    match e {
        Event::Request { flags, .. } => flags & (parse::F_UPGRADE | F_ASK_UPGRADE) == 0,
        Event::Body { .. }
        | Event::ClientError { .. }
        | Event::Timeout { .. }
        | Event::Connection { .. } => true,
        _ => false,
    }
}

/// Runs one event's handler (records it). Returns false when it threw.
fn run(e: &Event, bytes: &[u8]) -> bool {
    match *e {
        Event::Connection { id, .. } => record(Ev::Connection(id)),
        Event::Request {
            id,
            seq,
            flags,
            head_end,
            ..
        } => {
            record(Ev::Request {
                id,
                seq,
                url: bytes.to_vec(),
                flags,
            });
            if flags & F_ASK_UPGRADE != 0 {
                if let Some(upgrade) = DECIDE.with(Cell::get) {
                    with(|r| r.decide_upgrade(id, upgrade));
                }
            }
            if THROW_ON.with(|t| t.borrow().as_deref() == Some(bytes)) {
                if flags & F_ASK_UPGRADE == 0 {
                    with(|r| r.handler_threw(id, head_end, false));
                }
                return false;
            }
        }
        Event::BodyEnd { id, seq, .. } => record(Ev::BodyEnd(id, seq)),
        Event::Data { id, .. } => record(Ev::Data(id, bytes.to_vec())),
        Event::Drain { id } => record(Ev::Drain(id)),
        Event::Close { id, errno } => record(Ev::Close(id, errno)),
        Event::End { id } => record(Ev::End(id)),
        Event::Timeout { id, .. } => record(Ev::Timeout(id)),
        Event::Body { .. } => record(Ev::Other("body")),
        Event::Dropped { .. } => record(Ev::Other("drop")),
        Event::Upgrade { .. } => record(Ev::Other("upgrade")),
        Event::ClientError { .. } => record(Ev::Other("clientError")),
        Event::Reset { .. } => record(Ev::Other("reset")),
        Event::Shutdown { .. } => record(Ev::Other("shutdown")),
        Event::ServerDrained { .. } => record(Ev::Other("drained")),
        Event::InternalError { .. } => record(Ev::Other("internalError")),
    }
    true
}

/// The bytes a recorded event shows (a request's URL, data's chunk).
fn shown(b: &Batch, e: &Event) -> Vec<u8> {
    match *e {
        Event::Request { url, .. } => b.bytes_of(url).to_vec(),
        Event::Data { chunk, .. } => b.bytes_of(chunk).to_vec(),
        _ => Vec::new(),
    }
}

/// The tick queue runs: what waits, in order (a throw drops the rest of its connection's).
/// Recorded as "ticks" first, so a test sees which handlers ran from the queue.
fn run_queued() {
    let queued = JS.with(|j| std::mem::take(&mut j.borrow_mut().queued));
    if !queued.is_empty() {
        record(Ev::Other("ticks"));
    }
    let mut dropped = Vec::new();
    for (e, bytes) in queued {
        if e.conn().is_some_and(|id| dropped.contains(&id)) {
            continue;
        }
        if !run(&e, &bytes) {
            dropped.extend(e.conn());
        }
    }
}

/// The fake's scope: its end runs the tick queue.
pub(super) struct FakeScope;

impl Drop for FakeScope {
    fn drop(&mut self) {
        run_queued();
        next_group();
    }
}

impl Sink for TestSink {
    type Scope = FakeScope;
    fn scope(_id: Option<u64>) -> Option<FakeScope> {
        next_group();
        Some(FakeScope)
    }
    fn boundary(_scope: &mut FakeScope) -> bool {
        run_queued();
        next_group();
        TICKS_THROW.with(|t| t.replace(false))
    }
    fn deliver(_scope: &mut FakeScope, batch: &mut Batch) -> bool {
        for e in &batch.events {
            let bytes = shown(batch, e);
            let (group, ran_in, waiting) = JS.with(|j| {
                let j = j.borrow();
                (j.group, j.ran_in, !j.queued.is_empty())
            });
            if (!queueable(e) || ran_in == Some(group)) && !waiting {
                JS.with(|j| j.borrow_mut().ran_in = Some(group));
                if !run(e, &bytes) {
                    // The throw reached node's uncaught path: JS stops here.
                    break;
                }
            } else {
                JS.with(|j| j.borrow_mut().queued.push((e.clone(), bytes)));
            }
        }
        batch.clear();
        JS.with(|j| !j.borrow().queued.is_empty())
    }
    fn emit(batch: &mut Batch) {
        for e in &batch.events {
            next_group();
            run(e, &shown(batch, e));
        }
        batch.clear();
    }
    fn released(id: u64) {
        record(Ev::Released(id));
    }
}

/// The loop: a clock the test moves; a kick is a flag `turn` acts on.
struct TestLoop;

thread_local! {
    static KICKED: Cell<bool> = const { Cell::new(false) };
    /// What the app's shouldUpgradeCallback answers, inside the request's dispatch.
    static DECIDE: Cell<Option<bool>> = const { Cell::new(None) };
    /// The next boundary's ticks throw (JS's uncaught path ran in them).
    static TICKS_THROW: Cell<bool> = const { Cell::new(false) };
}

impl EventLoop for TestLoop {
    fn now(&self) -> u64 {
        CLOCK.with(Cell::get)
    }
    fn set_ref(&mut self, _on: bool) {}
    fn kick(&mut self) {
        KICKED.with(|k| k.set(true));
    }
    fn in_kick(&mut self, _on: bool) {}
    fn start_timer(&mut self, _delay: u64) {}
    fn start_idle(&mut self) {}
    fn stop_idle(&mut self) {}
}

/// This thread's reactor for one test, torn down (with its sockets) when dropped.
pub(super) struct Harness {
    addr: std::net::SocketAddr,
    pub(super) sid: u32,
}

impl Harness {
    pub(super) fn new(flags: u32, keep_alive_timeout: u64) -> Harness {
        let poll = Poll::new().unwrap();
        let mut r = Box::new(Reactor::new(
            poll,
            Box::new(TestLoop),
            crate::proto::sim::test_methods(),
        ));
        let mut line = Vec::new();
        crate::proto::response::status_line(&mut line, 200, b"OK");
        r.status_lines[200] = Some(line);
        REACTOR.with(|c| c.set(Box::into_raw(r)));
        EVENTS.with(|v| v.borrow_mut().clear());
        let opts = TcpOptions {
            backlog: 16,
            reuse_port: false,
            ipv6_only: false,
        };
        let l = net::listen_tcp("127.0.0.1".parse().unwrap(), 0, &opts).unwrap();
        let l = Listener::Tcp(l);
        let addr = l.local_addr().unwrap();
        let sid = with(|r| {
            let sid = r.create_server(None);
            r.configure_server(sid, |c: &mut ServerCfg| {
                c.flags |= flags;
                c.keep_alive_timeout = keep_alive_timeout;
            });
            r.register_listener(sid, l).unwrap();
            sid
        })
        .unwrap();
        let h = Harness { addr, sid };
        h.turn();
        h
    }

    /// One turn of the loop: the kick's deferred work, then the poll.
    pub(super) fn turn(&self) {
        if KICKED.with(|k| k.replace(false)) {
            batch::<TestSink>(|| {
                with(|r| r.register_pending_listeners());
            });
        }
        run_poll::<TestSink>();
    }

    /// Turns the loop until `done` holds (at most 10 s).
    pub(super) fn until(&self, what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            self.turn();
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    pub(super) fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_nonblocking(true).unwrap();
        s
    }

    /// The next request dispatched: (connection id, seq, flags).
    pub(super) fn request(&self, after: usize) -> (u64, u32, u32) {
        let mut found = None;
        self.until("a request", || {
            found = events().into_iter().skip(after).find_map(|e| match e {
                Ev::Request { id, seq, flags, .. } => Some((id, seq, flags)),
                _ => None,
            });
            found.is_some()
        });
        found.unwrap()
    }

    /// Reads from `s` while turning the loop until `done(bytes so far)` or the peer ends.
    pub(super) fn read(
        &self,
        s: &mut TcpStream,
        mut done: impl FnMut(&[u8]) -> bool,
    ) -> (Vec<u8>, bool) {
        let mut got = Vec::new();
        let mut ended = false;
        self.until("client bytes", || {
            let mut buf = [0u8; 65536];
            loop {
                match s.read(&mut buf) {
                    Ok(0) => ended = true,
                    Ok(n) => {
                        got.extend_from_slice(&buf[..n]);
                        continue;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(_) => ended = true,
                }
                break;
            }
            ended || done(&got)
        });
        (got, ended)
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let p = REACTOR.with(|c| c.replace(std::ptr::null_mut()));
        if !p.is_null() {
            // SAFETY: installed by Harness::new on this thread and removed from the
            // thread-local above.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// Answers request `seq` with `body`; false when the connection was gone.
pub(super) fn hello(id: u64, seq: u32, body: &[u8], how: Respond) -> bool {
    let res = Response {
        head: Head::Parts {
            status: 200,
            reason: None,
            lines: &Raw(b""),
        },
        flags: R_CONN_KEEP_ALIVE | R_CONTENT_LENGTH,
        trailers: None,
    };
    with(|r| {
        let open = r.conn(id).is_some();
        r.respond(id, seq, how, &res, body);
        open
    })
    .unwrap_or(false)
}

pub(super) const GET: &[u8] = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n";

#[test]
fn respond_answers_and_the_connection_serves_the_next_request() {
    let h = Harness::new(0, 5000);
    let mut c = h.connect();
    c.write_all(GET).unwrap();
    let (id, seq, _) = h.request(0);
    assert_eq!(seq, 0);
    assert!(hello(id, seq, b"hi", Respond::default()));
    let (got, ended) = h.read(&mut c, |b| b.ends_with(b"hi"));
    assert!(!ended);
    let text = String::from_utf8(got).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.contains("Connection: keep-alive\r\n"));
    assert!(text.ends_with("Content-Length: 2\r\n\r\nhi"), "{text}");
    assert_eq!(
        with(|r| r.conn(id).map(|c| c.http.out.holds_queue())).flatten(),
        Some(false),
        "a written-out connection gives its output queue back"
    );
    let n = events().len();
    c.write_all(GET).unwrap();
    let (again, seq, _) = h.request(n);
    assert_eq!((again, seq), (id, 1));
    // A response that closes: written, then the connection closes.
    let close = Respond {
        close: true,
        ..Respond::default()
    };
    assert!(hello(id, 1, b"bye", close));
    let (got, ended) = h.read(&mut c, |_| false);
    assert!(ended);
    assert!(got.ends_with(b"bye"));
    assert!(with(|r| r.conn(id).is_none()).unwrap());
    assert!(!hello(id, 2, b"late", Respond::default()));
}

#[test]
fn a_write_past_the_high_water_mark_hears_drain_once_written() {
    let h = Harness::new(0, 5000);
    let mut c = h.connect();
    c.write_all(GET).unwrap();
    let (id, _, _) = h.request(0);
    let chunk = vec![b'x'; 1 << 20];
    let mut left = 0;
    // Writes until the kernel stops taking them (the client reads nothing yet).
    for _ in 0..64 {
        assert!(with(|r| r.write_with(id, |t| t.extend_from_slice(&chunk)))
            .flatten()
            .is_some());
        left = with(|r| r.flush_writes(id, 16384.0)).flatten().unwrap();
        if left > 0 {
            break;
        }
    }
    assert!(left > 0, "the socket never filled");
    assert!(with(|r| r.conn(id).unwrap().has(C_WANT_DRAIN)).unwrap());
    assert!(!events().contains(&Ev::Drain(id)));
    let mut total = 0usize;
    h.until("drain", || {
        let mut buf = [0u8; 65536];
        while let Ok(n) = c.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n;
        }
        events().contains(&Ev::Drain(id))
    });
    assert!(total > 0);
    assert!(with(|r| !r.conn(id).unwrap().has(C_WANT_DRAIN)).unwrap());
}

#[test]
fn pause_holds_the_next_request_until_resume() {
    let h = Harness::new(0, 5000);
    let mut c = h.connect();
    c.write_all(GET).unwrap();
    let (id, seq, _) = h.request(0);
    hello(id, seq, b"1", Respond::default());
    with(|r| r.pause(id));
    let n = events().len();
    c.write_all(GET).unwrap();
    // The bytes arrived and were left unread: the resume must read them.
    h.until("a read left pending", || {
        with(|r| r.conn(id).unwrap().has(C_READ_PENDING)).unwrap()
    });
    assert!(!events()[n..]
        .iter()
        .any(|e| matches!(e, Ev::Request { .. })));
    with(|r| r.resume(id));
    assert_eq!(h.request(n).1, 1);
}

#[test]
fn destroy_with_reset_sends_rst_and_tells_a_watching_js() {
    let h = Harness::new(0, 5000);
    let mut c = h.connect();
    c.write_all(GET).unwrap();
    let (id, _, _) = h.request(0);
    assert!(with(|r| r.watch(id, true)).unwrap());
    with(|r| r.destroy(id, true, None));
    assert!(!with(|r| r.watch(id, true)).unwrap());
    h.until("close", || events().contains(&Ev::Close(id, 0)));
    assert!(events().contains(&Ev::Released(id)));
    let mut buf = [0u8; 16];
    let deadline = Instant::now() + Duration::from_secs(10);
    let err = loop {
        match c.read(&mut buf) {
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(1))
            }
            other => break other,
        }
    };
    assert_eq!(err.unwrap_err().kind(), ErrorKind::ConnectionReset);
}

#[test]
fn an_upgrade_decided_hands_the_connection_over() {
    let h = Harness::new(S_HAS_UPGRADE | S_UPGRADE_CALLBACK, 5000);
    DECIDE.with(|d| d.set(Some(true)));
    let mut c = h.connect();
    c.write_all(b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\n")
        .unwrap();
    let (id, _, flags) = h.request(0);
    assert!(flags & F_ASK_UPGRADE != 0);
    with(|r| r.decide_upgrade(id, true));
    assert!(with(|r| r.conn(id).unwrap().http.is_upgraded()).unwrap());
    c.write_all(b"raw bytes").unwrap();
    h.until("raw data", || {
        events().contains(&Ev::Data(id, b"raw bytes".to_vec()))
    });
    // Written back as they are, no HTTP framing.
    with(|r| r.write_with(id, |t| t.extend_from_slice(b"pong")));
    with(|r| r.flush_writes(id, 16384.0));
    let (got, _) = h.read(&mut c, |b| b.len() >= 4);
    assert_eq!(got, b"pong");
}

#[test]
fn the_keep_alive_timeout_closes_an_idle_connection_unless_js_set_its_own() {
    let h = Harness::new(0, 1000);
    let mut c = h.connect();
    c.write_all(GET).unwrap();
    let (id, seq, _) = h.request(0);
    hello(id, seq, b"1", Respond::default());
    assert!(with(|r| r.conn(id).unwrap().http.keep_alive_idle).unwrap());
    assert_eq!(with(|r| r.conn(id).unwrap().timeout_ms), Some(1000));
    CLOCK.with(|t| t.set(t.get() + 999));
    run_timers::<TestSink>();
    assert!(with(|r| r.conn(id).is_some()).unwrap());
    CLOCK.with(|t| t.set(t.get() + 2));
    run_timers::<TestSink>();
    assert!(with(|r| r.conn(id).is_none()).unwrap());
    let (_, ended) = h.read(&mut c, |_| false);
    assert!(ended);

    // socket.setTimeout from JS: the idle time is its own, and JS hears the timeout.
    let mut c = h.connect();
    c.write_all(GET).unwrap();
    let n = events().len();
    let (id, seq, _) = h.request(n);
    hello(id, seq, b"1", Respond::default());
    assert!(with(|r| r.watch(id, true)).unwrap());
    with(|r| r.set_idle_timeout(id, 3000));
    assert!(!with(|r| r.conn(id).unwrap().http.keep_alive_idle).unwrap());
    CLOCK.with(|t| t.set(t.get() + 3001));
    run_timers::<TestSink>();
    assert!(events().contains(&Ev::Timeout(id)));
}

#[test]
fn a_throw_in_the_ticks_after_a_body_fails_the_parser_as_on_body_does() {
    let h = Harness::new(0, 5000);
    let mut c = h.connect();
    // The body comes with its head; its 'data' listener (run in the ticks after it) throws.
    TICKS_THROW.with(|t| t.set(true));
    c.write_all(
        b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhiGET /b HTTP/1.1\r\n\r\n",
    )
    .unwrap();
    let (id, _, _) = h.request(0);
    h.until("the boundary", || !TICKS_THROW.with(Cell::get));
    for _ in 0..5 {
        h.turn();
    }
    let requests = |ev: &[Ev]| {
        ev.iter()
            .filter(|e| matches!(e, Ev::Request { .. }))
            .count()
    };
    assert_eq!(requests(&events()), 1, "the rest of the read is not parsed");
    assert!(
        !events().contains(&Ev::BodyEnd(id, 0)),
        "on_message_complete is not reached"
    );
    // The next read meets the failed parser: JS hears HPE_JS_EXCEPTION ('clientError').
    c.write_all(GET).unwrap();
    h.until("the parse error", || {
        events().contains(&Ev::Other("clientError"))
    });
    assert_eq!(requests(&events()), 1);
}

/// What JS ran, in order, as short strings ("ticks": the tick queue ran what follows).
fn ran() -> Vec<String> {
    events()
        .into_iter()
        .filter_map(|e| match e {
            Ev::Request { url, .. } => Some(format!("request {}", String::from_utf8_lossy(&url))),
            Ev::BodyEnd(..) => Some("body end".into()),
            Ev::Other(what) => Some(what.into()),
            _ => None,
        })
        .collect()
}

#[test]
fn requests_of_one_read_wait_in_the_queue_until_the_read_ends() {
    let h = Harness::new(0, 5000);
    let mut c = h.connect();
    c.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    h.until("both requests", || ran().len() >= 3);
    assert_eq!(ran(), ["ticks", "request /a", "request /b"]);
}

#[test]
fn queued_requests_run_before_an_upgrade_the_next_bytes_wait_for() {
    let h = Harness::new(S_HAS_UPGRADE | S_UPGRADE_CALLBACK, 5000);
    DECIDE.with(|d| d.set(Some(false)));
    let mut c = h.connect();
    c.write_all(
        b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n\
          GET /ws HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\n",
    )
    .unwrap();
    h.until("both requests", || ran().len() >= 3);
    // /a waited in the queue; a boundary ran it before /ws, which runs now.
    assert_eq!(ran(), ["ticks", "request /a", "request /ws"]);
}

#[test]
fn a_throwing_handler_fails_the_parser_and_drops_what_followed() {
    let h = Harness::new(0, 5000);
    THROW_ON.with(|t| *t.borrow_mut() = Some(b"/a".to_vec()));
    let mut c = h.connect();
    c.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    h.until("the first request", || {
        ran().contains(&"request /a".to_string())
    });
    for _ in 0..3 {
        h.turn();
    }
    assert_eq!(ran(), ["ticks", "request /a"], "/b is never emitted");
    let failed = |id| with(|r| r.conn(id).map(|c| c.http.is_failed())).flatten();
    let (id, _, _) = h.request(0);
    assert_eq!(failed(id), Some(true));
    // The next read meets the failed parser (node's HPE_CB_HEADERS_COMPLETE).
    c.write_all(GET).unwrap();
    h.until("the parse error", || {
        ran().contains(&"clientError".to_string())
    });
}

#[test]
fn a_body_that_came_with_its_head_is_a_boundary_and_what_ran_now_keeps_its_group_running_now() {
    let h = Harness::new(0, 5000);
    let mut c = h.connect();
    c.write_all(
        b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi\
          GET /b HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .unwrap();
    h.until("both requests", || ran().len() >= 4);
    // The head (and its body) waited; llhttp's on_body is a boundary, so the tick queue ran
    // them before the body's end, which runs now (node's on_message_complete); /b, in the
    // group where JS ran something now, runs now too (no "ticks" before it).
    assert_eq!(ran(), ["ticks", "request /a", "body end", "request /b"]);
}
