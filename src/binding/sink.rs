//! The reactor's events as calls into JS. A group of events (what one read parsed, up to a
//! boundary) goes to JS in one call, `onEvents` (lib/internal/events.js), inside one callback
//! scope in the connection's async context (`contexts`): process ticks and promise jobs run
//! when the scope closes, as after node's own `onread`. Numbers travel in an array shared
//! with JS, the rest as the call's arguments. JS decides what runs now and what waits in its
//! tick queue (lib/http/native-events.js), from a group number the addon writes: a new one
//! wherever JS's ticks ran since (a scope opened, a boundary).

use super::contexts::{self, with_js};
use super::contract::values::{Id, Numbers, OrFalse, Text, MAX_EVENT_NUMBERS};
use super::contract::Invoke;
use super::crossings::{
    cb, TlsSession, BATCH_LAST_READ, BATCH_OPEN, EVENTS_COUNT, EVENTS_GROUP, EVENTS_START,
    RESPONSES_COUNT, RESPONSES_OPEN,
};
use super::encode;
use super::napi::{self, Env, Value};
use super::uncaught::uncaught;
use crate::net::tls::{SessionInfo, TlsFailure};
use crate::reactor::events::{Batch, Event};
use crate::reactor::secure::SecureSink;
use crate::reactor::sink::Sink;
use ::napi::sys;
use std::cell::{Cell, RefCell};
use std::ptr;

thread_local! {
    /// How many scopes are open on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The current group's number (see the module's comment).
    static GROUP: Cell<f64> = const { Cell::new(0.0) };
    /// Calls made into JS (the one-crossing-per-response test counts them).
    pub static NATIVE_TO_JS: Cell<u64> = const { Cell::new(0) };
    /// Node's uncaught-exception path ran (JS's 'uncaughtExceptionMonitor' says so): a tick
    /// that throws is handled inside the tick queue, so closing a scope leaves none pending.
    static UNCAUGHT: Cell<bool> = const { Cell::new(false) };
    /// A call's values while it is put together (kept between calls).
    static VALUES: RefCell<Vec<Value>> = const { RefCell::new(Vec::new()) };
}

/// An exception went to node's uncaught path (`noteUncaught()`).
pub fn note_uncaught() {
    UNCAUGHT.with(|u| u.set(true));
}

fn next_group() {
    GROUP.with(|g| g.set(g.get() + 1.0));
}

fn env() -> Option<Env> {
    with_js(|js| js.env)
}

/// The array shared with JS, as a slice (JS does not run while the addon writes it).
fn shared_slots<'a>() -> Option<&'a mut [f64]> {
    let (data, len) = with_js(|js| (js.shared.data, js.shared.len))?;
    // SAFETY: `data` is the live, aligned memory of the shared Float64Array (held by a
    // reference for the env's life), `len` doubles long; no other slice of it is alive while
    // the addon writes it, and JS does not run meanwhile.
    Some(unsafe { std::slice::from_raw_parts_mut(data, len) })
}

/// Calls `f` with `args` on `recv`: inside a scope a plain call (the open callback scope
/// carries the async context and runs the ticks when it closes: a nested
/// napi_make_callback would only push and pop the same context again, about 5 % of a
/// pipelined request's CPU in perf), else as a callback of its own in `ctx`. Returns true
/// when it threw (the exception went to node's uncaught-exception path).
fn invoke(env: Env, ctx: sys::napi_async_context, recv: Value, f: Value, args: &[Value]) -> bool {
    let mut result = ptr::null_mut();
    NATIVE_TO_JS.with(|n| n.set(n.get() + 1));
    let n = args.len();
    let status = if DEPTH.with(Cell::get) > 0 {
        // SAFETY: f is a live function; args are live values in the open handle scope.
        unsafe { sys::napi_call_function(env, recv, f, n, args.as_ptr(), &mut result) }
    } else {
        // SAFETY: as above; ctx is the live async context of `recv`.
        unsafe { sys::napi_make_callback(env, ctx, recv, f, n, args.as_ptr(), &mut result) }
    };
    let threw = status == sys::Status::napi_pending_exception;
    if threw {
        uncaught(env);
    }
    threw
}

/// Hands `events` of `batch` to `onEvents`, as few calls as the shared array allows, in the
/// context `recv` / `ctx`: their numbers written straight into the array, their other fields
/// as the call's arguments. Returns whether JS holds events in its tick queue. A throw ends
/// the delivery: JS stopped where node's parser would have (the rest is never emitted).
fn hand_over(
    env: Env,
    ctx: sys::napi_async_context,
    recv: Value,
    batch: &Batch,
    events: &[Event],
) -> bool {
    let (Some(on_events), Some(slots)) = (with_js(|js| js.on_events), shared_slots()) else {
        return false;
    };
    let f = napi::deref(env, on_events);
    let mut vals = VALUES.with(|v| std::mem::take(&mut *v.borrow_mut()));
    let start = EVENTS_START as usize;
    let mut waiting = false;
    let mut next = 0;
    while next < events.len() {
        vals.clear();
        let mut nums = Numbers {
            slots: &mut *slots,
            at: start,
        };
        let mut count = 0;
        while let Some(e) = events.get(next) {
            if nums.at + MAX_EVENT_NUMBERS > nums.slots.len() {
                break;
            }
            encode::event(env, batch, e, &mut nums, &mut vals);
            count += 1;
            next += 1;
        }
        slots[EVENTS_GROUP as usize] = GROUP.with(Cell::get);
        slots[EVENTS_COUNT as usize] = count as f64;
        let threw = invoke(env, ctx, recv, f, &vals);
        // JS wrote it back when the call ended or threw.
        waiting = slots[EVENTS_COUNT as usize] != 0.0;
        if threw || count == 0 {
            break;
        }
    }
    vals.clear();
    VALUES.with(|v| *v.borrow_mut() = vals);
    waiting
}

/// Calls the direct callback `args` are for, in connection `id`'s context.
fn call<C: Invoke>(id: Option<u64>, args: C) {
    let Some(env) = env() else { return };
    let scoped = DEPTH.with(Cell::get) > 0;
    let mut handles = ptr::null_mut();
    if !scoped {
        next_group();
        // SAFETY: called on the JS thread from a libuv callback (no JS frame below us).
        unsafe { sys::napi_open_handle_scope(env, &mut handles) };
    }
    let found = contexts::context(id).and_then(|(resource, ctx)| {
        let f = with_js(|js| js.direct.get(C::INDEX).copied().flatten()).flatten()?;
        Some((f, resource, ctx))
    });
    if let Some((f, resource, ctx)) = found {
        let args = args.values(env);
        // The group JS's queue policy reads.
        if let Some(slots) = shared_slots() {
            slots[EVENTS_GROUP as usize] = GROUP.with(Cell::get);
        }
        // napi_make_callback needs an object receiver: the async resource.
        invoke(
            env,
            ctx,
            napi::deref(env, resource),
            napi::deref(env, f),
            args.as_ref(),
        );
    }
    if !scoped {
        // SAFETY: closes the scope opened above.
        unsafe { sys::napi_close_handle_scope(env, handles) };
    }
}

/// A callback scope (and the handle scope of its calls) in one connection's context.
pub struct Scope {
    env: Env,
    handles: sys::napi_handle_scope,
    callback: sys::napi_callback_scope,
    resource: sys::napi_ref,
    ctx: sys::napi_async_context,
}

impl Scope {
    /// Closes the callback scope (JS runs its ticks and promise jobs, as at the end of one of
    /// node's parser callbacks) and opens the next one in the same context.
    fn boundary(&mut self) -> bool {
        let mut pending = false;
        UNCAUGHT.with(|u| u.set(false));
        // SAFETY: the callback scope is open (opened in `scope()` or the last boundary) and
        // the handle scope around it stays open; resource and context are live.
        unsafe {
            sys::napi_close_callback_scope(self.env, self.callback);
            sys::napi_is_exception_pending(self.env, &mut pending);
            if pending {
                uncaught(self.env);
            }
            let resource = napi::deref(self.env, self.resource);
            sys::napi_open_callback_scope(self.env, resource, self.ctx, &mut self.callback);
        }
        next_group();
        pending || UNCAUGHT.with(Cell::get)
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
        // SAFETY: closes the scopes opened in `scope()`, innermost first. Closing the callback
        // scope runs the tick queue; an exception from it is Node's uncaught exception.
        unsafe {
            sys::napi_close_callback_scope(self.env, self.callback);
            let mut pending = false;
            sys::napi_is_exception_pending(self.env, &mut pending);
            if pending {
                uncaught(self.env);
            }
            sys::napi_close_handle_scope(self.env, self.handles);
        }
        next_group();
    }
}

/// The close callback `closePhase(token)` armed (reactor::driver::at_close_phase): JS emits
/// the 'close' it stands for, in a callback scope of its own as node's close callbacks.
pub fn close_phase(token: i64) {
    call(
        None,
        cb::ClosePhase {
            token: token as f64,
        },
    );
}

/// The N-API embedder of the reactor.
pub struct JsSink;

impl Sink for JsSink {
    type Scope = Scope;

    fn scope(id: Option<u64>) -> Option<Scope> {
        let env = env()?;
        let mut handles = ptr::null_mut();
        // SAFETY: on the JS thread in a libuv callback (no JS frame below us).
        unsafe { sys::napi_open_handle_scope(env, &mut handles) };
        let Some((rref, ctx)) = contexts::context(id) else {
            // SAFETY: closes the scope opened above.
            unsafe { sys::napi_close_handle_scope(env, handles) };
            return None;
        };
        let mut callback = ptr::null_mut();
        // SAFETY: the resource and context are live; the handle scope is open.
        unsafe {
            let resource = napi::deref(env, rref);
            sys::napi_open_callback_scope(env, resource, ctx, &mut callback);
        }
        DEPTH.with(|d| d.set(d.get() + 1));
        next_group();
        Some(Scope {
            env,
            handles,
            callback,
            resource: rref,
            ctx,
        })
    }

    fn boundary(scope: &mut Scope) -> bool {
        scope.boundary()
    }

    fn deliver(scope: &mut Scope, batch: &mut Batch) -> bool {
        let recv = napi::deref(scope.env, scope.resource);
        let waiting = hand_over(scope.env, scope.ctx, recv, batch, &batch.events);
        batch.clear();
        waiting
    }

    fn emit(batch: &mut Batch) {
        let Some(env) = env() else {
            batch.clear();
            return;
        };
        for e in &batch.events {
            let close = matches!(e, Event::Close { .. });
            let mut handles = ptr::null_mut();
            // SAFETY: on the JS thread from a libuv callback (no JS frame below us). Opened
            // before the context is looked up: an event of a connection JS has not seen yet
            // (a reset before its first byte) makes the context here, with N-API calls and
            // JS that need a handle scope (without one V8 aborts the process).
            unsafe { sys::napi_open_handle_scope(env, &mut handles) };
            if let Some((resource, ctx)) = contexts::context(contexts::own_context(close, e.conn()))
            {
                next_group();
                let recv = napi::deref(env, resource);
                hand_over(env, ctx, recv, batch, std::slice::from_ref(e));
            }
            // SAFETY: closes the scope opened above.
            unsafe { sys::napi_close_handle_scope(env, handles) };
        }
        batch.clear();
    }

    fn released(id: u64) {
        contexts::released(id);
    }

    fn batch_open(open: bool) -> bool {
        let Some(slots) = contexts::responses() else {
            return false;
        };
        slots[RESPONSES_OPEN as usize] = if open { BATCH_OPEN as f64 } else { 0.0 };
        slots[RESPONSES_COUNT as usize] != 0.0
    }

    fn last_read(last: bool) {
        if let Some(slots) = contexts::responses() {
            if slots[RESPONSES_OPEN as usize] != 0.0 {
                let state = if last { BATCH_LAST_READ } else { BATCH_OPEN };
                slots[RESPONSES_OPEN as usize] = state as f64;
            }
        }
    }

    fn take_responses() {
        let queued = contexts::responses().is_some_and(|s| s[RESPONSES_COUNT as usize] != 0.0);
        if queued {
            take_responses();
        }
    }
}

/// Calls JS's `takeResponses` (it calls `respond_batch`): a plain call, not a callback of its
/// own, since it runs no code of the app's and queues no ticks.
fn take_responses() {
    let Some(env) = env() else { return };
    let Some(f) = with_js(|js| js.direct.get(<cb::TakeResponses as Invoke>::INDEX).copied())
        .flatten()
        .flatten()
    else {
        return;
    };
    let mut handles = ptr::null_mut();
    let mut result = ptr::null_mut();
    // SAFETY: on the JS thread from a libuv callback (no JS frame below us); f is a live
    // function held by reference; the handle scope is closed after the call.
    unsafe {
        sys::napi_open_handle_scope(env, &mut handles);
        NATIVE_TO_JS.with(|n| n.set(n.get() + 1));
        let status = sys::napi_call_function(
            env,
            napi::undefined(env),
            napi::deref(env, f),
            0,
            ptr::null(),
            &mut result,
        );
        if status == sys::Status::napi_pending_exception {
            uncaught(env);
        }
        sys::napi_close_handle_scope(env, handles);
    }
}

impl SecureSink for JsSink {
    fn secure(sid: u32, id: u64, info: &SessionInfo) {
        let session = TlsSession {
            protocol: info.protocol,
            cipher_name: info.cipher.0,
            standard_name: info.cipher.1,
            alpn_protocol: OrFalse(info.alpn.as_deref().map(Text)),
            servername: OrFalse(info.servername.as_deref().map(|s| Text(s.as_bytes()))),
            resumed: info.resumed,
            peer_chain: info.peer_chain.iter().map(Vec::as_slice).collect(),
            authorization_error: OrFalse(info.authorization_error),
        };
        call(
            Some(id),
            cb::Secure {
                sid,
                id: Id(id),
                session,
            },
        );
    }

    fn tls_error(id: u64, e: &TlsFailure) {
        let message = e.to_string();
        let args = cb::TlsError {
            id: Id(id),
            code: e.code,
            message: &message,
        };
        call(Some(id), args);
    }

    fn tls_client_error(sid: u32, id: u64, e: &TlsFailure) {
        let message = e.to_string();
        let args = cb::TlsClientError {
            sid,
            id: Id(id),
            code: e.code,
            message: &message,
        };
        call(Some(id), args);
    }

    fn keylog(sid: u32, id: u64, line: &[u8]) {
        call(
            Some(id),
            cb::Keylog {
                sid,
                id: Id(id),
                line,
            },
        );
    }

    fn sni_request(sid: u32, id: u64, servername: &str, protocols: &[Vec<u8>]) {
        // The protocols as on the wire (each prefixed by its length), as node's
        // callALPNCallback reads them.
        let mut wire = Vec::new();
        for p in protocols {
            wire.push(p.len() as u8);
            wire.extend_from_slice(p);
        }
        let args = cb::SniRequest {
            sid,
            id: Id(id),
            servername,
            protocols: &wire,
        };
        call(Some(id), args);
    }

    fn tls_hand_off(sid: u32, id: u64, fd: i32, read: &[u8]) {
        let args = cb::TlsHandOff {
            sid,
            id: Id(id),
            fd,
            read,
        };
        call(Some(id), args);
    }
}
