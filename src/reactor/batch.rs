//! Event batches: everything one libuv callback does runs as a batch, with writes corked
//! until its end (one write per connection per batch), then deferred events delivered. A
//! panic inside closes only the connection it concerns and leaves the reactor usable.

use super::events::{Batch, Event};
use super::http::read_conn;
use super::io;
use super::sink::Sink;
use super::state::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// Ends the batch when dropped, also when unwinding: a batch left open would cork every
/// later write of every server on this thread.
struct BatchGuard {
    outer: bool,
}

impl Drop for BatchGuard {
    fn drop(&mut self) {
        if self.outer {
            with(|r| {
                r.in_batch = false;
                if !r.deferred.is_empty() || !r.dirty.is_empty() {
                    r.handles.kick();
                }
            });
        }
    }
}

/// Runs `f` as a batch: writes are corked until the end, then flushed; deferred events run
/// last. Nested batches join the outer one.
pub fn batch<S: Sink>(f: impl FnOnce()) {
    let outer = with(|r| {
        let outer = !r.in_batch;
        r.in_batch = true;
        r.now_ms();
        if outer {
            r.date.expire();
        }
        outer
    });
    let Some(outer) = outer else {
        return;
    };
    let _guard = BatchGuard { outer };
    guarded::<S, _>(None, f);
    if !outer {
        return;
    }
    for _ in 0..64 {
        with(|r| r.flush_dirty());
        let more = guarded::<S, _>(None, run_deferred::<S>).unwrap_or(true);
        let dirty_left = with(|r| !r.dirty.is_empty()).unwrap_or(false);
        if !more && !dirty_left {
            break;
        }
    }
}

/// Runs `f`; a panic in it closes connection `id` (when given), is reported to the sink,
/// and does not unwind further.
pub fn guarded<S: Sink, T>(id: Option<u64>, f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            let message = format!("fast-http: internal error: {message}");
            let _ = catch_unwind(AssertUnwindSafe(|| {
                with(|r| {
                    let sid = id.and_then(|id| r.conn(id).map(|c| c.server));
                    if let Some(id) = id {
                        r.close_conn(id, -libc::EIO);
                    }
                    r.defer(Deferred::Panic(sid, message));
                });
            }));
            None
        }
    }
}

/// Reads a connection inside its own panic guard.
pub fn read_guarded<S: Sink>(id: u64, drain: bool) {
    guarded::<S, _>(Some(id), || read_conn::<S>(id, drain));
}

impl Reactor {
    /// Writes every connection written during the batch.
    pub fn flush_dirty(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        for &id in &dirty {
            self.flush(id, false);
        }
        if self.dirty.is_empty() {
            self.dirty = dirty;
            self.dirty.clear();
        }
    }

    pub fn now_ms(&mut self) -> u64 {
        self.now = self.handles.now();
        self.now
    }
}

/// Runs deferred events. Returns whether anything ran.
fn run_deferred<S: Sink>() -> bool {
    let mut ran = false;
    let mut one = Batch::default();
    for _ in 0..100_000 {
        let Some(d) = with(|r| r.deferred.pop_front()).flatten() else {
            break;
        };
        ran = true;
        let event = match d {
            Deferred::Close(id, errno) => Event::Close { id, errno },
            Deferred::Reset(sid, id, errno) => Event::Reset { sid, id, errno },
            Deferred::Drain(id) => Event::Drain { id },
            Deferred::End(id) => Event::End { id },
            Deferred::Shutdown(id) => Event::Shutdown { id },
            Deferred::Drained(sid) => Event::ServerDrained { sid },
            Deferred::Panic(sid, message) => Event::InternalError { sid, message },
            Deferred::Released(id) => {
                S::released(id);
                continue;
            }
            Deferred::Resume(id) => {
                let go = with(|r| {
                    r.conn(id).map(|c| {
                        c.flags & C_READ_PAUSED == 0
                            && !c.http.throttled
                            && (c.has(C_READ_PENDING) || !c.http.rbuf.is_empty())
                    })
                })
                .flatten()
                .unwrap_or(false);
                if go {
                    read_guarded::<S>(id, true);
                }
                continue;
            }
        };
        one.push(event);
        S::emit(&mut one);
    }
    ran
}

/// The poll fd is readable: drain mio's events.
pub fn run_poll<S: Sink>() {
    batch::<S>(|| {
        for _ in 0..4 {
            let ready = with(|r| {
                let mut ready = Vec::with_capacity(r.events.capacity());
                let hup_is_eof = r.hup_is_eof;
                if r.poll.poll(&mut r.events, Some(Duration::ZERO)).is_ok() {
                    for e in r.events.iter() {
                        ready.push((
                            e.token().0,
                            e.is_readable() || e.is_read_closed() || e.is_error(),
                            e.is_writable(),
                            e.is_read_closed() || e.is_error(),
                            hup_is_eof && e.is_read_closed() && e.is_write_closed(),
                        ));
                    }
                }
                ready
            })
            .unwrap_or_default();
            if ready.is_empty() {
                break;
            }
            for (token, readable, writable, closing, hup) in ready {
                if token & LISTENER_BIT != 0 {
                    let sid = (token & !LISTENER_BIT) as u32;
                    guarded::<S, _>(None, || io::accept_all::<S>(sid));
                    continue;
                }
                let Some(id) = with(|r| r.conns.id_at(token)).flatten() else {
                    continue;
                };
                if hup {
                    with(|r| r.conn(id).map(|c| c.flags |= C_HUP));
                }
                if writable {
                    with(|r| {
                        if r.conn(id).map(|c| c.has(C_WAIT_WRITABLE)) == Some(true) {
                            r.flush(id, false);
                        }
                    });
                }
                if readable {
                    read_guarded::<S>(id, closing);
                }
            }
        }
    });
}

/// Idle phase: connections that yielded with more to read.
pub fn run_yielded<S: Sink>() {
    let yielded = with(|r| {
        r.handles.stop_idle();
        std::mem::take(&mut r.yielded)
    })
    .unwrap_or_default();
    batch::<S>(|| {
        for id in yielded {
            read_guarded::<S>(id, true);
        }
    });
}
