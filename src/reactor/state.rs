//! The reactor's state: its connections, servers, buffers, deferred events and timers, the
//! thread's one instance (`with`), and the bookkeeping every room of the reactor shares.

use super::event_loop::EventLoop;
use super::server::{self, Server};
use super::slots::Slots;
use crate::conn::Http1;
use crate::net::Stream;
use crate::proto::date::DateCache;
use crate::proto::parse::Methods;
use mio::{Interest, Poll, Token};
use std::cell::Cell;
use std::collections::{BinaryHeap, VecDeque};

/// Poll tokens at or above this bit are listeners (the rest are slab indexes).
pub(super) const LISTENER_BIT: usize = 1 << 40;
/// Bytes read per recv.
pub(super) const SCRATCH: usize = 64 * 1024;
/// Reads per connection per readiness event before yielding to other connections.
pub(super) const READS_PER_EVENT: usize = 16;
/// Output buffers above this size are pooled instead of freed...
pub(super) const SMALL_BUFFER: usize = 16 * 1024;
/// ...up to this size...
pub(super) const POOLED_MAX: usize = 1024 * 1024;
/// ...and this many of them.
pub(super) const POOL_SIZE: usize = 16;
/// Small output buffers kept for the next response (each response's bytes are assembled in
/// one before they join the connection's queue: a malloc and a free per response otherwise).
pub(super) const SMALL_POOL_SIZE: usize = 64;

/// The connection is in the dirty list (written during the batch, flushed at its end).
pub const C_DIRTY: u32 = 1;
/// The output is being written and the socket wants WRITABLE.
pub const C_WAIT_WRITABLE: u32 = 1 << 1;
/// JS holds a socket object for this connection: tell it about close, end, timeout.
pub const C_JS_WATCH: u32 = 1 << 2;
/// A write returned "buffer full" to JS: tell it (drain) when the output is written.
pub const C_WANT_DRAIN: u32 = 1 << 3;
/// The connection keeps the event loop alive when active (net.Socket#ref).
pub const C_REF: u32 = 1 << 4;
/// The connection currently counts in the reactor's loop references.
pub const C_HOLDS_REF: u32 = 1 << 5;
/// JS paused reading (req.pause / a full socket buffer).
pub const C_READ_PAUSED: u32 = 1 << 6;
/// Reading stopped before the socket said it would block: a resume must read again (the
/// registration is edge-triggered).
pub const C_READ_PENDING: u32 = 1 << 7;
/// The app listens for 'data' on the socket while it speaks HTTP: raw bytes go to JS too.
pub const C_TAP: u32 = 1 << 8;
/// The request whose body is being read was dumped (node's req._dump()): its pieces are
/// dropped here instead of copied into JS to be dropped there, until the body ends.
pub const C_DISCARD_BODY: u32 = 1 << 9;
/// The poll reported a hang-up (POLLHUP: both directions closed, as after a reset) and
/// `Reactor::hup_is_eof`: a read shorter than the buffer is then the end of the input, and
/// the error the socket holds is not read.
pub const C_HUP: u32 = 1 << 10;
/// The completion driver reads this connection (`super::completions`): it is in the poll
/// set for WRITABLE edges only.
pub const C_RING: u32 = 1 << 11;
/// A multishot receive is in flight (until the completion that says it ended).
pub const C_RECV_ARMED: u32 = 1 << 12;
/// ...and its cancellation was asked for.
pub const C_RECV_CANCELLING: u32 = 1 << 13;

/// A connection: its transport, its HTTP/1 state and the reactor's bookkeeping.
pub struct Connection {
    pub(super) server: u32,
    pub(super) stream: Stream,
    pub(super) http: Http1,
    pub(super) flags: u32,
    /// Idle timeout (socket.setTimeout), ms; 0 = none.
    pub(super) timeout_ms: u64,
    pub(super) last_active: u64,
    /// Deadline of this connection's live timer-heap entry (0 = none).
    pub(super) timer_at: u64,
    pub(super) bytes_read: u64,
    pub(super) bytes_written: u64,
}

impl Connection {
    pub(super) fn has(&self, f: u32) -> bool {
        self.flags & f != 0
    }
}

#[derive(Default, Debug, Clone, Copy)]
pub struct Counters {
    /// write(2) calls on connections (what write coalescing saves).
    pub write_calls: u64,
    /// read(2) calls on connections (one per request, not one more for EAGAIN).
    pub read_calls: u64,
}

#[derive(Default, Debug, Clone, Copy)]
pub struct Stats {
    pub servers_created: u64,
    pub connections_accepted: u64,
    pub requests_dispatched: u64,
    pub tls_handshakes: u64,
}

/// Events that wait for the end of the batch (or the next loop turn), so JS never hears of
/// them from inside one of its own calls.
pub(super) enum Deferred {
    Close(u64, i32),
    /// A connection JS never saw failed (server id, connection id, errno).
    Reset(u32, u64, i32),
    Drain(u64),
    End(u64),
    Shutdown(u64),
    Resume(u64),
    Drained(u32),
    Released(u64),
    Panic(Option<u32>, String),
}

#[derive(PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
pub(super) enum TimerKey {
    Conn(u64),
    ServerCheck(u32),
    /// A TLS connection's handshake deadline.
    Handshake(u64),
}

pub struct Reactor {
    pub(super) methods: Methods,
    pub(super) status_lines: Vec<Option<Vec<u8>>>,
    pub(super) date: DateCache,
    pub(super) counters: Counters,
    pub(super) stats: Stats,
    pub(super) servers: Vec<Option<Server>>,
    pub(super) conns: Slots<Connection>,
    pub(super) poll: Poll,
    pub(super) events: mio::Events,
    pub(super) scratch: Vec<u8>,
    pub(super) dirty: Vec<u64>,
    pub(super) pool: Vec<Vec<u8>>,
    pub(super) small_pool: Vec<Vec<u8>>,
    pub(super) deferred: VecDeque<Deferred>,
    /// A batch's memory between groups (`http::Group` takes it and gives it back).
    pub(super) spare_batch: super::events::Batch,
    /// Connections that had more to read when they yielded; resumed on the next loop turn.
    pub(super) yielded: Vec<u64>,
    pub(super) timers: BinaryHeap<std::cmp::Reverse<(u64, TimerKey)>>,
    pub(super) timer_armed_at: u64,
    pub(super) handles: Box<dyn EventLoop>,
    pub(super) refs: usize,
    pub(super) handle_refd: bool,
    pub(super) in_batch: bool,
    pub(super) now: u64,
    /// libuv before 1.52 (Node 20, 22) takes POLLHUP after a short read for the end of the
    /// input (uv__stream_io), so node:http sees a request followed at once by a reset as
    /// EOF; later libuv reads on and reports the reset (ECONNRESET).
    pub(super) hup_is_eof: bool,
    /// The completion driver's ring, where the kernel offers one (`super::completions`).
    pub(super) ring: Option<Box<crate::net::uring::Ring>>,
    /// Its completions being handled (memory kept between reaps).
    pub(super) ring_completions: Vec<crate::net::uring::Received>,
}

thread_local! {
    pub(super) static REACTOR: Cell<*mut Reactor> = const { Cell::new(std::ptr::null_mut()) };
}

/// Runs `f` with this thread's reactor. The borrow ends with `f`: never call the sink inside
/// it (JS may call back into the reactor).
pub fn with<T>(f: impl FnOnce(&mut Reactor) -> T) -> Option<T> {
    let p = REACTOR.with(|c| c.get());
    if p.is_null() {
        return None;
    }
    // SAFETY: the reactor lives from `driver::install` until `driver::teardown` on this
    // thread only, and callers keep the borrow inside `f`, which never calls into JS, so no
    // two mutable borrows are live at once.
    Some(f(unsafe { &mut *p }))
}

impl Reactor {
    pub(super) fn new(poll: Poll, handles: Box<dyn EventLoop>, methods: Methods) -> Reactor {
        Reactor {
            methods,
            status_lines: vec![None; 1000],
            date: DateCache::default(),
            counters: Counters::default(),
            stats: Stats::default(),
            servers: Vec::new(),
            conns: Slots::default(),
            poll,
            events: mio::Events::with_capacity(1024),
            scratch: vec![0; SCRATCH],
            dirty: Vec::new(),
            pool: Vec::new(),
            small_pool: Vec::new(),
            deferred: VecDeque::new(),
            spare_batch: Default::default(),
            yielded: Vec::new(),
            timers: BinaryHeap::new(),
            timer_armed_at: 0,
            handles,
            refs: 0,
            handle_refd: false,
            in_batch: false,
            now: 0,
            hup_is_eof: false,
            ring: None,
            ring_completions: Vec::new(),
        }
    }

    pub(super) fn conn(&mut self, id: u64) -> Option<&mut Connection> {
        self.conns.get_mut(id)
    }

    pub(super) fn server(&mut self, sid: u32) -> Option<&mut Server> {
        self.servers.get_mut(sid as usize).and_then(|s| s.as_mut())
    }

    pub(super) fn add_server(&mut self) -> u32 {
        self.servers.push(Some(Server::new()));
        self.stats.servers_created += 1;
        (self.servers.len() - 1) as u32
    }

    /// Makes the cached Date line current: read once per event batch, and on every call
    /// made outside one (a response sent from a timer must not carry an old batch's date).
    pub(super) fn refresh_date(&mut self) {
        if !self.in_batch {
            self.date.expire();
        }
        self.date.refresh();
    }

    /// An output buffer with room for `want` bytes, reusing a pooled one.
    pub(super) fn out_buffer(&mut self, want: usize) -> Vec<u8> {
        let pooled = if want > SMALL_BUFFER {
            self.pool.pop()
        } else {
            self.small_pool.pop()
        };
        match pooled {
            Some(mut b) => {
                b.reserve(want);
                b
            }
            None => Vec::with_capacity(want),
        }
    }

    pub(super) fn recycle(&mut self, mut buf: Vec<u8>) {
        let cap = buf.capacity();
        if cap > SMALL_BUFFER && cap <= POOLED_MAX && self.pool.len() < POOL_SIZE {
            buf.clear();
            self.pool.push(buf);
        } else if cap > 0 && cap <= SMALL_BUFFER && self.small_pool.len() < SMALL_POOL_SIZE {
            buf.clear();
            self.small_pool.push(buf);
        }
    }

    pub(super) fn add_ref(&mut self, delta: isize) {
        self.refs = (self.refs as isize + delta).max(0) as usize;
        let want = self.refs > 0;
        if want != self.handle_refd {
            self.handle_refd = want;
            self.handles.set_ref(want);
        }
    }

    pub(super) fn defer(&mut self, d: Deferred) {
        self.deferred.push_back(d);
        if !self.in_batch {
            self.handles.kick();
        }
    }

    /// Called after bytes were queued on connection `id`: inside a batch they go out with
    /// the batch's flush; outside one (a timer, a promise) they go out now.
    pub(super) fn after_write(&mut self, id: u64) {
        if self.in_batch {
            if let Some(c) = self.conn(id) {
                if c.flags & C_DIRTY == 0 {
                    c.flags |= C_DIRTY;
                    self.dirty.push(id);
                }
            }
        } else {
            self.flush(id, false);
        }
    }

    /// Reads connection `id` again on the loop's next turn (`readiness::run_yielded`).
    pub(super) fn yield_read(&mut self, id: u64) {
        if let Some(c) = self.conn(id) {
            c.flags |= C_READ_PENDING;
        }
        self.yielded.push(id);
        self.handles.start_idle();
    }

    /// JS paused or resumed reading (req.pause / a full socket buffer).
    pub(super) fn set_paused(&mut self, id: u64, paused: bool) {
        let Some(c) = self.conn(id) else { return };
        if paused {
            c.flags |= C_READ_PAUSED;
        } else if c.flags & C_READ_PAUSED != 0 {
            c.flags &= !C_READ_PAUSED;
            self.defer(Deferred::Resume(id));
        }
        self.update_conn_ref(id);
    }

    /// The response to request `seq` finished (its bytes are queued).
    pub(super) fn response_done(&mut self, id: u64, seq: u32, close: bool) {
        let Some(c) = self.conn(id) else { return };
        let Some(done) = c.http.response_done(seq, close) else {
            return;
        };
        let sid = c.server;
        if done.resume {
            self.defer(Deferred::Resume(id));
        }
        if done.idle {
            // node:http arms the keep-alive timer when the last response finishes.
            let ka = self
                .server(sid)
                .map(|s| s.cfg.keep_alive_timeout)
                .unwrap_or(0);
            if ka > 0 {
                self.set_timeout(id, ka);
            } else if let Some(c) = self.conn(id) {
                c.http.keep_alive_idle = false;
            }
        }
        self.after_write(id);
    }

    /// Puts the listeners that started listening since the last turn in the poll set. One
    /// that cannot join (no memory for the poll entry) stops listening and the server
    /// reports it.
    pub(super) fn register_pending_listeners(&mut self) {
        let mut failed = Vec::new();
        for sid in server::take_pending() {
            let Some(Some(s)) = self.servers.get_mut(sid as usize) else {
                continue;
            };
            if s.registered {
                continue;
            }
            let Some(l) = s.listener.as_mut() else {
                continue;
            };
            let token = Token(LISTENER_BIT | sid as usize);
            match self.poll.registry().register(l, token, Interest::READABLE) {
                Ok(()) => s.registered = true,
                Err(e) => failed.push((sid, e)),
            }
        }
        for (sid, e) in failed {
            self.close_listener(sid);
            self.defer(Deferred::Panic(Some(sid), format!("listen: {e}")));
        }
    }

    /// Like a libuv handle, a connection keeps the loop alive only while it is ref'd and
    /// active: being read (no FIN from the peer yet, and not paused: node's readStop makes a
    /// socket inactive) or with output to write.
    pub(super) fn update_conn_ref(&mut self, id: u64) {
        let Some(c) = self.conn(id) else { return };
        let reading = c.flags & C_READ_PAUSED == 0 && !c.http.throttled;
        let want = c.flags & C_REF != 0 && c.http.is_active(reading);
        if want == (c.flags & C_HOLDS_REF != 0) {
            return;
        }
        c.flags ^= C_HOLDS_REF;
        self.add_ref(if want { 1 } else { -1 });
    }
}
