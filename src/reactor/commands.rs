//! What JS asks of a connection, as commands on the reactor: respond, write, flush (with
//! drain wanted), finish, pause / resume, shut down, destroy, upgrade decided, discard a
//! body, inject input, the idle timeout, socket options, tap / watch, and what JS reads
//! (addresses, counters). The binding translates N-API values into these calls; every edit
//! of a connection's state is made here or below.

use super::state::*;
use super::{io, server};
use crate::conn::{Pinned, Writing};
use crate::proto::response::{Auto, Response, R_DATE};

/// A response's life (`Respond`), as JS says it: close the connection once it is written.
pub const L_CLOSE_AFTER: u32 = 1;
/// The response waited behind an earlier one: node would write it a tick later, so until the
/// batch ends a destroy drops it (see `OutQueue::tentative`).
pub const L_TENTATIVE: u32 = 1 << 1;

/// How a whole response queued by `Reactor::respond` ends (its `L_*` bits).
#[derive(Debug, Clone, Copy, Default)]
pub struct Respond {
    pub tentative: bool,
    pub close: bool,
}

impl Respond {
    pub fn from_bits(life: u32) -> Respond {
        Respond {
            tentative: life & L_TENTATIVE != 0,
            close: life & L_CLOSE_AFTER != 0,
        }
    }
}

impl Reactor {
    /// Queues a whole response to request `seq` (its bytes encoded by proto's response
    /// module, with this server's Date and Keep-Alive lines) and finishes it. Nothing is
    /// queued when the connection is gone or its writing side is shut: JS hears of that
    /// from the connection's close, or knew it (it shut the socket).
    pub fn respond(&mut self, id: u64, seq: u32, how: Respond, res: &Response<'_>, body: &[u8]) {
        let mut out = self.out_buffer(512 + body.len());
        self.encode_with(id, res.flags, |auto| res.encode(&mut out, body, auto));
        let Some(c) = self.conn(id) else {
            self.recycle(out);
            return;
        };
        if c.http.writing == Writing::Shut {
            self.recycle(out);
            return;
        }
        let q = &mut c.http.out;
        if how.tentative && seq == q.active {
            q.mark_tentative();
        }
        if let Some(spare) = q.push(seq, out) {
            self.recycle(spare);
        }
        self.response_done(id, seq, how.close);
    }

    /// A whole response whose large body is offered to the kernel from the caller's memory
    /// (`write_direct`), then finished. False (nothing done) when it must take `respond`.
    ///
    /// # Safety
    /// As `write_direct`: `body` stays valid and unmoved while what `keep()` returns lives.
    pub unsafe fn respond_direct(
        &mut self,
        id: u64,
        seq: u32,
        close: bool,
        res: &Response<'_>,
        body: &[u8],
        keep: impl FnOnce() -> Option<Box<dyn std::any::Any>>,
    ) -> bool {
        let mut head = Vec::with_capacity(512);
        let mut tail = Vec::new();
        self.encode_with(id, res.flags, |auto| res.head(&mut head, body.len(), auto));
        res.tail(&mut tail, body.len());
        // SAFETY: the caller's contract.
        if unsafe { self.write_direct(id, seq, &head, body, &tail, keep) }.is_none() {
            return false;
        }
        self.response_done(id, seq, close);
        true
    }

    /// Runs `encode` with what the server adds to a head of connection `id`: its Keep-Alive
    /// line and the current Date (borrowed, not copied: this runs for every response).
    fn encode_with(&mut self, id: u64, flags: u32, encode: impl FnOnce(&Auto<'_>)) {
        if flags & R_DATE != 0 {
            self.refresh_date();
        }
        let sid = self.conns.get(id).map(|c| c.server);
        let keep_alive = sid
            .and_then(|sid| self.servers.get(sid as usize))
            .and_then(|s| s.as_ref())
            .map(|s| s.cfg.ka_line.as_slice())
            .unwrap_or(b"");
        encode(&Auto {
            date: self.date.current(),
            keep_alive,
            status_lines: &self.status_lines,
        });
    }

    /// Appends what `fill` writes to the active response of connection `id` (its bytes in
    /// place, with no copy of its own). Returns the bytes not yet written of what may be
    /// written now (pipelined responses waiting their turn do not count); None when the
    /// connection is gone or its writing side is shut.
    pub fn write_with(&mut self, id: u64, fill: impl FnOnce(&mut Vec<u8>)) -> Option<usize> {
        let c = self.conn(id)?;
        if c.http.writing == Writing::Shut {
            return None;
        }
        let out = &mut c.http.out;
        if let Some(t) = out.tail(out.active) {
            let before = t.len();
            fill(t);
            let n = t.len() - before;
            out.pushed(n);
        }
        Some(out.unsent())
    }

    /// Appends memory owned elsewhere (a large JS Buffer) to the active response, as
    /// `write_with`.
    pub fn write_pinned(&mut self, id: u64, p: Pinned) -> Option<usize> {
        let c = self.conn(id)?;
        if c.http.writing == Writing::Shut {
            return None;
        }
        let _ = c.http.out.push_pinned(p);
        Some(c.http.out.unsent())
    }

    /// Sends what was written (at once outside a batch, at its end inside one). Returns what
    /// is still unsent; at or past `high_water` JS hears (drain) once it is written.
    pub fn flush_writes(&mut self, id: u64, high_water: f64) -> Option<usize> {
        self.after_write(id);
        let left = self.conn(id)?.http.out.unsent();
        if left > 0 && left as f64 >= high_water {
            self.drain_wanted(id);
        }
        Some(left)
    }

    /// JS saw a full buffer: it hears (drain) once the output is written.
    pub fn drain_wanted(&mut self, id: u64) {
        if let Some(c) = self.conn(id) {
            c.flags |= C_WANT_DRAIN;
        }
    }

    /// The response to request `seq`, written through the socket, is complete.
    pub fn finish(&mut self, id: u64, seq: u32, close: bool) {
        self.response_done(id, seq, close);
    }

    /// JS paused reading (req.pause / a full socket buffer).
    pub fn pause(&mut self, id: u64) {
        self.set_paused(id, true);
    }

    /// JS resumed reading.
    pub fn resume(&mut self, id: u64) {
        self.set_paused(id, false);
    }

    /// Closes connection `id` now; with `reset` the peer gets an RST (socket.resetAndDestroy()).
    /// `assigned`: the response JS's socket belongs to, whose bytes node has written by now
    /// (see `OutQueue::confirm_through`).
    pub fn destroy(&mut self, id: u64, reset: bool, assigned: Option<u32>) {
        if let Some(c) = self.conn(id) {
            if reset {
                c.stream.set_linger_zero();
            }
            if let Some(seq) = assigned {
                c.http.out.confirm_through(seq);
            }
        }
        self.close_conn(id, 0);
    }

    /// socket.setTimeout from JS: the idle time is no longer keep-alive time.
    pub fn set_idle_timeout(&mut self, id: u64, ms: u64) {
        if let Some(c) = self.conn(id) {
            c.http.keep_alive_idle = false;
        }
        self.set_timeout(id, ms);
    }

    pub fn set_no_delay(&mut self, id: u64, on: bool) {
        if let Some(c) = self.conn(id) {
            c.stream.set_nodelay(on);
        }
    }

    pub fn set_keep_alive(&mut self, id: u64, on: bool, delay: u32) {
        if let Some(c) = self.conn(id) {
            c.stream.set_keepalive(on, delay);
        }
    }

    /// Raw bytes also go to JS while the app listens for the socket's 'data'.
    pub fn set_tap(&mut self, id: u64, on: bool) {
        self.set_flag(id, C_TAP, on);
    }

    /// JS holds (or dropped) a socket object: it hears about close, end and timeout. Returns
    /// whether the connection is still open.
    pub fn watch(&mut self, id: u64, on: bool) -> bool {
        self.set_flag(id, C_JS_WATCH, on)
    }

    fn set_flag(&mut self, id: u64, flag: u32, on: bool) -> bool {
        let Some(c) = self.conn(id) else { return false };
        if on {
            c.flags |= flag;
        } else {
            c.flags &= !flag;
        }
        true
    }

    /// (peer, local) addresses of an open connection.
    pub fn addresses(&self, id: u64) -> Option<io::Addrs> {
        let c = self.conns.get(id)?;
        Some((c.stream.peer_addr(), c.stream.local_addr()))
    }

    /// (bytes read, bytes written, bytes queued) of an open connection.
    pub fn io_stats(&self, id: u64) -> Option<(u64, u64, usize)> {
        let c = self.conns.get(id)?;
        Some((c.bytes_read, c.bytes_written, c.http.out.queued()))
    }

    /// Server `sid`'s listener-presence bits, as JS listeners come and go.
    pub fn set_server_flags(&mut self, sid: u32, mask: u32, value: u32) {
        if let Some(s) = self.server(sid) {
            s.cfg.flags = (s.cfg.flags & !mask) | (value & mask);
        }
    }

    /// A new server, with `cfg` (the settings of the last one configured) when given.
    pub fn create_server(&mut self, cfg: Option<server::ServerCfg>) -> u32 {
        let sid = self.add_server();
        if let (Some(s), Some(cfg)) = (self.server(sid), cfg) {
            s.cfg = cfg;
        }
        sid
    }

    /// Applies options JS set to server `sid` (restarting its timeout sweep when its interval
    /// changed while listening). Returns the settings it has now; None when there is no such
    /// server.
    pub fn configure_server(
        &mut self,
        sid: u32,
        apply: impl FnOnce(&mut server::ServerCfg),
    ) -> Option<server::ServerCfg> {
        let s = self.server(sid)?;
        let old_interval = s.cfg.check_interval;
        apply(&mut s.cfg);
        let cfg = s.cfg.clone();
        if old_interval != cfg.check_interval && s.listener.is_some() {
            self.start_server_checks(sid);
        }
        Some(cfg)
    }
}
