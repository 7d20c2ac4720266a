//! The command API: everything the embedder may ask of the reactor, the whole list (the TLS
//! room's own commands are in `super::secure`, which alone names TLS types). Of a
//! connection: respond, write, flush (with drain wanted), finish, pause / resume, shut down,
//! destroy, upgrade decided, discard a body, inject input, a handler's throw, the idle
//! timeout, socket options, tap / watch, and what JS reads (addresses, counters). Of a
//! server: create, configure, listen, adopt a connection, close, free, ref, its
//! connections. The binding translates N-API values into these calls; every edit of the
//! reactor's state is made here or below, and its fields are its own.

use super::io::{self, Admit};
use super::server::{self, S_UPGRADE_BODY};
use super::state::*;
use crate::conn::{Pinned, Writing};
use crate::net::{Listener, Stream};
use crate::proto::errors::{CB_HEADERS_COMPLETE, JS_EXCEPTION};
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

    /// Input that did not come from the socket (socket.push in JS).
    pub fn inject(&mut self, id: u64, bytes: &[u8]) {
        let Some(c) = self.conn(id) else { return };
        c.http.rbuf.extend_from_slice(bytes);
        self.defer(Deferred::Resume(id));
    }

    /// JS dumped the request whose body is being read: drop the rest of it (`C_DISCARD_BODY`).
    pub fn discard_body(&mut self, id: u64) {
        if let Some(c) = self.conn(id) {
            c.flags |= C_DISCARD_BODY;
        }
    }

    /// JS decided whether the Upgrade request it was asked about upgrades the connection.
    pub fn decide_upgrade(&mut self, id: u64, upgrade: bool) {
        let Some(sid) = self.conn(id).map(|c| c.server) else {
            return;
        };
        let body_first = self.server(sid).is_some_and(|s| s.has(S_UPGRADE_BODY));
        if let Some(c) = self.conn(id) {
            c.http.decide_upgrade(upgrade, body_first);
        }
    }

    /// JS ended the socket: FIN once the output is written.
    pub fn shutdown(&mut self, id: u64) {
        let Some(c) = self.conn(id) else { return };
        c.http.shutdown();
        self.after_write(id);
    }

    /// Starts listening on `l`. Like libuv for node's listen, the socket joins the poll set
    /// on the loop's next turn (`register_pending_listeners`, from the kick): a server closed
    /// before then (listened on and closed in one go) never costs the registration, and
    /// connections that arrive meanwhile wait in the backlog.
    pub fn register_listener(&mut self, sid: u32, l: Listener) -> std::io::Result<()> {
        let Some(s) = self.server(sid) else {
            return Ok(());
        };
        s.listener = Some(l);
        s.closed = false;
        s.registered = false;
        if s.refd {
            self.add_ref(1);
        }
        server::register_later(sid);
        self.handles.kick();
        self.start_server_checks(sid);
        Ok(())
    }

    /// Stops listening. Returns the number of connections still open.
    pub fn close_listener(&mut self, sid: u32) -> u32 {
        let Some(s) = self.server(sid) else { return 0 };
        s.closed = true;
        let had = s.listener.take();
        let registered = std::mem::take(&mut s.registered);
        let refd = s.refd;
        let conns = s.conns;
        if let Some(mut l) = had {
            if registered {
                let _ = self.poll.registry().deregister(&mut l);
            }
            if refd {
                self.add_ref(-1);
            }
        }
        conns
    }

    /// The JS server was garbage-collected.
    pub fn free_server(&mut self, sid: u32) {
        self.close_listener(sid);
        if self.server(sid).map(|s| s.conns == 0) == Some(true) {
            self.servers[sid as usize] = None;
        }
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

    /// Connection ids of a server, optionally only the idle ones: between messages
    /// (`mid_message`), their TLS handshake done (node's https server knows a connection from
    /// 'secureConnection' on, so its closeIdleConnections leaves a handshake alone).
    pub fn server_conns(&self, sid: u32, idle_only: bool) -> Vec<u64> {
        let idle = |c: &Connection| {
            !c.http.mid_message() && !c.stream.tls().is_some_and(|t| t.is_handshaking())
        };
        self.conns
            .iter()
            .filter(|(_, c)| c.server == sid && (!idle_only || idle(c)))
            .map(|(id, _)| id)
            .collect()
    }

    /// A handler of an event JS was given threw: a request's (`body` false) or a body 'data'
    /// listener's, whose event ended at `at` in the bytes being parsed. node's parser
    /// callback failed, and llhttp fails every later read of the connection with that error.
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

    /// A connection accepted elsewhere (a cluster primary's hand-off), as the driver's own.
    pub fn adopt(&mut self, sid: u32, stream: Stream) -> Option<Admit> {
        self.now_ms();
        self.admit(sid, stream)
    }

    /// The server connection `id` belongs to.
    pub fn server_of(&mut self, id: u64) -> Option<u32> {
        self.conn(id).map(|c| c.server)
    }

    /// Writes what every connection has queued that the kernel takes at once: the process
    /// is about to exit, and node:http had written ended responses already.
    pub fn flush_all(&mut self) {
        self.write_all_now();
    }

    /// Writes the connections written so far in this batch, as its end would.
    pub fn write_batch(&mut self) {
        self.flush_dirty();
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }
}
