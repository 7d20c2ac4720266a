//! The readiness driver: the reactor inside one uv_poll on mio's epoll (`super::driver` is the
//! libuv side). It reads and writes TLS connections, and plain ones where there is no ring
//! (`super::completions`, the io_uring sibling, reads those otherwise), by readiness's rules:
//! the registration is edge-triggered, so a read goes on until the socket would block, but a
//! read shorter than the buffer means the receive queue was seen empty (one recv per
//! request); when the event said the peer closed or errored, the read after a short one
//! waits for the loop's next turn, as libuv's does; a hang-up after a short read is the end
//! of the input where libuv before 1.52 takes it so; a connection still readable after
//! `READS_PER_EVENT` reads yields to the rest of the loop; writes go until the socket would
//! block, then wait for a WRITABLE edge (for the ring's connections too). What it reads and
//! writes goes to and comes from the reactor's rooms through their entry points: bytes
//! arrived (`http::input`), end of input (`http::input_ended`), n bytes written
//! (`Reactor::wrote`), a written-out queue (`Reactor::output_done`), an error
//! (`Reactor::close_conn`). It also runs every batch (`batch`), whichever driver read.

use super::batch::guarded;
use super::completions;
use super::delivery::Group;
use super::events::{Batch, Event};
use super::http;
use super::io::Admit;
use super::secure;
use super::sink::Sink;
use super::state::*;
use crate::conn::out::{MAX_SLICES, SPARE_MAX};
use crate::conn::{Pinned, Writing};
use crate::net::transport::{self, Got};
use std::io::{ErrorKind, IoSlice};
use std::time::Duration;

/// Ends the batch when dropped, also when unwinding: a batch left open would cork every
/// later write of every server on this thread.
struct BatchGuard<S: Sink> {
    outer: bool,
    sink: std::marker::PhantomData<S>,
}

impl<S: Sink> Drop for BatchGuard<S> {
    fn drop(&mut self) {
        if self.outer {
            let kept = S::batch_open(false);
            with(|r| {
                r.in_batch = false;
                if kept || !r.deferred.is_empty() || !r.dirty.is_empty() {
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
    let _guard = BatchGuard::<S> {
        outer,
        sink: std::marker::PhantomData,
    };
    if outer {
        S::batch_open(true);
    }
    guarded::<S, _>(None, f);
    if !outer {
        return;
    }
    for _ in 0..64 {
        guarded::<S, _>(None, S::take_responses);
        with(|r| r.flush_dirty());
        let mut more = guarded::<S, _>(None, run_deferred::<S>).unwrap_or(true);
        // Receives the sends met in the ring's queue: no readiness edge announces them.
        if completions::pending() {
            completions::reap::<S>(false);
            more = true;
        }
        let dirty_left = with(|r| !r.dirty.is_empty()).unwrap_or(false);
        if !more && !dirty_left {
            break;
        }
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
                            && (c.has(C_READ_PENDING)
                                || !c.http.rbuf.is_empty()
                                || c.flags & (C_RING | C_RECV_ARMED) == C_RING)
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
            let last = ready.len() - 1;
            S::last_read(false);
            for (i, (token, readable, writable, closing, hup)) in ready.into_iter().enumerate() {
                if i == last {
                    S::last_read(true);
                }
                if token == completions::RING_TOKEN {
                    completions::reap::<S>(i == last);
                    continue;
                }
                if token & LISTENER_BIT != 0 {
                    let sid = (token & !LISTENER_BIT) as u32;
                    guarded::<S, _>(None, || accept_all::<S>(sid));
                    continue;
                }
                let Some((id, ring)) = with(|r| {
                    let id = r.conns.id_at(token)?;
                    Some((id, r.conns.get(id)?.has(C_RING)))
                })
                .flatten() else {
                    continue;
                };
                if hup && !ring {
                    with(|r| r.conn(id).map(|c| c.flags |= C_HUP));
                }
                if writable {
                    with(|r| {
                        if r.conn(id).map(|c| c.has(C_WAIT_WRITABLE)) == Some(true) {
                            r.flush(id, false);
                        }
                    });
                }
                if readable && !ring {
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

/// Reads a connection inside its own panic guard.
pub fn read_guarded<S: Sink>(id: u64, drain: bool) {
    if with(|r| r.conns.get(id).map(|c| c.has(C_RING))).flatten() == Some(true) {
        completions::resume::<S>(id);
        return;
    }
    guarded::<S, _>(Some(id), || read_conn::<S>(id, drain));
}

/// Accepts every pending connection of server `sid`.
fn accept_all<S: Sink>(sid: u32) {
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

/// What one read of a connection gave.
enum Read {
    /// Bytes (plaintext on TLS), in the scratch buffer that travels with them; and whether
    /// the transport holds more that no new edge will announce (`transport::holds_more`).
    Bytes(Vec<u8>, usize, bool),
    Again,
    Eof,
    Error(i32),
    /// Paused, throttled, gone, or the socket would block.
    Stop,
    /// The transport has an event for the TLS room (`super::secure::on_event`).
    Secure,
}

/// Reads what the socket has, handing each read to the connection's input, all inside one
/// sink group: JS runs its ticks once at the end, as after one node:http read. With `drain`
/// (the event already reported the peer's FIN or an error, or nothing says the queue was
/// seen empty: a yielded or resumed read) it reads until the socket would block.
pub(super) fn read_conn<S: Sink>(id: u64, drain: bool) {
    let mut g = Group::<S>::open(Some(id));
    http::input_buffered(&mut g, id);
    for _ in 0..READS_PER_EVENT {
        http::before_read(&mut g, id);
        let step = with(|r| r.read_once(id)).unwrap_or(Read::Stop);
        let short = matches!(step, Read::Bytes(_, n, more) if n < SCRATCH && !more);
        match step {
            Read::Bytes(buf, n, _) => {
                http::input(&mut g, id, &buf[..n]);
                with(|r| r.scratch = buf);
            }
            Read::Again => {}
            Read::Secure => {
                // What the read gathered goes first: the TLS room calls JS itself.
                g.deliver();
                if !secure::on_event::<S>(id) {
                    return;
                }
            }
            Read::Eof => {
                http::input_ended(&mut g, id);
                return;
            }
            Read::Error(e) => {
                if !secure::on_read_error::<S>(id, e) {
                    with(|r| r.close_conn(id, e));
                }
                return;
            }
            Read::Stop => return,
        }
        if short && hup_eof(id) {
            http::input_ended(&mut g, id);
            return;
        }
        if short {
            if drain {
                // libuv ends a read at a short one: a FIN that came with the bytes is read on
                // the loop's next turn, after the ticks, immediates and timers the request's
                // handler queued (node answers a request whose FIN came with it,
                // test/driver.test.js).
                with(|r| r.yield_read(id));
            }
            return;
        }
    }
    // Still readable after READS_PER_EVENT reads: yield to the rest of the event loop
    // (timers, other I/O) and continue on its next turn.
    with(|r| r.yield_read(id));
    // Output goes at the batch's end. A process that dies before (a throw, a rejection,
    // process.exit()) sends it from the uncaught-exception path and the exit hook, as
    // node:http has sent it (test/liveness.test.js). Flushing here, before the read's ticks,
    // cost 15-20 % of a request's CPU at 64 connections: the client is woken per response
    // instead of once per batch (A/B medians, json 17.7 vs 14.6 µs/req).
}

/// libuv's uv__stream_io: after a short read on a hung-up socket that is still being read,
/// the input has ended (the pending error, a reset, is never read).
fn hup_eof(id: u64) -> bool {
    with(|r| {
        r.conn(id).is_some_and(|c| {
            c.has(C_HUP) && !c.has(C_READ_PAUSED) && !c.http.throttled && !c.http.peer_eof
        })
    })
    .unwrap_or(false)
}

impl Reactor {
    fn read_once(&mut self, id: u64) -> Read {
        let now = self.now;
        let mut scratch = std::mem::take(&mut self.scratch);
        if scratch.len() < SCRATCH {
            scratch.resize(SCRATCH, 0);
        }
        let step = match self.conns.get_mut(id) {
            None => Read::Stop,
            Some(c) if c.flags & C_READ_PAUSED != 0 || c.http.throttled => {
                c.flags |= C_READ_PENDING;
                Read::Stop
            }
            Some(c) => {
                c.flags &= !C_READ_PENDING;
                self.counters.read_calls += 1;
                match transport::read(&mut c.stream, &mut scratch) {
                    Ok(Got::Eof) => Read::Eof,
                    Ok(Got::Bytes(n)) => {
                        c.bytes_read += n as u64;
                        c.last_active = now;
                        let more = transport::holds_more(&c.stream);
                        return Read::Bytes(scratch, n, more);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        // Handshake bytes the socket did not take wait for a WRITABLE edge.
                        if transport::wants_write(&c.stream) {
                            c.flags |= C_WAIT_WRITABLE;
                        }
                        Read::Stop
                    }
                    Ok(Got::Event) => Read::Secure,
                    Err(e) if e.kind() == ErrorKind::Interrupted => Read::Again,
                    Err(e) => Read::Error(-e.raw_os_error().unwrap_or(libc::ECONNRESET)),
                }
            }
        };
        self.scratch = scratch;
        step
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
    pub(super) unsafe fn write_direct(
        &mut self,
        id: u64,
        seq: u32,
        head: &[u8],
        body: &[u8],
        tail: &[u8],
        keep: impl FnOnce() -> Option<Box<dyn std::any::Any>>,
    ) -> Option<usize> {
        let c = self.conns.get_mut(id)?;
        // A connection already marked for this batch's flush may still have nothing queued
        // (its previous response went out directly): what matters is that nothing waits.
        if c.flags & C_WAIT_WRITABLE != 0
            || c.http.writing != Writing::Open
            || !c.http.out.is_flushed()
            || c.http.out.active != seq
            || c.http.out.close_after
        {
            return None;
        }
        let total = head.len() + body.len() + tail.len();
        // Errors and a full socket: the queued path writes (and reports) as always.
        let parts = [IoSlice::new(head), IoSlice::new(body), IoSlice::new(tail)];
        let n = transport::write(&mut c.stream, &parts).unwrap_or_default();
        self.counters.write_calls += 1;
        self.wrote(id, n);
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
    pub(super) fn flush(&mut self, id: u64, early: bool) {
        let Some(c) = self.conns.get_mut(id) else {
            return;
        };
        if !early {
            c.flags &= !C_DIRTY;
            c.http.out.confirm();
        }
        let mut error = 0;
        let mut written = 0;
        let mut calls = 0;
        let mut blocked = false;
        while !c.http.out.is_flushed() {
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let n = c.http.out.slices(&mut slices, early);
            if n == 0 {
                break;
            }
            calls += 1;
            match transport::write(&mut c.stream, &slices[..n]) {
                Ok(0) => break,
                Ok(n) => {
                    c.http.out.consume(n);
                    written += n;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
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
        if !blocked && error == 0 && transport::wants_write(&c.stream) {
            match transport::write_pending(&mut c.stream) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => blocked = true,
                Err(e) => error = -e.raw_os_error().unwrap_or(libc::EPIPE),
            }
        }
        // A written-out connection keeps no output memory: its buffers go back to a pool so
        // the next response does not pay for a fresh allocation. All of them: a queue with
        // spares left is not given back to the pool (`release`).
        let spare: [_; SPARE_MAX] = std::array::from_fn(|_| c.http.out.take_spare());
        self.counters.write_calls += calls;
        for buf in spare.into_iter().flatten() {
            self.recycle(buf);
        }
        self.wrote(id, written);
        if blocked {
            self.output_blocked(id);
        } else if error != 0 {
            self.close_conn(id, error);
        } else if !early {
            if let Some(fin) = self.output_done(id) {
                if let Some(c) = self.conns.get_mut(id).filter(|_| fin.fin) {
                    transport::shutdown_write(&mut c.stream);
                }
                self.output_finished(id, fin);
            }
        }
    }

    /// Closes the connection now. What JS already handed over was, for node, already in the
    /// kernel: without an error, what the socket takes now is sent first instead of dropped
    /// (not what node would still hold back), and what the transport holds (a TLS alert, the
    /// last records). JS hears of the close as node's 'close' (`Reactor::forget`).
    pub(super) fn close_conn(&mut self, id: u64, errno: i32) {
        if errno == 0 {
            if let Some(c) = self.conns.get_mut(id) {
                loop {
                    let mut slices = [IoSlice::new(&[]); MAX_SLICES];
                    let n = c.http.out.slices(&mut slices, true);
                    if n == 0 {
                        break;
                    }
                    match transport::write(&mut c.stream, &slices[..n]) {
                        Ok(w) if w > 0 => c.http.out.consume(w),
                        _ => break,
                    }
                }
                let _ = transport::write_pending(&mut c.stream);
            }
        }
        self.forget(id, errno);
    }

    /// Writes what every connection has queued that the kernel takes at once (the process
    /// is about to exit).
    pub(super) fn write_all_now(&mut self) {
        for id in self.conns.ids() {
            self.flush(id, true);
        }
    }
}
