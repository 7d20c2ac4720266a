//! A connection's life on the socket: accepting, reading, writing the output queue, closing.
//! The reads and writes themselves follow the readiness driver's rules (`net::readiness`).

use super::delivery::Group;
use super::events::Event;
use super::secure_setup::{self, Asks};
use super::server::{
    S_ALPN_CALLBACK, S_HAS_CLIENT_ERROR, S_HAS_CONNECTION, S_HAS_DROP, S_HAS_KEYLOG, S_KEEP_ALIVE,
    S_NO_DELAY, S_SNI_CALLBACK,
};
use super::sink::Sink;
use super::slots;
use super::state::*;
use crate::conn::out::{MAX_SLICES, SPARE_MAX};
use crate::conn::Http1;
use crate::conn::Pinned;
use crate::net::readiness::{self, Got};
use crate::net::Stream;
use mio::{Interest, Token};
use std::io::{ErrorKind, IoSlice};

/// Accepts every pending connection of server `sid`.
pub fn accept_all<S: Sink>(sid: u32) {
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
        let admitted = with(|r| r.admit(sid, stream)).flatten();
        let (id, tell_js) = match admitted {
            Some(Admit::Accepted(id, tell_js)) => (id, tell_js),
            Some(Admit::Dropped(Some((local, peer)))) => {
                let mut g = Group::<S>::open(None);
                g.batch.push(Event::Dropped { sid, local, peer });
                continue;
            }
            _ => continue,
        };
        if tell_js {
            // In a group of its own: JS may emit 'connection' from its tick queue when the
            // group ends, where a throw keeps node's source excerpt.
            let mut g = Group::<S>::open(Some(id));
            g.batch.push(Event::Connection { sid, id });
        }
    }
}

pub(super) enum ReadStep {
    /// Fresh bytes in the scratch buffer (which travels with them while they are parsed).
    Scratch(Vec<u8>, usize),
    /// Bytes were appended to the connection's own buffer.
    Buffered(usize),
    Again,
    Eof,
    Error(i32),
    Stop,
    /// The transport has an event for the TLS room (`super::secure::on_event`).
    Secure,
}

/// What became of a new connection.
pub enum Admit {
    /// Its id, and whether JS wants a 'connection' event.
    Accepted(u64, bool),
    /// Closed: the server is at maxConnections. With its (local, peer) addresses when JS
    /// listens for 'drop'.
    Dropped(Option<Addrs>),
}

pub type Addrs = (Option<std::net::SocketAddr>, Option<std::net::SocketAddr>);

impl Reactor {
    /// Takes a new connection (accepted here, or handed over by JS).
    pub fn admit(&mut self, sid: u32, mut stream: Stream) -> Option<Admit> {
        let (flags, delay, timeout, max, conns, tls, handshake_timeout) = {
            let s = self.server(sid)?;
            (
                s.cfg.flags,
                s.cfg.keep_alive_delay,
                s.cfg.timeout,
                s.cfg.max_connections,
                s.conns,
                s.tls.clone(),
                s.cfg.handshake_timeout,
            )
        };
        if max.is_some_and(|max| conns >= max) {
            // node's onconnection: at maxConnections the connection is closed, and 'drop'
            // tells who it was.
            let addrs =
                (flags & S_HAS_DROP != 0).then(|| (stream.local_addr(), stream.peer_addr()));
            return Some(Admit::Dropped(addrs));
        }
        // node's https serves a Unix-domain listener over TLS too.
        let secure = tls.is_some();
        if let Some(ctx) = tls {
            let asks = Asks {
                keylog: flags & S_HAS_KEYLOG != 0,
                sni: flags & S_SNI_CALLBACK != 0,
                alpn: flags & S_ALPN_CALLBACK != 0,
            };
            secure_setup::begin(&mut stream, &ctx, asks)?;
        }
        stream.set_nodelay(flags & S_NO_DELAY != 0);
        if flags & S_KEEP_ALIVE != 0 {
            stream.set_keepalive(true, delay);
        }
        let id = self.conns.vacant_id()?;
        let token = Token(slots::index_of(id));
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self
            .poll
            .registry()
            .register(&mut stream, token, interest)
            .is_err()
        {
            return None;
        }
        let now = self.now;
        self.conns.insert(
            id,
            Connection {
                server: sid,
                stream,
                http: Http1::new(now),
                flags: C_REF | C_HOLDS_REF,
                timeout_ms: 0,
                last_active: now,
                timer_at: 0,
                bytes_read: 0,
                bytes_written: 0,
            },
        );
        self.add_ref(1);
        self.stats.connections_accepted += 1;
        if let Some(s) = self.server(sid) {
            s.conns += 1;
        }
        if timeout > 0 {
            self.set_timeout(id, timeout);
        }
        if handshake_timeout > 0 && secure {
            self.handshake_deadline(id, handshake_timeout);
        }
        Some(Admit::Accepted(id, flags & S_HAS_CONNECTION != 0))
    }

    pub(super) fn read_once(&mut self, id: u64) -> ReadStep {
        let now = self.now;
        let mut scratch = std::mem::take(&mut self.scratch);
        if scratch.len() < SCRATCH {
            scratch.resize(SCRATCH, 0);
        }
        let step = match self.conns.get_mut(id) {
            None => ReadStep::Stop,
            Some(c) if c.flags & C_READ_PAUSED != 0 || c.http.throttled => {
                c.flags |= C_READ_PENDING;
                ReadStep::Stop
            }
            Some(c) => {
                c.flags &= !C_READ_PENDING;
                self.counters.read_calls += 1;
                match readiness::read(&mut c.stream, &mut scratch) {
                    Ok(Got::Eof) => ReadStep::Eof,
                    Ok(Got::Bytes(n)) => {
                        c.bytes_read += n as u64;
                        c.last_active = now;
                        if c.http.rbuf.is_empty() {
                            return ReadStep::Scratch(scratch, n);
                        } else {
                            c.http.rbuf.extend_from_slice(&scratch[..n]);
                            ReadStep::Buffered(n)
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        // Handshake bytes the socket did not take wait for a WRITABLE edge.
                        if readiness::wants_write(&c.stream) && c.flags & C_WAIT_WRITABLE == 0 {
                            c.flags |= C_WAIT_WRITABLE;
                        }
                        ReadStep::Stop
                    }
                    Ok(Got::Event) => ReadStep::Secure,
                    Err(e) if e.kind() == ErrorKind::Interrupted => ReadStep::Again,
                    Err(e) => ReadStep::Error(-e.raw_os_error().unwrap_or(libc::ECONNRESET)),
                }
            }
        };
        self.scratch = scratch;
        step
    }

    pub(super) fn give_back_scratch(&mut self, buf: Vec<u8>) {
        self.scratch = buf;
    }

    /// Sends `head` + `body` + `tail` of the active response `seq` with one writev when
    /// nothing is queued before them, so a large body goes to the kernel from the caller's
    /// memory instead of being copied into the output queue first. What the kernel does not
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
        let c = self.conns.get_mut(id)?;
        // A connection already marked for this batch's flush may still have nothing queued
        // (its previous response went out directly): what matters is that nothing waits.
        if c.flags & C_WAIT_WRITABLE != 0
            || c.http.writing != crate::conn::Writing::Open
            || !c.http.out.is_flushed()
            || c.http.out.active != seq
            || c.http.out.close_after
        {
            return None;
        }
        let total = head.len() + body.len() + tail.len();
        // Errors and a full socket: the queued path writes (and reports) as always.
        let parts = [IoSlice::new(head), IoSlice::new(body), IoSlice::new(tail)];
        let n = readiness::write(&mut c.stream, &parts).unwrap_or_default();
        c.bytes_written += n as u64;
        if n > 0 {
            c.last_active = now;
        }
        self.counters.write_calls += 1;
        if n == total {
            return Some(0);
        }
        let in_body = n >= head.len() && n < head.len() + body.len();
        let keep = if in_body { keep() } else { None };
        let mut rest = self.out_buffer(total - n);
        let out = &mut self.conns.get_mut(id)?.http.out;
        match keep {
            Some(keep) => {
                let from = n - head.len();
                // SAFETY: the caller keeps `body` alive and unmoved while `keep` lives.
                let p = unsafe { Pinned::new(body[from..].as_ptr(), body.len() - from, keep) };
                if out.push_pinned(p).is_ok() {
                    rest.extend_from_slice(tail);
                }
            }
            None => {
                let mut skip = n;
                for part in [head, body, tail] {
                    let from = skip.min(part.len());
                    rest.extend_from_slice(&part[from..]);
                    skip -= from;
                }
            }
        }
        if let Some(spare) = out.push(seq, rest) {
            self.recycle(spare);
        }
        Some(total - n)
    }

    /// Writes what the kernel takes; arranges the rest for the next WRITABLE edge, and acts
    /// on a written-out connection (FIN, close, drain). With `early` (a process about to die:
    /// the uncaught-exception path, the exit hook), only writes, and not the responses
    /// released in this batch (see `OutQueue::confirm`): what follows the output is decided
    /// when the batch ends.
    pub fn flush(&mut self, id: u64, early: bool) {
        let now = self.now;
        let Some(c) = self.conns.get_mut(id) else {
            return;
        };
        if !early {
            c.flags &= !C_DIRTY;
            c.http.out.confirm();
        }
        let mut error = 0;
        let mut calls = 0;
        let mut blocked = false;
        while !c.http.out.is_flushed() {
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let n = c.http.out.slices(&mut slices, early);
            if n == 0 {
                break;
            }
            calls += 1;
            match readiness::write(&mut c.stream, &slices[..n]) {
                Ok(0) => break,
                Ok(n) => {
                    c.http.out.consume(n);
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
        // TLS: the queue is written out only once the ciphertext is.
        if !blocked && error == 0 && readiness::wants_write(&c.stream) {
            match readiness::write_pending(&mut c.stream) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    c.flags |= C_WAIT_WRITABLE;
                    blocked = true;
                }
                Err(e) => error = -e.raw_os_error().unwrap_or(libc::EPIPE),
            }
        }
        // A written-out connection keeps no output memory: its buffer goes back to a pool
        // so the next response does not pay for a fresh allocation.
        // All of them: a queue with spares left is not given back to the pool (`release`).
        let spare: [_; SPARE_MAX] = std::array::from_fn(|_| c.http.out.take_spare());
        self.counters.write_calls += calls;
        for buf in spare.into_iter().flatten() {
            self.recycle(buf);
        }
        if blocked {
            // Output waiting for the kernel keeps the loop alive, as a pending write request.
            self.update_conn_ref(id);
            return;
        }
        if error != 0 {
            self.close_conn(id, error);
            return;
        }
        let Some(c) = self.conns.get_mut(id) else {
            return;
        };
        if early || !c.http.out.is_flushed() {
            return;
        }
        c.http.out.release();
        c.flags &= !C_WAIT_WRITABLE;
        let drained = c.flags & C_WANT_DRAIN != 0;
        c.flags &= !C_WANT_DRAIN;
        let resume = c.http.throttled;
        c.http.throttled = false;
        let after = c.http.flushed();
        if after.fin {
            readiness::shutdown_write(&mut c.stream);
        }
        if after.tell_js {
            self.defer(Deferred::Shutdown(id));
        }
        if after.close {
            self.close_conn(id, 0);
            return;
        }
        if drained {
            self.defer(Deferred::Drain(id));
        }
        if resume {
            self.defer(Deferred::Resume(id));
        }
        self.update_conn_ref(id);
    }

    /// Closes the socket now. JS hears about it (onClose) asynchronously, like net.Socket's
    /// 'close' event, if it has any object for this connection.
    pub fn close_conn(&mut self, id: u64, errno: i32) {
        let Some(mut c) = self.conns.remove(id) else {
            return;
        };
        if errno == 0 {
            // What JS already handed over was, for node, already in the kernel: send what the
            // socket takes now instead of dropping it (not what node would still hold back).
            loop {
                let mut slices = [IoSlice::new(&[]); MAX_SLICES];
                let n = c.http.out.slices(&mut slices, true);
                if n == 0 {
                    break;
                }
                match readiness::write(&mut c.stream, &slices[..n]) {
                    Ok(w) if w > 0 => c.http.out.consume(w),
                    _ => break,
                }
            }
            // And what the transport holds (a TLS alert, the last records).
            let _ = readiness::write_pending(&mut c.stream);
        }
        c.http.out.clear();
        let _ = self.poll.registry().deregister(&mut c.stream);
        let notify = c.flags & C_JS_WATCH != 0 || c.http.inflight > 0 || c.http.is_upgraded();
        if c.flags & C_HOLDS_REF != 0 {
            self.add_ref(-1);
        }
        let sid = c.server;
        drop(c);
        if notify {
            self.defer(Deferred::Close(id, errno));
        } else if errno < 0 && self.server(sid).map(|s| s.has(S_HAS_CLIENT_ERROR)) == Some(true) {
            // node's socket for it existed from the accept, and its read error became a
            // 'clientError' (a reset before any request).
            self.defer(Deferred::Reset(sid, id, errno));
        }
        self.defer(Deferred::Released(id));
        if let Some(s) = self.server(sid) {
            s.conns = s.conns.saturating_sub(1);
            if s.closed && s.conns == 0 {
                self.defer(Deferred::Drained(sid));
            }
        }
    }

    /// Writes what every connection has queued that the kernel takes at once: the process
    /// is about to exit, and node:http had written ended responses already.
    pub fn flush_all(&mut self) {
        for id in self.conns.ids() {
            self.flush(id, true);
        }
    }
}
