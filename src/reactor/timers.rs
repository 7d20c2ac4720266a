//! Timers: a heap of deadlines behind one uv_timer_t, for idle timeouts (socket.setTimeout,
//! keep-alive) and node:http's periodic headers/request timeout sweep.

use super::batch::guarded;
use super::delivery::Group;
use super::events::Event;
use super::readiness::batch;
use super::secure;
use super::server::S_HAS_TIMEOUT;
use super::sink::Sink;
use super::state::*;

impl Reactor {
    /// Sets the idle timeout of a connection (socket.setTimeout); 0 disables it.
    pub(super) fn set_timeout(&mut self, id: u64, ms: u64) {
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
    pub(super) fn touch(&mut self, id: u64) {
        let now = self.now;
        let Some(c) = self.conn(id) else { return };
        c.last_active = now;
        if c.timeout_ms > 0 && c.timer_at == 0 {
            let deadline = now + c.timeout_ms;
            c.timer_at = deadline;
            self.push_timer(deadline, TimerKey::Conn(id));
        }
    }

    /// tls.Server's handshakeTimeout for connection `id`.
    pub(super) fn handshake_deadline(&mut self, id: u64, ms: u64) {
        let at = self.now_ms() + ms;
        self.push_timer(at, TimerKey::Handshake(id));
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
        self.handles.start_timer(deadline.saturating_sub(now));
    }

    pub(super) fn start_server_checks(&mut self, sid: u32) {
        let now = self.now_ms();
        let Some(s) = self.server(sid) else { return };
        let every = s.cfg.check_interval;
        if every > 0 && (s.cfg.headers_timeout > 0 || s.cfg.request_timeout > 0) {
            self.push_timer(now + every, TimerKey::ServerCheck(sid));
        }
    }

    /// Timers due now, removed from the heap.
    fn due_timers(&mut self) -> Vec<(u64, TimerKey)> {
        let now = self.now_ms();
        self.timer_armed_at = 0;
        let mut due = Vec::new();
        while let Some(std::cmp::Reverse((at, key))) = self.timers.peek().copied() {
            if at > now {
                break;
            }
            self.timers.pop();
            due.push((at, key));
        }
        due
    }

    /// Whether the idle timer entry `at` of connection `id` fires (it may have been moved
    /// by activity since it was set).
    fn idle_expired(&mut self, id: u64, at: u64) -> bool {
        let now = self.now;
        let Some(c) = self.conn(id) else { return false };
        if c.timer_at != at {
            return false;
        }
        c.timer_at = 0;
        if c.timeout_ms == 0 {
            return false;
        }
        let deadline = c.last_active + c.timeout_ms;
        if deadline > now {
            c.timer_at = deadline;
            self.push_timer(deadline, TimerKey::Conn(id));
            return false;
        }
        true
    }
}

/// The timer fired: runs what is due, then re-arms for the next deadline.
pub fn run_timers<S: Sink>() {
    batch::<S>(|| {
        let due = with(|r| r.due_timers()).unwrap_or_default();
        for (at, key) in due {
            match key {
                TimerKey::Conn(id) => {
                    if with(|r| r.idle_expired(id, at)) == Some(true) {
                        guarded::<S, _>(Some(id), || fire_timeout::<S>(id));
                    }
                }
                TimerKey::ServerCheck(sid) => {
                    guarded::<S, _>(None, || check_server::<S>(sid));
                }
                TimerKey::Handshake(id) => {
                    guarded::<S, _>(Some(id), || secure::on_handshake_deadline::<S>(id));
                }
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
fn fire_timeout<S: Sink>(id: u64) {
    let to_js = with(|r| {
        let c = r.conn(id)?;
        let watched = c.has(C_JS_WATCH) || c.http.is_upgraded() || c.http.inflight > 0;
        let sid = c.server;
        let listened = r.server(sid).map(|s| s.has(S_HAS_TIMEOUT)) == Some(true);
        if !watched && !listened {
            r.close_conn(id, 0);
            return None;
        }
        Some(sid)
    })
    .flatten();
    if let Some(sid) = to_js {
        let mut g = Group::<S>::open(Some(id));
        g.batch.push(Event::Timeout { id, sid });
    }
}

/// node:http's connectionsCheckingInterval sweep: requests whose headers (headersTimeout) or
/// whole message (requestTimeout) take too long get a 408 or a 'clientError'.
fn check_server<S: Sink>(sid: u32) {
    let expired = with(|r| {
        let now = r.now;
        let s = r.server(sid)?;
        let (ht, rt, every) = (
            s.cfg.headers_timeout,
            s.cfg.request_timeout,
            s.cfg.check_interval,
        );
        let alive = s.listener.is_some() || s.conns > 0;
        let expired: Vec<u64> = r
            .conns
            .iter()
            .filter(|(_, c)| c.server == sid)
            .filter_map(|(id, c)| {
                let (start, headers_done) = c.http.request_clock()?;
                let age = now.saturating_sub(start);
                ((ht > 0 && !headers_done && age > ht) || (rt > 0 && age > rt)).then_some(id)
            })
            .collect();
        if alive && every > 0 {
            r.push_timer(now + every, TimerKey::ServerCheck(sid));
        }
        Some(expired)
    })
    .flatten();
    for id in expired.unwrap_or_default() {
        with(|r| r.conn(id).map(|c| c.http.timed_out()));
        let mut g = Group::<S>::open(Some(id));
        g.batch.push(Event::ClientError {
            sid,
            id,
            code: "ERR_HTTP_REQUEST_TIMEOUT",
            reason: "Request timeout",
            packet: None,
            at: 0,
        });
    }
}
