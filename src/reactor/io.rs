//! A connection's life: admitted (its settings, its TLS session, its timers), what its
//! output's progress means (bytes written, a queue written out: FIN, close, 'drain', reading
//! resumed), and its end (JS hears of it, the server's count). The socket's reads and writes
//! are the readiness driver's (`super::readiness`), which calls these.

use super::secure_setup::{self, Asks};
use super::server::{
    S_ALPN_CALLBACK, S_HAS_CLIENT_ERROR, S_HAS_CONNECTION, S_HAS_DROP, S_HAS_KEYLOG, S_KEEP_ALIVE,
    S_NO_DELAY, S_SNI_CALLBACK, S_TLS_TO_NODE,
};
use super::slots;
use super::state::*;
use crate::conn::Flushed;
use crate::conn::Http1;
use crate::net::Stream;
use mio::{Interest, Token};
use std::os::fd::RawFd;

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
    pub(super) fn admit(&mut self, sid: u32, mut stream: Stream) -> Option<Admit> {
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
                to_node: flags & S_TLS_TO_NODE != 0,
            };
            secure_setup::begin(&mut stream, &ctx, asks)?;
        }
        stream.set_nodelay(flags & S_NO_DELAY != 0);
        if flags & S_KEEP_ALIVE != 0 {
            stream.set_keepalive(true, delay);
        }
        let id = self.conns.vacant_id()?;
        let token = Token(slots::index_of(id));
        // The completion driver reads plain connections: epoll tells only when a full
        // socket takes bytes again.
        let ring = self.ring.is_some() && !secure;
        let interest = if ring {
            Interest::WRITABLE
        } else {
            Interest::READABLE | Interest::WRITABLE
        };
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
        if secure {
            // node's https makes a connection's HTTP parser at 'secureConnection': its
            // headersTimeout / requestTimeout clock starts when the handshake is done
            // (secure::on_secure), and handshakeTimeout alone bounds the handshake.
            if let Some(c) = self.conn(id) {
                c.http.req_start = 0;
            }
        }
        if ring && !self.ring_adopt(id) {
            // The ring took no receive (its queue is full, or it failed): this connection
            // is the readiness driver's from the start.
            let c = self.conns.get_mut(id)?;
            c.flags &= !C_RING;
            let both = Interest::READABLE | Interest::WRITABLE;
            let _ = self.poll.registry().reregister(&mut c.stream, token, both);
        }
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

    /// The socket took `n` bytes of connection `id`'s output.
    pub(super) fn wrote(&mut self, id: u64, n: usize) {
        let now = self.now;
        if let Some(c) = self.conn(id) {
            c.bytes_written += n as u64;
            if n > 0 {
                c.last_active = now;
            }
        }
    }

    /// The socket would block with output left: it waits for a WRITABLE edge, and keeps the
    /// loop alive meanwhile, as a pending write request does.
    pub(super) fn output_blocked(&mut self, id: u64) {
        if let Some(c) = self.conn(id) {
            c.flags |= C_WAIT_WRITABLE;
        }
        self.update_conn_ref(id);
    }

    /// The socket took all of connection `id`'s output: its queue goes back, and what the
    /// connection does now (`Flushed`: a FIN first, then `output_finished`). None while output
    /// is left.
    pub(super) fn output_done(&mut self, id: u64) -> Option<Flushed> {
        let c = self.conn(id)?;
        if !c.http.out.is_flushed() {
            return None;
        }
        c.http.out.release();
        c.flags &= !C_WAIT_WRITABLE;
        Some(c.http.flushed())
    }

    /// After a written-out queue (and its FIN): JS hears of the FIN, the connection closes,
    /// or whoever waited hears of it ('drain', reading resumes).
    pub(super) fn output_finished(&mut self, id: u64, after: Flushed) {
        if after.tell_js {
            self.defer(Deferred::Shutdown(id));
        }
        if after.close {
            self.close_conn(id, 0);
            return;
        }
        let Some(c) = self.conn(id) else { return };
        let drained = c.flags & C_WANT_DRAIN != 0;
        c.flags &= !C_WANT_DRAIN;
        let resume = std::mem::take(&mut c.http.throttled);
        if drained {
            self.defer(Deferred::Drain(id));
        }
        if resume {
            self.defer(Deferred::Resume(id));
        }
        self.update_conn_ref(id);
    }

    /// The connection is gone (its socket closed by the driver): JS hears about it (onClose)
    /// asynchronously, like net.Socket's 'close' event, if it has any object for it.
    pub(super) fn forget(&mut self, id: u64, errno: i32) {
        let Some(mut c) = self.conns.remove(id) else {
            return;
        };
        c.http.out.clear();
        let notify = c.flags & C_JS_WATCH != 0 || c.http.inflight > 0 || c.http.is_upgraded();
        let sid = c.server;
        self.leave(id, &mut c);
        drop(c);
        if notify {
            self.defer(Deferred::Close(id, errno));
        } else if errno < 0 && self.server(sid).map(|s| s.has(S_HAS_CLIENT_ERROR)) == Some(true) {
            // node's socket for it existed from the accept, and its read error became a
            // 'clientError' (a reset before any request).
            self.defer(Deferred::Reset(sid, id, errno));
        }
        self.released(id, sid);
    }

    /// Connection `id` leaves the reactor with its socket open (handed to node's TLS): the
    /// descriptor is the caller's, and no 'close' is told for it.
    pub(super) fn release_socket(&mut self, id: u64) -> Option<RawFd> {
        let mut c = self.conns.remove(id)?;
        let sid = c.server;
        self.leave(id, &mut c);
        let fd = c.stream.into_raw_fd();
        self.released(id, sid);
        Some(fd)
    }

    /// A connection removed from the table stops being polled, received and holding the
    /// loop. Its receive is cancelled before the socket closes: an armed receive holds the
    /// socket open in the kernel (no FIN) until it ends.
    fn leave(&mut self, id: u64, c: &mut Connection) {
        let _ = self.poll.registry().deregister(&mut c.stream);
        if c.flags & C_RECV_ARMED != 0 && c.flags & C_RECV_CANCELLING == 0 {
            if let Some(ring) = self.ring.as_mut() {
                let _ = ring.cancel(id);
            }
        }
        if c.flags & C_HOLDS_REF != 0 {
            self.add_ref(-1);
        }
    }

    /// JS may drop connection `id`'s context; server `sid` has one connection fewer.
    fn released(&mut self, id: u64, sid: u32) {
        self.defer(Deferred::Released(id));
        if let Some(s) = self.server(sid) {
            s.conns = s.conns.saturating_sub(1);
            if s.closed && s.conns == 0 {
                self.defer(Deferred::Drained(sid));
            }
        }
    }
}
