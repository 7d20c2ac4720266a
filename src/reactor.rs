//! The reactor: one mio::Poll per JS thread, driven from Node's own libuv loop. libuv watches
//! the poll's epoll fd with one uv_poll_t; when it is readable we drain mio's events in a
//! batch (accept, read, parse, dispatch to JS), then flush every connection written during
//! the batch with one write each. A uv_timer_t drives idle timeouts and the periodic
//! headers/request timeout check; a second, zero-delay timer runs deferred work (close and
//! drain notifications, resumed reads) outside of JS frames.

use crate::binding::js::{self, Cb, JsCtx};
use crate::binding::napi;
use crate::conn::*;
use crate::listener::{Listener, Stream};
use crate::proto::date::DateCache;
use crate::proto::decode::{Decoder, Event};
use crate::proto::errors::{self, ParseError};
use crate::proto::parse::{self, Framing, HeadParser, Limits, Methods};
use crate::uv;
use mio::{Interest, Poll, Token};
use std::cell::Cell;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::time::Duration;

const LISTENER_BIT: usize = 1 << 40;
const INDEX_BITS: u32 = 22;
const SCRATCH: usize = 64 * 1024;
/// Output queued per connection above which parsing of pipelined requests pauses.
const OUTPUT_HIGH_WATER: usize = 64 * 1024;
/// Reads per connection per readiness event before yielding to other connections.
const READS_PER_EVENT: usize = 16;
/// Output buffers above this size are pooled instead of freed...
const SMALL_BUFFER: usize = 16 * 1024;
/// ...up to this size...
const POOLED_MAX: usize = 1024 * 1024;
/// ...and this many of them.
const POOL_SIZE: usize = 16;
/// Small output buffers kept for the next response (each response's bytes are assembled in
/// one before they join the connection's queue: a malloc and a free per response otherwise).
const SMALL_POOL_SIZE: usize = 64;

pub const S_HAS_CONNECTION: u32 = 1;
pub const S_HAS_TIMEOUT: u32 = 1 << 2;
pub const S_HAS_UPGRADE: u32 = 1 << 3;
pub const S_HAS_CONNECT: u32 = 1 << 4;
pub const S_NO_DELAY: u32 = 1 << 5;
pub const S_KEEP_ALIVE: u32 = 1 << 6;
/// server.httpAllowHalfOpen: after the peer's FIN, finish the pending responses first.
pub const S_HALF_OPEN: u32 = 1 << 7;
/// insecureHTTPParser: llhttp's lenient header parsing.
pub const S_LENIENT: u32 = 1 << 8;

pub struct ServerCfg {
    pub max_header_size: usize,
    pub keep_alive_timeout: u64,
    pub ka_line: Vec<u8>,
    pub timeout: u64,
    pub headers_timeout: u64,
    pub request_timeout: u64,
    pub check_interval: u64,
    pub flags: u32,
    pub keep_alive_delay: u32,
    pub max_connections: u32,
}

impl Default for ServerCfg {
    fn default() -> Self {
        // node:http's defaults (Node 20): maxHeaderSize 16 KiB, keepAliveTimeout 5 s,
        // headersTimeout 60 s, requestTimeout 300 s, connectionsCheckingInterval 30 s.
        ServerCfg {
            max_header_size: 16 * 1024,
            keep_alive_timeout: 5000,
            ka_line: b"Keep-Alive: timeout=5\r\n".to_vec(),
            timeout: 0,
            headers_timeout: 60_000,
            request_timeout: 300_000,
            check_interval: 30_000,
            flags: S_NO_DELAY,
            keep_alive_delay: 0,
            max_connections: 0,
        }
    }
}

pub struct Server {
    pub cfg: ServerCfg,
    pub listener: Option<Listener>,
    pub refd: bool,
    pub conns: u32,
    pub closed: bool,
}

#[derive(Default, Debug, Clone, Copy)]
pub struct Counters {
    pub native_to_js: u64,
    pub js_to_native: u64,
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
}

enum Deferred {
    Close(u64, i32),
    Drain(u64),
    End(u64),
    Resume(u64),
    Drained(u32),
}

#[derive(PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
enum TimerKey {
    Conn(u64),
    ServerCheck(u32),
}

struct Slot {
    gen: u32,
    conn: Option<Conn>,
    /// The connection's partial request head (parse state kept between reads).
    head: HeadParser,
}

pub struct Reactor {
    pub js: Option<JsCtx>,
    pub methods: Methods,
    pub status_lines: Vec<Option<Vec<u8>>>,
    pub date: DateCache,
    pub counters: Counters,
    pub stats: Stats,
    pub servers: Vec<Option<Server>>,
    poll: Poll,
    events: mio::Events,
    ready: Vec<(usize, bool, bool, bool)>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    scratch: Vec<u8>,
    dirty: Vec<u64>,
    pool: Vec<Vec<u8>>,
    small_pool: Vec<Vec<u8>>,
    deferred: VecDeque<Deferred>,
    /// Connections that had more to read when they yielded; resumed on the next loop turn.
    yielded: Vec<u64>,
    timers: BinaryHeap<std::cmp::Reverse<(u64, TimerKey)>>,
    timer_armed_at: u64,
    uv_loop: *mut uv::uv_loop_t,
    poll_handle: *mut uv::uv_handle_t,
    timer_handle: *mut uv::uv_handle_t,
    kick_handle: *mut uv::uv_handle_t,
    kick_armed: bool,
    in_kick: bool,
    idle_handle: *mut uv::uv_handle_t,
    refs: usize,
    handle_refd: bool,
    pub in_batch: bool,
    pub now: u64,
}

thread_local! {
    static REACTOR: Cell<*mut Reactor> = const { Cell::new(std::ptr::null_mut()) };
}

/// Runs `f` with this thread's reactor. The borrow ends with `f`: never call JS inside it
/// (JS may call back into the reactor).
pub fn with<T>(f: impl FnOnce(&mut Reactor) -> T) -> Option<T> {
    let p = REACTOR.with(|c| c.get());
    if p.is_null() {
        return None;
    }
    // SAFETY: the reactor lives from `install` until `teardown` on this thread only, and
    // callers keep the borrow inside `f`, which never calls into JS, so no two mutable
    // borrows are live at once.
    Some(f(unsafe { &mut *p }))
}

pub fn conn_id(index: u32, gen: u32) -> u64 {
    ((gen as u64) << INDEX_BITS) | index as u64
}

fn split_id(id: u64) -> (usize, u32) {
    (
        (id & ((1 << INDEX_BITS) - 1)) as usize,
        (id >> INDEX_BITS) as u32,
    )
}

impl Reactor {
    /// The connection and its head parser.
    fn conn_head(&mut self, id: u64) -> Option<(&mut Conn, &mut HeadParser)> {
        let (i, gen) = split_id(id);
        let slot = self.slots.get_mut(i)?;
        if slot.gen != gen {
            return None;
        }
        Some((slot.conn.as_mut()?, &mut slot.head))
    }

    /// After parsing stopped for more bytes: drops what the head parser skipped from the
    /// connection's buffer (a no-op unless a head is partially parsed).
    fn compact_input(&mut self, id: u64) {
        if let Some((c, head)) = self.conn_head(id) {
            if c.body.is_none() && c.error.is_none() && c.flags & C_UPGRADED == 0 {
                head.compact(&mut c.rbuf);
            }
        }
    }

    pub fn conn(&mut self, id: u64) -> Option<&mut Conn> {
        let (i, gen) = split_id(id);
        let slot = self.slots.get_mut(i)?;
        if slot.gen != gen {
            return None;
        }
        slot.conn.as_mut()
    }

    pub fn server(&mut self, sid: u32) -> Option<&mut Server> {
        self.servers.get_mut(sid as usize).and_then(|s| s.as_mut())
    }

    /// Makes the cached Date line current: read once per event batch, and on every call
    /// made outside one (a response sent from a timer must not carry an old batch's date).
    pub fn refresh_date(&mut self) {
        if !self.in_batch {
            self.date.expire();
        }
        self.date.refresh();
    }

    /// An output buffer with room for `want` bytes, reusing a pooled one for large writes.
    pub fn out_buffer(&mut self, want: usize) -> Vec<u8> {
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

    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        let cap = buf.capacity();
        if cap > SMALL_BUFFER && cap <= POOLED_MAX && self.pool.len() < POOL_SIZE {
            buf.clear();
            self.pool.push(buf);
        } else if cap > 0 && cap <= SMALL_BUFFER && self.small_pool.len() < SMALL_POOL_SIZE {
            buf.clear();
            self.small_pool.push(buf);
        }
    }

    pub fn status_line(&self, code: u16) -> Option<&[u8]> {
        self.status_lines
            .get(code as usize)
            .and_then(|s| s.as_deref())
    }

    fn update_ref(&mut self) {
        let want = self.refs > 0;
        if want != self.handle_refd {
            self.handle_refd = want;
            // SAFETY: poll_handle is an initialized, open uv_poll_t of this thread's loop.
            unsafe {
                if want {
                    uv::uv_ref(self.poll_handle)
                } else {
                    uv::uv_unref(self.poll_handle)
                }
            }
        }
    }

    pub fn add_ref(&mut self, delta: isize) {
        self.refs = (self.refs as isize + delta).max(0) as usize;
        self.update_ref();
    }

    fn kick(&mut self) {
        if !self.kick_armed {
            self.kick_armed = true;
            // A zero timer armed from its own callback would run again in the same timers
            // phase; from there, wait a millisecond so the loop turns.
            let delay = if self.in_kick { 1 } else { 0 };
            // SAFETY: kick_handle is an initialized uv_timer_t of this thread's loop.
            unsafe { uv::uv_timer_start(self.kick_handle, on_kick, delay, 0) };
        }
    }

    fn start_idle(&mut self) {
        // SAFETY: idle_handle is an initialized uv_idle_t of this thread's loop; starting
        // an active one is a no-op.
        unsafe { uv::uv_idle_start(self.idle_handle, on_idle) };
    }

    fn defer(&mut self, d: Deferred) {
        self.deferred.push_back(d);
        if !self.in_batch {
            self.kick();
        }
    }

    /// Called after bytes were queued on connection `id`: inside a batch they go out with
    /// the batch's flush; outside one (a timer, a promise) they go out now.
    pub fn after_write(&mut self, id: u64) {
        if self.in_batch {
            if let Some(c) = self.conn(id) {
                if c.flags & C_DIRTY == 0 {
                    c.flags |= C_DIRTY;
                    self.dirty.push(id);
                }
            }
        } else {
            self.flush(id);
        }
    }

    /// Sends `head` + `body` + `tail` of the active response `seq` with one writev when
    /// nothing is queued before them, so a large body goes to the kernel from the caller's
    /// memory instead of being copied into the output buffer first. What the kernel does not
    /// take stays where it is: `keep()` gives what keeps `body` alive until it is written
    /// (without it, the rest is copied). Returns None (nothing written) when the bytes must
    /// take the queued path.
    ///
    /// # Safety
    /// `body` must stay valid and unmoved for as long as the value `keep()` returns lives.
    pub unsafe fn write_direct(
        &mut self,
        id: u64,
        seq: u32,
        head: &[u8],
        body: &[u8],
        tail: &[u8],
        keep: impl FnOnce() -> Option<Box<dyn std::any::Any>>,
    ) -> Option<usize> {
        let now = self.now;
        let c = self.conn(id)?;
        // A connection already marked for this batch's flush may still have nothing queued
        // (its previous response went out directly): what matters is that nothing waits.
        if c.flags & (C_WRITE_SHUT | C_WAIT_WRITABLE) != 0
            || !c.out.is_flushed()
            || c.out.active != seq
            || c.out.close_after
        {
            return None;
        }
        let total = head.len() + body.len() + tail.len();
        // Errors and a full socket: the queued path writes (and reports) as always.
        let n = c
            .stream
            .write_vectored(&[
                std::io::IoSlice::new(head),
                std::io::IoSlice::new(body),
                std::io::IoSlice::new(tail),
            ])
            .unwrap_or_default();
        c.bytes_written += n as u64;
        if n > 0 {
            c.last_active = now;
        }
        c.out.started = true;
        self.counters.write_calls += 1;
        if n == total {
            return Some(0);
        }
        let in_body = n >= head.len() && n < head.len() + body.len();
        let keep = if in_body { keep() } else { None };
        let c = self.conn(id)?;
        match keep {
            Some(keep) => {
                // SAFETY: the caller keeps `body` alive and unmoved while `keep` lives.
                c.out.pinned = Some(unsafe {
                    Pinned::new(
                        body.as_ptr(),
                        body.len(),
                        n - head.len(),
                        tail.to_vec(),
                        keep,
                    )
                });
            }
            None => {
                let rest = c.out.target(seq)?;
                let mut skip = n;
                for part in [head, body, tail] {
                    let from = skip.min(part.len());
                    rest.extend_from_slice(&part[from..]);
                    skip -= from;
                }
            }
        }
        Some(total - n)
    }

    /// Writes what the kernel takes; arranges the rest for the next WRITABLE edge.
    pub fn flush(&mut self, id: u64) {
        let now = self.now;
        let Some(c) = self.conn(id) else { return };
        c.flags &= !C_DIRTY;
        c.out.tentative = None;
        let mut error = 0;
        let mut calls = 0;
        let mut blocked = false;
        while !c.out.is_flushed() {
            calls += 1;
            let written = if c.out.pinned.is_some() {
                c.stream.write_vectored(&c.out.slices())
            } else {
                c.stream.write(c.out.unsent())
            };
            match written {
                Ok(0) => break,
                Ok(n) => {
                    c.out.consume(n);
                    c.bytes_written += n as u64;
                    c.last_active = now;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    c.flags |= C_WAIT_WRITABLE;
                    blocked = true;
                    break;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    error = -e.raw_os_error().unwrap_or(libc::EPIPE);
                    break;
                }
            }
        }
        // A written-out connection keeps no output memory; large buffers go back to a small
        // pool so the next large response does not pay for a fresh allocation.
        let spare = if !blocked && c.out.is_flushed() && c.out.buf.capacity() > 0 {
            Some(std::mem::take(&mut c.out.buf))
        } else {
            None
        };
        self.counters.write_calls += calls;
        if let Some(buf) = spare {
            self.recycle(buf);
        }
        if blocked {
            return;
        }
        if error != 0 {
            self.close_conn(id, error);
            return;
        }
        let Some(c) = self.conn(id) else { return };
        c.flags &= !C_WAIT_WRITABLE;
        let eof = c.flags & C_PEER_EOF != 0;
        let mut drained = false;
        if c.flags & C_WANT_DRAIN != 0 {
            c.flags &= !C_WANT_DRAIN;
            drained = true;
        }
        let resume = c.flags & C_THROTTLED != 0;
        if resume {
            c.flags &= !C_THROTTLED;
        }
        let close_after = c.out.close_after;
        let end = c.flags & C_END_AFTER_FLUSH != 0;
        let peer_eof = c.flags & C_PEER_EOF != 0;
        if close_after || end {
            if c.flags & C_WRITE_SHUT == 0 {
                c.flags |= C_WRITE_SHUT;
                c.stream.shutdown_write();
            }
            // node:http destroys the socket once a `Connection: close` response is written
            // (destroySoon); after a plain end() it waits for the peer's FIN.
            if close_after || peer_eof {
                self.close_conn(id, 0);
                return;
            }
        }
        if drained {
            self.defer(Deferred::Drain(id));
        }
        if resume {
            self.defer(Deferred::Resume(id));
        }
        if eof {
            self.update_conn_ref(id);
        }
    }

    /// Closes the socket now. JS hears about it (onClose) asynchronously, like net.Socket's
    /// 'close' event, if it has any object for this connection.
    pub fn close_conn(&mut self, id: u64, errno: i32) {
        let (i, gen) = split_id(id);
        let Some(slot) = self.slots.get_mut(i) else {
            return;
        };
        if slot.gen != gen {
            return;
        }
        let Some(mut c) = slot.conn.take() else {
            return;
        };
        slot.gen = slot.gen.wrapping_add(1);
        if errno == 0 {
            // What JS already handed over was, for node, already in the kernel: send what the
            // socket takes now instead of dropping it.
            while c.out.pinned.is_some() {
                let [body, tail, _] = c.out.slices();
                match c.stream.write_vectored(&[body, tail]) {
                    Ok(n) if n > 0 => c.out.consume(n),
                    _ => break,
                }
            }
            let limit = c.out.tentative.unwrap_or(c.out.buf.len());
            while c.out.pinned.is_none() && c.out.pos < limit {
                match c.stream.write(&c.out.buf[c.out.pos..limit]) {
                    Ok(n) if n > 0 => c.out.pos += n,
                    _ => break,
                }
            }
        }
        self.free.push(i as u32);
        let _ = self.poll.registry().deregister(&mut c.stream);
        let notify = c.flags & C_JS_WATCH != 0 || c.inflight > 0 || c.flags & C_UPGRADED != 0;
        if c.flags & C_HOLDS_REF != 0 {
            self.add_ref(-1);
        }
        let sid = c.server;
        drop(c);
        if notify {
            self.defer(Deferred::Close(id, errno));
        }
        if let Some(s) = self.server(sid) {
            s.conns = s.conns.saturating_sub(1);
            if s.closed && s.conns == 0 {
                self.defer(Deferred::Drained(sid));
            }
        }
    }

    /// Sets the idle timeout of a connection (socket.setTimeout); 0 disables it.
    pub fn set_timeout(&mut self, id: u64, ms: u64) {
        let now = self.now_ms();
        let Some(c) = self.conn(id) else { return };
        c.timeout_ms = ms;
        c.last_active = now;
        if ms == 0 {
            return;
        }
        let deadline = now + ms;
        if c.timer_at == 0 || deadline < c.timer_at {
            c.timer_at = deadline;
            self.push_timer(deadline, TimerKey::Conn(id));
        }
    }

    /// Restarts the idle timer after activity, when it fired or was never armed.
    fn touch(&mut self, id: u64) {
        let now = self.now;
        let Some(c) = self.conn(id) else { return };
        c.last_active = now;
        if c.timeout_ms > 0 && c.timer_at == 0 {
            let deadline = now + c.timeout_ms;
            c.timer_at = deadline;
            self.push_timer(deadline, TimerKey::Conn(id));
        }
    }

    fn push_timer(&mut self, deadline: u64, key: TimerKey) {
        self.timers.push(std::cmp::Reverse((deadline, key)));
        if self.timer_armed_at == 0 || deadline < self.timer_armed_at {
            self.arm_timer(deadline);
        }
    }

    fn arm_timer(&mut self, deadline: u64) {
        self.timer_armed_at = deadline;
        let now = self.now_ms();
        // SAFETY: timer_handle is an initialized uv_timer_t of this thread's loop.
        unsafe { uv::uv_timer_start(self.timer_handle, on_timer, deadline.saturating_sub(now), 0) };
    }

    pub fn now_ms(&mut self) -> u64 {
        // SAFETY: uv_loop is this thread's live loop.
        self.now = unsafe { uv::uv_now(self.uv_loop) };
        self.now
    }

    pub fn start_server_checks(&mut self, sid: u32) {
        let now = self.now_ms();
        let Some(s) = self.server(sid) else { return };
        let every = s.cfg.check_interval;
        if every > 0 && (s.cfg.headers_timeout > 0 || s.cfg.request_timeout > 0) {
            self.push_timer(now + every, TimerKey::ServerCheck(sid));
        }
    }

    pub fn register_listener(&mut self, sid: u32, mut l: Listener) -> std::io::Result<()> {
        self.poll.registry().register(
            &mut l,
            Token(LISTENER_BIT | sid as usize),
            Interest::READABLE,
        )?;
        if let Some(s) = self.server(sid) {
            s.listener = Some(l);
            s.closed = false;
            if s.refd {
                self.add_ref(1);
            }
        }
        self.start_server_checks(sid);
        Ok(())
    }

    /// Stops listening. Returns the number of connections still open.
    pub fn close_listener(&mut self, sid: u32) -> u32 {
        let Some(s) = self.server(sid) else { return 0 };
        s.closed = true;
        let had = s.listener.take();
        let refd = s.refd;
        let conns = s.conns;
        if let Some(mut l) = had {
            let _ = self.poll.registry().deregister(&mut l);
            if refd {
                self.add_ref(-1);
            }
        }
        conns
    }

    pub fn set_server_ref(&mut self, sid: u32, on: bool) {
        let Some(s) = self.server(sid) else { return };
        if s.refd == on {
            return;
        }
        s.refd = on;
        let listening = s.listener.is_some();
        if listening {
            self.add_ref(if on { 1 } else { -1 });
        }
    }

    pub fn set_conn_ref(&mut self, id: u64, on: bool) {
        let Some(c) = self.conn(id) else { return };
        if on {
            c.flags |= C_REF
        } else {
            c.flags &= !C_REF
        }
        self.update_conn_ref(id);
    }

    fn update_conn_ref_after_eof(&mut self, id: u64) -> Option<()> {
        self.conn(id)?.flags |= C_PEER_EOF;
        self.update_conn_ref(id);
        Some(())
    }

    /// Like a libuv handle, a connection keeps the loop alive only while it is ref'd and
    /// active: still reading (no FIN from the peer yet) or with output to write.
    fn update_conn_ref(&mut self, id: u64) {
        let Some(c) = self.conn(id) else { return };
        let active = c.flags & C_PEER_EOF == 0 || !c.out.is_flushed();
        let want = c.flags & C_REF != 0 && active;
        if want == (c.flags & C_HOLDS_REF != 0) {
            return;
        }
        c.flags ^= C_HOLDS_REF;
        self.add_ref(if want { 1 } else { -1 });
    }

    /// Connection ids of a server, optionally only the idle ones (no request in flight).
    pub fn server_conns(&self, sid: u32, idle_only: bool) -> Vec<u64> {
        let mut v = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            if let Some(c) = &s.conn {
                if c.server == sid
                    && (!idle_only
                        || (c.inflight == 0 && c.req_start == 0 && c.flags & C_UPGRADED == 0))
                {
                    v.push(conn_id(i as u32, s.gen));
                }
            }
        }
        v
    }

    /// Input that did not come from the socket (socket.push in JS).
    pub fn inject(&mut self, id: u64, bytes: &[u8]) {
        let Some(c) = self.conn(id) else { return };
        c.rbuf.extend_from_slice(bytes);
        self.defer(Deferred::Resume(id));
    }

    /// JS paused or resumed reading (req.pause / socket.pause).
    pub fn set_paused(&mut self, id: u64, paused: bool) {
        let Some(c) = self.conn(id) else { return };
        if paused {
            c.flags |= C_READ_PAUSED;
        } else if c.flags & C_READ_PAUSED != 0 {
            c.flags &= !C_READ_PAUSED;
            self.defer(Deferred::Resume(id));
        }
    }

    /// The response to request `seq` finished (its bytes are queued).
    pub fn response_done(&mut self, id: u64, seq: u32, close: bool) {
        let Some(c) = self.conn(id) else { return };
        let completed = c.out.finish(seq, close);
        if completed == 0 {
            return;
        }
        c.inflight = c.inflight.saturating_sub(completed);
        if c.out.close_after {
            // No more requests are served; llhttp still reports bytes after a request that
            // asked to close (next_action).
            c.flags |= C_NO_MORE_REQUESTS;
        }
        // The rest of the request body still goes to JS: the app may read it after
        // responding, and node's req._dump() decides when it is dropped.
        let idle = c.inflight == 0;
        let peer_eof = c.flags & C_PEER_EOF != 0;
        let throttled = c.flags & C_THROTTLED != 0;
        let sid = c.server;
        if idle && peer_eof {
            c.flags |= C_END_AFTER_FLUSH;
        }
        if throttled && c.out.queued() < OUTPUT_HIGH_WATER {
            c.flags &= !C_THROTTLED;
            self.defer(Deferred::Resume(id));
        }
        if idle {
            // node:http arms the keep-alive timer when the last response finishes.
            let ka = self
                .server(sid)
                .map(|s| s.cfg.keep_alive_timeout)
                .unwrap_or(0);
            if ka > 0 {
                if let Some(c) = self.conn(id) {
                    c.flags |= C_KEEP_ALIVE_IDLE;
                }
                self.set_timeout(id, ka);
            }
        }
        self.after_write(id);
    }
}

/// Creates this thread's reactor on `env`'s loop.
// `env` is an opaque Node handle, passed through to Node only.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn install(
    env: napi::Env,
    js: JsCtx,
    methods: Methods,
    status: Vec<Option<Vec<u8>>>,
) -> std::io::Result<()> {
    if REACTOR.with(|c| !c.get().is_null()) {
        return Err(std::io::Error::other(
            "fast-http: the addon is already initialized on this thread",
        ));
    }
    let mut lp = std::ptr::null_mut();
    // SAFETY: env is the live env of the module init call.
    unsafe { napi::sys_get_uv_loop(env, &mut lp) };
    if lp.is_null() {
        return Err(std::io::Error::other("no libuv loop"));
    }
    let poll = Poll::new()?;
    let fd = poll.as_raw_fd();
    let poll_handle = uv::alloc_handle(uv::UV_POLL);
    let timer_handle = uv::alloc_handle(uv::UV_TIMER);
    let kick_handle = uv::alloc_handle(uv::UV_TIMER);
    let idle_handle = uv::alloc_handle(uv::UV_IDLE);
    // SAFETY: fresh handles initialized on this thread's loop; the timers never keep the
    // process alive (like node's unref'd socket timers), the poll handle only while a
    // listening server or an open connection is ref'd.
    unsafe {
        uv::uv_poll_init(lp, poll_handle, fd);
        uv::uv_poll_start(poll_handle, uv::UV_READABLE, on_poll);
        uv::uv_unref(poll_handle);
        uv::uv_timer_init(lp, timer_handle);
        uv::uv_unref(timer_handle);
        uv::uv_timer_init(lp, kick_handle);
        uv::uv_unref(kick_handle);
        uv::uv_idle_init(lp, idle_handle);
        uv::uv_unref(idle_handle);
    }
    let r = Box::new(Reactor {
        js: Some(js),
        methods,
        status_lines: status,
        date: DateCache::default(),
        counters: Counters::default(),
        stats: Stats::default(),
        servers: Vec::new(),
        poll,
        events: mio::Events::with_capacity(1024),
        ready: Vec::with_capacity(1024),
        slots: Vec::new(),
        free: Vec::new(),
        scratch: vec![0; SCRATCH],
        dirty: Vec::new(),
        pool: Vec::new(),
        small_pool: Vec::new(),
        deferred: VecDeque::new(),
        yielded: Vec::new(),
        timers: BinaryHeap::new(),
        timer_armed_at: 0,
        uv_loop: lp,
        poll_handle,
        timer_handle,
        kick_handle,
        kick_armed: false,
        in_kick: false,
        idle_handle,
        refs: 0,
        handle_refd: false,
        in_batch: false,
        now: 0,
    });
    REACTOR.with(|c| c.set(Box::into_raw(r)));
    Ok(())
}

/// Tears the reactor down when its env goes away (worker exit, process exit).
pub fn teardown() {
    let p = REACTOR.with(|c| c.replace(std::ptr::null_mut()));
    if p.is_null() {
        return;
    }
    // SAFETY: p came from Box::into_raw in install and was removed from the thread-local, so
    // nothing else can reach it.
    let r = unsafe { Box::from_raw(p) };
    // SAFETY: the handles are open; each is freed by its close callback.
    unsafe {
        uv::uv_close(r.poll_handle, close_poll);
        uv::uv_close(r.timer_handle, close_timer);
        uv::uv_close(r.kick_handle, close_timer);
        uv::uv_close(r.idle_handle, close_idle);
    }
    drop(r);
}

unsafe extern "C" fn close_poll(h: *mut uv::uv_handle_t) {
    // SAFETY: h was allocated by alloc_handle(UV_POLL) and is closed.
    unsafe { uv::free_handle(h, uv::UV_POLL) }
}

unsafe extern "C" fn close_idle(h: *mut uv::uv_handle_t) {
    // SAFETY: h was allocated by alloc_handle(UV_IDLE) and is closed.
    unsafe { uv::free_handle(h, uv::UV_IDLE) }
}

unsafe extern "C" fn close_timer(h: *mut uv::uv_handle_t) {
    // SAFETY: h was allocated by alloc_handle(UV_TIMER) and is closed.
    unsafe { uv::free_handle(h, uv::UV_TIMER) }
}

unsafe extern "C" fn on_poll(_h: *mut uv::uv_handle_t, _status: i32, _events: i32) {
    let _ = std::panic::catch_unwind(run_batch);
}

unsafe extern "C" fn on_timer(_h: *mut uv::uv_handle_t) {
    let _ = std::panic::catch_unwind(run_timers);
}

unsafe extern "C" fn on_kick(_h: *mut uv::uv_handle_t) {
    let _ = std::panic::catch_unwind(|| {
        with(|r| {
            r.kick_armed = false;
            r.in_kick = true;
        });
        batch(|| {});
        with(|r| r.in_kick = false);
    });
}

/// Idle phase: connections that yielded with more to read. An active idle handle also
/// keeps libuv from blocking in poll, which a yielded connection needs (its data will not
/// produce another readiness edge).
unsafe extern "C" fn on_idle(_h: *mut uv::uv_handle_t) {
    let _ = std::panic::catch_unwind(|| {
        let yielded = with(|r| {
            // SAFETY: idle_handle is this thread's initialized uv_idle_t.
            unsafe { uv::uv_idle_stop(r.idle_handle) };
            std::mem::take(&mut r.yielded)
        })
        .unwrap_or_default();
        batch(|| {
            for id in yielded {
                read_conn(id, true);
            }
        });
    });
}

/// Runs `f` as a batch: writes are corked until the end, then flushed; deferred
/// notifications run last.
fn batch(f: impl FnOnce()) {
    let nested = with(|r| {
        let nested = r.in_batch;
        r.in_batch = true;
        r.now_ms();
        if !nested {
            r.date.expire();
        }
        nested
    });
    if nested.is_none() {
        return;
    }
    f();
    if nested == Some(true) {
        return;
    }
    for _ in 0..64 {
        let dirty = with(|r| std::mem::take(&mut r.dirty)).unwrap_or_default();
        for id in &dirty {
            with(|r| r.flush(*id));
        }
        with(|r| {
            if r.dirty.is_empty() {
                r.dirty = dirty;
                r.dirty.clear();
            }
        });
        let more = run_deferred();
        let dirty_left = with(|r| !r.dirty.is_empty()).unwrap_or(false);
        if !more && !dirty_left {
            break;
        }
    }
    with(|r| {
        r.in_batch = false;
        if !r.deferred.is_empty() || !r.dirty.is_empty() {
            r.kick();
        }
    });
}

fn run_batch() {
    batch(|| {
        for _ in 0..4 {
            let ready = with(|r| {
                let mut ready = std::mem::take(&mut r.ready);
                ready.clear();
                if r.poll.poll(&mut r.events, Some(Duration::ZERO)).is_ok() {
                    for e in r.events.iter() {
                        ready.push((
                            e.token().0,
                            e.is_readable() || e.is_read_closed() || e.is_error(),
                            e.is_writable(),
                            e.is_read_closed() || e.is_error(),
                        ));
                    }
                }
                ready
            })
            .unwrap_or_default();
            if ready.is_empty() {
                with(|r| r.ready = ready);
                break;
            }
            for &(token, readable, writable, closing) in &ready {
                if token & LISTENER_BIT != 0 {
                    accept_all((token & !LISTENER_BIT) as u32);
                    continue;
                }
                let Some(id) =
                    with(|r| r.slots.get(token).map(|s| conn_id(token as u32, s.gen))).flatten()
                else {
                    continue;
                };
                if writable {
                    let waiting = with(|r| r.conn(id).map(|c| c.flags & C_WAIT_WRITABLE != 0))
                        .flatten()
                        .unwrap_or(false);
                    if waiting {
                        with(|r| r.flush(id));
                    }
                }
                if readable {
                    read_conn(id, closing);
                }
            }
            with(|r| r.ready = ready);
        }
    });
}

fn accept_all(sid: u32) {
    loop {
        let accepted = with(|r| {
            let s = r.server(sid)?;
            let l = s.listener.as_ref()?;
            Some(l.accept())
        })
        .flatten();
        let stream = match accepted {
            Some(Ok(s)) => s,
            Some(Err(e)) if e.kind() == ErrorKind::Interrupted => continue,
            _ => return,
        };
        let admitted = with(|r| admit(r, sid, stream)).flatten();
        let Some((id, tell_js)) = admitted else {
            continue;
        };
        if tell_js {
            js::call(Cb::Connection, |env| {
                [napi::u32v(env, sid), napi::f64v(env, id as f64)]
            });
        }
    }
}

/// Takes a new connection into the slab. Returns its id and whether JS wants a
/// 'connection' event.
fn admit(r: &mut Reactor, sid: u32, mut stream: Stream) -> Option<(u64, bool)> {
    let (flags, delay, timeout, max) = {
        let s = r.server(sid)?;
        (
            s.cfg.flags,
            s.cfg.keep_alive_delay,
            s.cfg.timeout,
            s.cfg.max_connections,
        )
    };
    if max > 0 && r.server(sid).map(|s| s.conns).unwrap_or(0) >= max {
        return None;
    }
    stream.set_nodelay(flags & S_NO_DELAY != 0);
    if flags & S_KEEP_ALIVE != 0 {
        stream.set_keepalive(true, delay);
    }
    let index = match r.free.pop() {
        Some(i) => i as usize,
        None => {
            r.slots.push(Slot {
                gen: 1,
                conn: None,
                head: HeadParser::default(),
            });
            r.slots.len() - 1
        }
    };
    if index >= (1 << INDEX_BITS) {
        return None;
    }
    if r.poll
        .registry()
        .register(
            &mut stream,
            Token(index),
            Interest::READABLE | Interest::WRITABLE,
        )
        .is_err()
    {
        r.free.push(index as u32);
        return None;
    }
    let gen = r.slots[index].gen;
    let now = r.now;
    r.slots[index].conn = Some(Conn::new(gen, sid, stream, now));
    r.slots[index].head.reset();
    let id = conn_id(index as u32, gen);
    r.add_ref(1);
    r.stats.connections_accepted += 1;
    if let Some(s) = r.server(sid) {
        s.conns += 1;
    }
    if timeout > 0 {
        r.set_timeout(id, timeout);
    }
    Some((id, flags & S_HAS_CONNECTION != 0))
}

enum ReadStep {
    /// Fresh bytes in the scratch buffer (which travels with them while they are parsed).
    Scratch(Vec<u8>, usize),
    /// Bytes were appended to the connection's own buffer.
    Buffered(usize),
    Again,
    Eof,
    Error(i32),
    Stop,
}

fn read_once(r: &mut Reactor, id: u64) -> ReadStep {
    let now = r.now;
    let mut scratch = std::mem::take(&mut r.scratch);
    if scratch.len() < SCRATCH {
        scratch.resize(SCRATCH, 0);
    }
    if matches!(r.conn(id), Some(c) if c.flags & (C_READ_PAUSED | C_THROTTLED) == 0) {
        r.counters.read_calls += 1;
    }
    let step = match r.conn(id) {
        None => ReadStep::Stop,
        Some(c) if c.flags & (C_READ_PAUSED | C_THROTTLED) != 0 => {
            c.flags |= C_READ_PENDING;
            ReadStep::Stop
        }
        Some(c) => {
            c.flags &= !C_READ_PENDING;
            match c.stream.read(&mut scratch) {
                Ok(0) => ReadStep::Eof,
                Ok(n) => {
                    c.bytes_read += n as u64;
                    c.last_active = now;
                    if c.flags & C_DISCARD_INPUT != 0 && c.flags & C_UPGRADED == 0 {
                        ReadStep::Again
                    } else if c.rbuf.is_empty() {
                        return ReadStep::Scratch(scratch, n);
                    } else {
                        c.rbuf.extend_from_slice(&scratch[..n]);
                        ReadStep::Buffered(n)
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => ReadStep::Stop,
                Err(e) if e.kind() == ErrorKind::Interrupted => ReadStep::Again,
                Err(e) => ReadStep::Error(-e.raw_os_error().unwrap_or(libc::ECONNRESET)),
            }
        }
    };
    r.scratch = scratch;
    step
}

/// Reads what the socket has (the registration is edge-triggered), parsing as it goes.
///
/// A read shorter than the buffer emptied the receive queue, and data or a FIN arriving
/// after this readiness event was reported raises a new edge, so reading stops there
/// instead of paying a second recv for EAGAIN (one recv per request instead of two). With
/// `drain` (the event already reported the peer's FIN or an error, or nothing says the
/// queue was seen empty: a yielded or resumed read) it reads until the socket would block.
pub fn read_conn(id: u64, drain: bool) {
    let _scope = js::scope();
    process_buffered(id);
    for _ in 0..READS_PER_EVENT {
        let step = with(|r| read_once(r, id)).unwrap_or(ReadStep::Stop);
        let short = match step {
            ReadStep::Scratch(_, n) | ReadStep::Buffered(n) => n < SCRATCH,
            _ => false,
        };
        match step {
            ReadStep::Scratch(buf, n) => {
                with(|r| r.touch(id));
                let tapping = is_tapping(id);
                let used = process(id, &buf[..n]);
                if tapping {
                    tap(id, &buf[..n]);
                }
                with(|r| {
                    if let Some(c) = r.conn(id) {
                        if used < n {
                            c.rbuf.extend_from_slice(&buf[used..n]);
                        }
                    }
                    r.compact_input(id);
                    r.scratch = buf;
                });
            }
            ReadStep::Buffered(n) => {
                with(|r| r.touch(id));
                let tapped = with(|r| {
                    r.conn(id)
                        .filter(|c| c.flags & (C_TAP | C_UPGRADED) == C_TAP)
                        .map(|c| c.rbuf[c.rbuf.len() - n..].to_vec())
                })
                .flatten();
                process_buffered(id);
                if let Some(bytes) = tapped {
                    tap(id, &bytes);
                }
            }
            ReadStep::Again => {}
            ReadStep::Eof => {
                on_eof(id);
                return;
            }
            ReadStep::Error(e) => {
                with(|r| r.close_conn(id, e));
                return;
            }
            ReadStep::Stop => return,
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
        r.start_idle();
    });
}

fn is_tapping(id: u64) -> bool {
    with(|r| r.conn(id).map(|c| c.flags & (C_TAP | C_UPGRADED) == C_TAP))
        .flatten()
        .unwrap_or(false)
}

/// Hands bytes read while the app listens for the socket's 'data' to JS as well (node's
/// socket emits 'data' to every listener, the parser being only the first), even when
/// parsing them closed the connection.
fn tap(id: u64, bytes: &[u8]) {
    js::call(Cb::Data, |env| {
        [napi::f64v(env, id as f64), napi::buffer_copy(env, bytes)]
    });
}

/// Parses input kept in the connection's buffer (a partial message, or data that arrived
/// while the request was paused).
fn process_buffered(id: u64) {
    let Some(input) = with(|r| r.conn(id).map(|c| std::mem::take(&mut c.rbuf))).flatten() else {
        return;
    };
    if input.is_empty() {
        return;
    }
    let used = process(id, &input);
    with(|r| {
        if let Some(c) = r.conn(id) {
            let mut rest = input;
            let _ = rest.split_to(used.min(rest.len()));
            if !c.rbuf.is_empty() {
                rest.extend_from_slice(&c.rbuf);
            }
            c.rbuf = if rest.is_empty() {
                bytes::BytesMut::new()
            } else {
                rest
            };
        }
        r.compact_input(id);
    });
}

struct Dispatch {
    sid: u32,
    seq: u32,
    method: u16,
    url: (usize, usize),
    headers: (usize, usize),
    flags: u32,
    body: Option<(usize, usize)>,
}

enum Action {
    Stop,
    Consume(usize),
    Dispatch(usize, Dispatch),
    Body(usize, u32, (usize, usize)),
    BodyEnd(usize, u32, Option<Vec<u8>>),
    Raw(usize),
    Error(ParseError),
    CloseNow,
}

/// Decides what the next bytes of `buf` are, updating the connection's parse state. Never
/// calls JS.
fn next_action(r: &mut Reactor, id: u64, buf: &[u8]) -> Action {
    let now = r.now;
    let Some(sid) = r.conn(id).map(|c| c.server) else {
        return Action::Stop;
    };
    let limits = r
        .servers
        .get(sid as usize)
        .and_then(|s| s.as_ref())
        .map(|s| Limits::new(s.cfg.max_header_size, s.cfg.flags & S_LENIENT != 0))
        .unwrap_or_default();
    let Some(c) = r.conn(id) else {
        return Action::Stop;
    };
    if c.flags & C_UPGRADED != 0 {
        if buf.is_empty() || c.flags & C_READ_PAUSED != 0 {
            return Action::Stop;
        }
        return Action::Raw(buf.len());
    }
    if c.flags & C_DISCARD_INPUT != 0 {
        return if buf.is_empty() {
            Action::Stop
        } else {
            Action::Consume(buf.len())
        };
    }
    if let Some(e) = c.error {
        return if buf.is_empty() {
            Action::Stop
        } else {
            Action::Error(e)
        };
    }
    if c.flags & C_READ_PAUSED != 0 {
        c.flags |= C_READ_PENDING;
        return Action::Stop;
    }
    if let Some(dec) = c.body.as_mut() {
        let seq = c.body_seq;
        return match dec.step(buf, &limits) {
            Err(e) => Action::Error(e),
            Ok((n, Event::Data(a, b))) => Action::Body(n, seq, (a, b)),
            Ok((n, Event::Done(done))) => {
                c.body = None;
                c.req_start = 0;
                c.headers_done = false;
                if done.close {
                    // `Connection: close` in the trailers: llhttp reads nothing more as
                    // HTTP (bytes after the message fail with HPE_CLOSED_CONNECTION).
                    c.flags |= C_NO_MORE_REQUESTS | C_CLOSE_REQUESTED;
                }
                let n = if done.upgrade { buf.len() } else { n };
                Action::BodyEnd(n, seq, done.trailers)
            }
            Ok((0, Event::NeedMore)) => Action::Stop,
            Ok((n, Event::NeedMore)) => Action::Consume(n),
        };
    }
    if buf.is_empty() {
        return Action::Stop;
    }
    if c.flags & C_NO_MORE_REQUESTS != 0 {
        // llhttp: bytes after a request that closes the connection are an error (but CR
        // and LF, which it skips).
        if c.flags & C_CLOSE_REQUESTED != 0 && c.flags & C_DISCARD_INPUT == 0 {
            if let Err(e) = parse::after_close(buf) {
                return Action::Error(e);
            }
        }
        return Action::Consume(buf.len());
    }
    if c.out.queued() > OUTPUT_HIGH_WATER {
        c.flags |= C_THROTTLED;
        return Action::Stop;
    }
    if c.req_start == 0 {
        c.req_start = now.max(1);
    }
    let keep_alive_idle = c.flags & C_KEEP_ALIVE_IDLE != 0;
    let Some(s) = r.servers.get(sid as usize).and_then(|s| s.as_ref()) else {
        return Action::Stop;
    };
    let (sflags, server_timeout) = (s.cfg.flags, s.cfg.timeout);
    let (i, _) = split_id(id);
    let Some(slot) = r.slots.get_mut(i) else {
        return Action::Stop;
    };
    let head = match slot.head.parse(buf, &r.methods, &limits) {
        Ok(None) => return Action::Stop,
        Err(e) => return Action::Error(e),
        Ok(Some(h)) => h,
    };
    if keep_alive_idle {
        // A new request: the keep-alive timer gives way to server.timeout again.
        if let Some(c) = r.conn(id) {
            c.flags &= !C_KEEP_ALIVE_IDLE;
        }
        r.set_timeout(id, server_timeout);
    }
    let Some(c) = r.conn(id) else {
        return Action::Stop;
    };
    let mut flags = head.flags;
    let connect = flags & parse::F_CONNECT != 0;
    if connect && sflags & S_HAS_CONNECT == 0 {
        // node:http destroys a CONNECT connection nobody listens for.
        return Action::CloseNow;
    }
    let upgrade = flags & parse::F_UPGRADE != 0 && (connect || sflags & S_HAS_UPGRADE != 0);
    // llhttp stops after an upgrade request (its head, or its body) even when nobody listens
    // for 'upgrade': node serves the request and drops the rest of that read.
    let paused_upgrade = flags & parse::F_UPGRADE != 0 && !upgrade;
    if !upgrade {
        flags &= !parse::F_UPGRADE;
    }
    let seq = c.next_seq;
    c.next_seq += 1;
    c.inflight += 1;
    c.requests += 1;
    c.headers_done = true;
    let mut consumed = head.head_len;
    let mut body = None;
    if upgrade {
        // The rest of the input is the upgraded protocol's first bytes (`head`).
        body = Some((head.head_len, buf.len()));
        consumed = buf.len();
        c.flags |= C_UPGRADED | C_NO_MORE_REQUESTS;
        c.req_start = 0;
    } else {
        match head.framing {
            Framing::None => {}
            Framing::Length(n) if (buf.len() - head.head_len) as u64 >= n => {
                let end = head.head_len + n as usize;
                body = Some((head.head_len, end));
                consumed = end;
                flags |= parse::F_BODY_DONE;
            }
            Framing::Length(n) => {
                c.body = Some(Decoder::for_length(n));
                c.body_seq = seq;
            }
            Framing::Chunked => {
                c.body = Some(Decoder::chunked(flags));
                c.body_seq = seq;
            }
        }
        if paused_upgrade {
            c.body = c.body.take().map(Decoder::of_upgrade);
        }
        if flags & parse::F_KEEP_ALIVE == 0 {
            // After a request that closes the connection nothing more is read as HTTP.
            c.flags |= C_NO_MORE_REQUESTS | C_CLOSE_REQUESTED;
        }
        if paused_upgrade && c.body.is_none() {
            consumed = buf.len();
        }
    }
    Action::Dispatch(
        consumed,
        Dispatch {
            sid,
            seq,
            method: head.method,
            url: head.url,
            headers: head.headers,
            flags,
            body,
        },
    )
}

/// Parses and dispatches what `input` holds. Returns how many bytes were used; the rest
/// stays buffered (a partial message, or the request was paused).
fn process(id: u64, input: &[u8]) -> usize {
    let mut off = 0;
    loop {
        let rest = &input[off..];
        let action = with(|r| next_action(r, id, rest)).unwrap_or(Action::Stop);
        match action {
            Action::Stop => return off,
            Action::Consume(n) => off += n,
            Action::CloseNow => {
                with(|r| r.close_conn(id, 0));
                return input.len();
            }
            Action::Error(e) => {
                client_error(id, e, rest);
                return input.len();
            }
            Action::Raw(n) => {
                off += n;
                js::call(Cb::Data, |env| {
                    [
                        napi::f64v(env, id as f64),
                        napi::buffer_copy(env, &rest[..n]),
                    ]
                });
            }
            Action::Body(n, seq, (a, b)) => {
                off += n;
                js::call(Cb::Body, |env| {
                    [
                        napi::f64v(env, id as f64),
                        napi::u32v(env, seq),
                        napi::buffer_copy(env, &rest[a..b]),
                    ]
                });
            }
            Action::BodyEnd(n, seq, t) => {
                off += n;
                js::call(Cb::BodyEnd, |env| {
                    [
                        napi::f64v(env, id as f64),
                        napi::u32v(env, seq),
                        match &t {
                            Some(t) => napi::latin1(env, t),
                            None => napi::undefined(env),
                        },
                    ]
                });
            }
            Action::Dispatch(n, d) => {
                off += n;
                let invalid_te = d.flags & parse::F_INVALID_TE != 0;
                with(|r| r.stats.requests_dispatched += 1);
                js::call(Cb::Request, |env| {
                    [
                        napi::u32v(env, d.sid),
                        napi::f64v(env, id as f64),
                        napi::u32v(env, d.seq),
                        napi::u32v(env, d.method as u32),
                        napi::latin1(env, &rest[d.url.0..d.url.1]),
                        napi::latin1(env, &rest[d.headers.0..d.headers.1]),
                        napi::u32v(env, d.flags),
                        match d.body {
                            Some((a, b)) => napi::buffer_copy(env, &rest[a..b]),
                            None => napi::undefined(env),
                        },
                    ]
                });
                if invalid_te {
                    // llhttp emits the request, then rejects a non-chunked request coding.
                    client_error(id, errors::INVALID_TE, rest);
                    return input.len();
                }
                // A request without a body (or whose body came with it) completes after its
                // 'request' event, as llhttp's on_message_complete follows on_headers_complete:
                // until then the connection is not idle (closeIdleConnections, timeouts).
                with(|r| {
                    if let Some(c) = r.conn(id) {
                        if c.body.is_none() && c.flags & C_UPGRADED == 0 {
                            c.req_start = 0;
                            c.headers_done = false;
                        }
                    }
                });
            }
        }
    }
}

/// A parse error. JS decides, as node:http's socketOnError does ('clientError' when anyone
/// listens, else node's default answer), since the server's 'clientError' emit is observable.
fn client_error(id: u64, e: ParseError, packet: &[u8]) {
    let sid = with(|r| {
        let c = r.conn(id)?;
        c.flags |= C_NO_MORE_REQUESTS;
        c.error = Some(e);
        c.body = None;
        c.req_start = 0;
        Some(c.server)
    })
    .flatten();
    if let Some(sid) = sid {
        js::call(Cb::ClientError, |env| {
            [
                napi::u32v(env, sid),
                napi::f64v(env, id as f64),
                napi::utf8(env, e.code),
                napi::utf8(env, e.reason),
                napi::buffer_copy(env, packet),
                // node reports a header overflow at the end of the chunk it was parsing.
                napi::u32v(
                    env,
                    if e.code == "HPE_HEADER_OVERFLOW" {
                        packet.len() as u32
                    } else {
                        e.at as u32
                    },
                ),
            ]
        });
    }
}

fn on_eof(id: u64) {
    let state = with(|r| {
        r.update_conn_ref_after_eof(id)?;
        let c = r.conn(id)?;
        let tell_js = c.flags & (C_JS_WATCH | C_UPGRADED) != 0;
        let upgraded = c.flags & C_UPGRADED != 0;
        let mid_request = c.flags & C_DISCARD_INPUT == 0
            && c.error.is_none()
            && (c.body.is_some() || c.rbuf.iter().any(|&b| b != b'\r' && b != b'\n'));
        let busy = c.inflight > 0;
        let sid = c.server;
        if tell_js {
            r.defer(Deferred::End(id));
        }
        let half_open = r.server(sid).map(|s| s.cfg.flags & S_HALF_OPEN != 0) == Some(true);
        Some((upgraded, mid_request, busy && half_open))
    })
    .flatten();
    let Some((upgraded, mid_request, wait)) = state else {
        return;
    };
    if wait {
        // httpAllowHalfOpen: the last pending response ends the connection (response_done).
        with(|r| {
            if let Some(c) = r.conn(id) {
                c.flags |= C_NO_MORE_REQUESTS;
            }
        });
        return;
    }
    if upgraded {
        return;
    }
    if mid_request {
        client_error(id, errors::INVALID_EOF_STATE, &[]);
        return;
    }
    // node:http (httpAllowHalfOpen false) ends its side as soon as the peer ends, whether
    // or not responses are still pending; they are aborted when the socket closes.
    with(|r| {
        if let Some(c) = r.conn(id) {
            c.flags |= C_END_AFTER_FLUSH | C_NO_MORE_REQUESTS;
        }
        r.after_write(id);
    });
}

/// Runs deferred notifications. Returns whether anything ran.
fn run_deferred() -> bool {
    let mut ran = false;
    for _ in 0..100_000 {
        let Some(d) = with(|r| r.deferred.pop_front()).flatten() else {
            break;
        };
        ran = true;
        match d {
            Deferred::Close(id, errno) => js::call(Cb::Close, |env| {
                [napi::f64v(env, id as f64), napi::i32v(env, errno)]
            }),
            Deferred::Drain(id) => js::call(Cb::Drain, |env| [napi::f64v(env, id as f64)]),
            Deferred::End(id) => js::call(Cb::End, |env| [napi::f64v(env, id as f64)]),
            Deferred::Drained(sid) => js::call(Cb::ServerDrained, |env| [napi::u32v(env, sid)]),
            Deferred::Resume(id) => {
                let go = with(|r| {
                    r.conn(id).map(|c| {
                        c.flags & (C_READ_PAUSED | C_THROTTLED) == 0
                            && (c.flags & C_READ_PENDING != 0 || !c.rbuf.is_empty())
                    })
                })
                .flatten()
                .unwrap_or(false);
                if go {
                    read_conn(id, true);
                }
            }
        }
    }
    ran
}

fn run_timers() {
    batch(|| {
        let due = with(|r| {
            let now = r.now_ms();
            r.timer_armed_at = 0;
            let mut due = Vec::new();
            while let Some(std::cmp::Reverse((at, key))) = r.timers.peek().copied() {
                if at > now {
                    break;
                }
                r.timers.pop();
                due.push((at, key));
            }
            due
        })
        .unwrap_or_default();
        for (at, key) in due {
            match key {
                TimerKey::Conn(id) => {
                    let fire = with(|r| {
                        let now = r.now;
                        let c = r.conn(id)?;
                        if c.timer_at != at {
                            return None;
                        }
                        c.timer_at = 0;
                        if c.timeout_ms == 0 {
                            return None;
                        }
                        let deadline = c.last_active + c.timeout_ms;
                        if deadline > now {
                            c.timer_at = deadline;
                            r.push_timer(deadline, TimerKey::Conn(id));
                            return None;
                        }
                        Some(())
                    })
                    .flatten();
                    if fire.is_some() {
                        fire_timeout(id);
                    }
                }
                TimerKey::ServerCheck(sid) => check_server(sid),
            }
        }
        with(|r| {
            if let Some(std::cmp::Reverse((at, _))) = r.timers.peek().copied() {
                if r.timer_armed_at == 0 || at < r.timer_armed_at {
                    r.arm_timer(at);
                }
            }
        });
    });
}

/// An idle timeout: JS decides when anyone could care ('timeout' on socket, request,
/// response or server), else the connection is destroyed as node's socketOnTimeout does.
fn fire_timeout(id: u64) {
    let to_js = with(|r| {
        let c = r.conn(id)?;
        let watched = c.flags & (C_JS_WATCH | C_UPGRADED) != 0 || c.inflight > 0;
        let sid = c.server;
        let listened = r
            .server(sid)
            .map(|s| s.cfg.flags & S_HAS_TIMEOUT != 0)
            .unwrap_or(false);
        if !watched && !listened {
            r.close_conn(id, 0);
            return None;
        }
        Some(sid)
    })
    .flatten();
    if let Some(sid) = to_js {
        js::call(Cb::Timeout, |env| {
            [napi::f64v(env, id as f64), napi::u32v(env, sid)]
        });
    }
}

/// node:http's connectionsCheckingInterval sweep: requests whose headers (headersTimeout) or
/// whole message (requestTimeout) take too long get a 408 or a 'clientError'.
fn check_server(sid: u32) {
    let expired = with(|r| {
        let now = r.now;
        let s = r.server(sid)?;
        let (ht, rt, every) = (
            s.cfg.headers_timeout,
            s.cfg.request_timeout,
            s.cfg.check_interval,
        );
        let alive = s.listener.is_some() || s.conns > 0;
        let mut expired = Vec::new();
        for (i, slot) in r.slots.iter().enumerate() {
            let Some(c) = &slot.conn else { continue };
            if c.server != sid || c.req_start == 0 || c.flags & C_DISCARD_INPUT != 0 {
                continue;
            }
            let age = now.saturating_sub(c.req_start);
            if (ht > 0 && !c.headers_done && age > ht) || (rt > 0 && age > rt) {
                expired.push(conn_id(i as u32, slot.gen));
            }
        }
        if alive && every > 0 {
            r.push_timer(now + every, TimerKey::ServerCheck(sid));
        }
        Some(expired)
    })
    .flatten();
    let Some(expired) = expired else {
        return;
    };
    for id in expired {
        with(|r| {
            if let Some(c) = r.conn(id) {
                c.flags |= C_NO_MORE_REQUESTS | C_DISCARD_INPUT;
                c.req_start = 0;
            }
        });
        js::call(Cb::ClientError, |env| {
            [
                napi::u32v(env, sid),
                napi::f64v(env, id as f64),
                napi::utf8(env, "ERR_HTTP_REQUEST_TIMEOUT"),
                napi::utf8(env, "Request timeout"),
                napi::undefined(env),
                napi::u32v(env, 0),
            ]
        });
    }
}
