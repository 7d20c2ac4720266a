//! The libuv side: the reactor runs inside Node's own loop. One uv_poll_t watches mio's
//! epoll/kqueue fd; one uv_timer_t drives the timer heap; a zero-delay timer ("kick") runs
//! deferred work outside of JS frames; a uv_idle_t resumes reads that yielded; a fresh
//! uv_idle_t closed at once per destroyed socket gives its 'close' a close callback of its
//! own, as net.Socket's handle would. Every callback is an `extern "C"` edge: nothing unwinds
//! through it.

use super::completions;
use super::event_loop::EventLoop;
use super::readiness::{batch, run_poll, run_yielded};
use super::sink::Sink;
use super::state::{with, Reactor, REACTOR};
use super::timers::run_timers;
use super::uv;
use crate::proto::parse::Methods;
use mio::Poll;
use std::cell::Cell;
use std::os::fd::AsRawFd;
use std::panic::catch_unwind;
use std::ptr;

thread_local! {
    /// This thread's libuv loop while the reactor is installed.
    static UV_LOOP: Cell<*mut uv::uv_loop_t> = const { Cell::new(ptr::null_mut()) };
}

/// Calls `f(token)` in the loop's close phase, as the close callback of a handle closed now:
/// where libuv runs close callbacks, after the iteration's setImmediate callbacks, latest
/// closed first, and in the next iteration when called from a close callback. net.Socket
/// emits 'close' from its handle's. False when no reactor is installed on this thread (a
/// callback armed before a teardown runs nothing).
pub fn at_close_phase(token: i64, f: fn(i64)) -> bool {
    let lp = UV_LOOP.with(Cell::get);
    if lp.is_null() {
        return false;
    }
    let job = Box::into_raw(Box::new((token, f)));
    let h = uv::alloc_handle(uv::UV_IDLE);
    // SAFETY: a fresh idle handle on this thread's live loop, closed at once without being
    // started; its close callback frees it and the job.
    unsafe {
        uv::uv_idle_init(lp, h);
        uv::uv_handle_set_data(h, job.cast());
        uv::uv_close(h, on_close_phase);
    }
    true
}

unsafe extern "C" fn on_close_phase(h: *mut uv::uv_handle_t) {
    // SAFETY: h was allocated by alloc_handle(UV_IDLE), is closed, and its data is the job
    // at_close_phase boxed for it.
    let (token, f) = unsafe {
        let job = Box::from_raw(uv::uv_handle_get_data(h).cast::<(i64, fn(i64))>());
        uv::free_handle(h, uv::UV_IDLE);
        *job
    };
    if !UV_LOOP.with(Cell::get).is_null() {
        let _ = catch_unwind(|| f(token));
    }
}

/// The libuv handles the reactor runs on, closed (and freed by their close callbacks) when
/// the reactor is dropped.
struct UvLoop {
    uv_loop: *mut uv::uv_loop_t,
    poll: *mut uv::uv_handle_t,
    timer: *mut uv::uv_handle_t,
    kick: *mut uv::uv_handle_t,
    idle: *mut uv::uv_handle_t,
    kick_armed: bool,
    in_kick: bool,
    kick_cb: uv::uv_timer_cb,
    timer_cb: uv::uv_timer_cb,
    idle_cb: uv::uv_timer_cb,
}

impl EventLoop for UvLoop {
    fn now(&self) -> u64 {
        // SAFETY: uv_loop is this thread's live loop.
        unsafe { uv::uv_now(self.uv_loop) }
    }

    fn set_ref(&mut self, on: bool) {
        // SAFETY: poll is an initialized, open uv_poll_t of this thread's loop.
        unsafe {
            if on {
                uv::uv_ref(self.poll)
            } else {
                uv::uv_unref(self.poll)
            }
        }
    }

    fn kick(&mut self) {
        if !self.kick_armed {
            self.kick_armed = true;
            // A zero timer armed from its own callback would run again in the same timers
            // phase; from there, wait a millisecond so the loop turns.
            let delay = if self.in_kick { 1 } else { 0 };
            // SAFETY: kick is an initialized uv_timer_t of this thread's loop.
            unsafe { uv::uv_timer_start(self.kick, self.kick_cb, delay, 0) };
        }
    }

    fn in_kick(&mut self, on: bool) {
        if on {
            self.kick_armed = false;
        }
        self.in_kick = on;
    }

    fn start_timer(&mut self, delay: u64) {
        // SAFETY: timer is an initialized uv_timer_t of this thread's loop.
        unsafe { uv::uv_timer_start(self.timer, self.timer_cb, delay, 0) };
    }

    /// An active idle handle also keeps libuv from blocking in poll, which a yielded
    /// connection needs (its data will not produce another readiness edge).
    fn start_idle(&mut self) {
        // SAFETY: idle is an initialized uv_idle_t; starting an active one is a no-op.
        unsafe { uv::uv_idle_start(self.idle, self.idle_cb) };
    }

    fn stop_idle(&mut self) {
        // SAFETY: idle is this thread's initialized uv_idle_t.
        unsafe { uv::uv_idle_stop(self.idle) };
    }
}

impl Drop for UvLoop {
    fn drop(&mut self) {
        // SAFETY: the handles are open; each is freed by its close callback.
        unsafe {
            uv::uv_close(self.poll, close_poll);
            uv::uv_close(self.timer, close_timer);
            uv::uv_close(self.kick, close_timer);
            uv::uv_close(self.idle, close_idle);
        }
    }
}

/// Creates this thread's reactor on `lp`, delivering events to `S`.
///
/// # Safety
/// `lp` must be the live libuv loop of the calling thread, and `teardown` must run before it
/// goes away.
pub unsafe fn install<S: Sink>(
    lp: *mut uv::uv_loop_t,
    methods: Methods,
    status_lines: Vec<Option<Vec<u8>>>,
) -> std::io::Result<()> {
    if REACTOR.with(|c| !c.get().is_null()) {
        return Err(std::io::Error::other(
            "fast-http: the addon is already initialized on this thread",
        ));
    }
    if lp.is_null() {
        return Err(std::io::Error::other("no libuv loop"));
    }
    let poll = Poll::new()?;
    let ring = completions::choose()?;
    if let Some(ring) = ring.as_ref() {
        let fd = ring.fd();
        poll.registry().register(
            &mut mio::unix::SourceFd(&fd),
            mio::Token(completions::RING_TOKEN),
            mio::Interest::READABLE,
        )?;
    }
    let fd = poll.as_raw_fd();
    let handles = UvLoop {
        uv_loop: lp,
        poll: uv::alloc_handle(uv::UV_POLL),
        timer: uv::alloc_handle(uv::UV_TIMER),
        kick: uv::alloc_handle(uv::UV_TIMER),
        idle: uv::alloc_handle(uv::UV_IDLE),
        kick_armed: false,
        in_kick: false,
        kick_cb: on_kick::<S>,
        timer_cb: on_timer::<S>,
        idle_cb: on_idle::<S>,
    };
    // SAFETY: fresh handles initialized on this thread's loop; the timers never keep the
    // process alive (like node's unref'd socket timers), the poll handle only while a
    // listening server or an open connection is ref'd.
    unsafe {
        uv::uv_poll_init(lp, handles.poll, fd);
        uv::uv_poll_start(handles.poll, uv::UV_READABLE, on_poll::<S>);
        uv::uv_unref(handles.poll);
        uv::uv_timer_init(lp, handles.timer);
        uv::uv_unref(handles.timer);
        uv::uv_timer_init(lp, handles.kick);
        uv::uv_unref(handles.kick);
        uv::uv_idle_init(lp, handles.idle);
        uv::uv_unref(handles.idle);
    }
    let mut r = Box::new(Reactor::new(poll, Box::new(handles), methods));
    r.status_lines = status_lines;
    r.ring = ring;
    // SAFETY: uv_version only reads a constant of the running libuv.
    r.hup_is_eof = unsafe { uv::uv_version() } < uv::UV_1_52;
    REACTOR.with(|c| c.set(Box::into_raw(r)));
    UV_LOOP.with(|c| c.set(lp));
    Ok(())
}

/// Tears the reactor down when its env goes away (worker exit, process exit).
pub fn teardown() {
    // A close-phase handle still closing runs nothing.
    UV_LOOP.with(|c| c.set(ptr::null_mut()));
    let p = REACTOR.with(|c| c.replace(std::ptr::null_mut()));
    if p.is_null() {
        return;
    }
    // SAFETY: p came from Box::into_raw in install and was removed from the thread-local, so
    // nothing else can reach it.
    let mut r = unsafe { Box::from_raw(p) };
    r.flush_all();
    // Closes the libuv handles (UvLoop's Drop).
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

unsafe extern "C" fn on_poll<S: Sink>(_h: *mut uv::uv_handle_t, _status: i32, _events: i32) {
    let _ = catch_unwind(run_poll::<S>);
}

unsafe extern "C" fn on_timer<S: Sink>(_h: *mut uv::uv_handle_t) {
    let _ = catch_unwind(run_timers::<S>);
}

unsafe extern "C" fn on_kick<S: Sink>(_h: *mut uv::uv_handle_t) {
    let _ = catch_unwind(|| {
        with(|r| r.handles.in_kick(true));
        batch::<S>(|| {
            with(|r| r.register_pending_listeners());
        });
        with(|r| r.handles.in_kick(false));
    });
}

unsafe extern "C" fn on_idle<S: Sink>(_h: *mut uv::uv_handle_t) {
    let _ = catch_unwind(run_yielded::<S>);
}
