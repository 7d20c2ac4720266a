//! The reactor's events as calls into JS. A group of events (what one read parsed, up to a
//! boundary) goes to JS in one call, `onEvents` (lib/internal/events.js), inside one callback
//! scope in the connection's async context (`contexts`): process ticks and promise jobs run
//! when the scope closes, as after node's own `onread`. Numbers travel in an array shared
//! with JS, the rest as the call's arguments. JS decides what runs now and what waits in its
//! tick queue (lib/http/native-events.js), from a group number the addon writes: a new one
//! wherever JS's ticks ran since (a scope opened, a boundary).
//!
//! Within one of the loop's batches (a poll's reads), the groups of connections whose
//! events JS only queues wait (`Pending`) and go to JS together, in one `onBatch` call (issue
//! #34 item 1): JS runs each group's ticks and promise jobs before the next group, as node
//! does between two sockets' reads. Anything else that calls JS hands them over first
//! (`flush`), so nothing overtakes them.

use super::contexts::{self, with_js};
use super::contract::values::{Id, Numbers, OrFalse, Text, MAX_EVENT_NUMBERS};
use super::contract::Invoke;
use super::crossings::{
    cb, TlsSession, BATCH_LAST_READ, BATCH_OPEN, EVENTS_AT, EVENTS_COUNT, EVENTS_GROUP,
    EVENTS_PROGRESS, EVENTS_READY, EVENTS_START, RESPONSES_COUNT, RESPONSES_HELD_AT,
    RESPONSES_OPEN,
};
use super::encode;
use super::napi::{self, Env, Value};
use super::uncaught::uncaught;
use crate::conn::F_ASK_UPGRADE;
use crate::net::tls::{SessionInfo, TlsFailure};
use crate::proto::parse::F_UPGRADE;
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
    /// JS → addon calls on the stack (`binding::call`): groups wait for a batch only in the
    /// loop's own callbacks.
    static JS_CALLS: Cell<u32> = const { Cell::new(0) };
    /// One of the loop's batches is open (`batch_open`): it hands its waiting groups over
    /// before it writes.
    static LOOP_BATCH: Cell<bool> = const { Cell::new(false) };
    /// Groups waiting for one onBatch call.
    static PENDING: RefCell<Pending> = const { RefCell::new(Pending::new()) };
    /// The index of the running onBatch call's last group, -1 when none runs.
    static RUNNING_LAST: Cell<f64> = const { Cell::new(-1.0) };
    /// The running onBatch call's last group threw (went to node's uncaught path).
    static LAST_THREW: Cell<bool> = const { Cell::new(false) };
}

/// A batched group's header: its events, its connection (the group's first value is the
/// connection's async resource).
const HEADER: usize = 2;

/// A group waiting in `Pending`.
struct PendingGroup {
    id: u64,
    /// Its header's slot in the events array.
    header: usize,
    /// Events of its scope may still join it (no boundary since).
    open: bool,
}

/// The groups waiting for one onBatch call, their numbers already in the events array.
struct Pending {
    /// The handle scope their values live in (null when none waits).
    handles: sys::napi_handle_scope,
    groups: Vec<PendingGroup>,
    values: Vec<Value>,
    /// The next free slot of the events array.
    at: usize,
}

impl Pending {
    const fn new() -> Pending {
        Pending {
            handles: ptr::null_mut(),
            groups: Vec::new(),
            values: Vec::new(),
            // Groups wait only while no group of onEvents' is being handed over (every
            // other call into JS hands them over first), so they share its slots.
            at: EVENTS_START as usize,
        }
    }
}

/// Held by each JS → addon call (`binding::call`).
pub struct JsCall;

impl JsCall {
    pub fn enter() -> JsCall {
        JS_CALLS.with(|n| n.set(n.get() + 1));
        JsCall
    }
}

impl Drop for JsCall {
    fn drop(&mut self) {
        JS_CALLS.with(|n| n.set(n.get() - 1));
    }
}

/// Whether JS only queues `e` in its tick queue (lib/http/native-events.js's `deliver`), so
/// that it may run in a batch, outside its connection's callback scope. `after_queued`: an
/// event JS queued precedes it in its group.
fn queued_by_js(e: &Event, after_queued: bool) -> bool {
    match e {
        Event::Body { .. } => true,
        Event::Request { flags, .. } => flags & (F_UPGRADE | F_ASK_UPGRADE) == 0,
        // Runs at once, unless events of its group wait in the tick queue.
        Event::BodyEnd { .. } => after_queued,
        _ => false,
    }
}

/// Whether a group may wait for a batch now: in one of the loop's batches, with no JS on the
/// stack and no scope open.
fn may_wait() -> bool {
    LOOP_BATCH.with(Cell::get) && DEPTH.with(Cell::get) == 0 && JS_CALLS.with(Cell::get) == 0
}

/// Adds `batch`'s events to connection `id`'s waiting group (`resource`: its async
/// resource), when JS only queues them and they fit. Returns false when they must go now.
fn wait(env: Env, id: u64, resource: sys::napi_ref, batch: &Batch) -> bool {
    let Some(slots) = shared_slots() else {
        return false;
    };
    let need = HEADER + batch.events.len() * MAX_EVENT_NUMBERS;
    if need > slots.len() - EVENTS_START as usize {
        return false;
    }
    let fits = PENDING.with(|p| p.borrow().at + need <= slots.len());
    if !fits {
        flush();
    }
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        let p = &mut *p;
        let joins = p.groups.last().is_some_and(|g| g.open && g.id == id);
        let mut queued = joins;
        for e in &batch.events {
            if !queued_by_js(e, queued) {
                return false;
            }
            queued = true;
        }
        if p.handles.is_null() {
            // SAFETY: on the JS thread, no JS frame below us and no scope of ours open
            // (`may_wait`); closed by `flush`, before any other scope opens.
            unsafe { sys::napi_open_handle_scope(env, &mut p.handles) };
        }
        if !joins {
            p.groups.push(PendingGroup {
                id,
                header: p.at,
                open: true,
            });
            slots[p.at] = 0.0;
            slots[p.at + 1] = id as f64;
            p.values.push(napi::deref(env, resource));
            p.at += HEADER;
        }
        let header = p.groups.last().map_or(0, |g| g.header);
        let mut nums = Numbers {
            slots: &mut *slots,
            at: p.at,
        };
        for e in &batch.events {
            encode::event(env, batch, e, &mut nums, &mut p.values);
        }
        p.at = nums.at;
        slots[header] += batch.events.len() as f64;
        true
    })
}

/// Closes connection `id`'s waiting group: what its scope delivers next is a group of its own.
fn close_waiting(id: u64) {
    PENDING.with(|p| {
        if let Some(g) = p.borrow_mut().groups.last_mut() {
            if g.id == id {
                g.open = false;
            }
        }
    });
}

/// Hands every waiting group to JS in one onBatch call, in a callback scope of the addon's
/// own context: JS queues their events in its tick queue, where each group's events run in
/// their connection's async scope, followed by node's ticks and promise jobs, when the scope
/// closes (outside any N-API call: a handler's throw reaches node's uncaught path with its
/// source position, as in `Scope`).
pub fn flush() {
    let taken = PENDING.with(|p| {
        let mut p = p.borrow_mut();
        if p.groups.is_empty() {
            return None;
        }
        let handles = std::mem::replace(&mut p.handles, ptr::null_mut());
        let groups = std::mem::take(&mut p.groups);
        let values = std::mem::take(&mut p.values);
        p.at = EVENTS_START as usize;
        Some((handles, groups, values))
    });
    let Some((handles, mut groups, mut values)) = taken else {
        return;
    };
    let Some(env) = env() else { return };
    if let Some(slots) = shared_slots() {
        if let Some(js) = with_js(|js| (js.on_batch, js.resource, js.async_ctx)) {
            run_batch(env, slots, js, &groups, &values);
        }
    }
    // SAFETY: the handle scope `wait` opened; every scope opened since is closed.
    unsafe { sys::napi_close_handle_scope(env, handles) };
    groups.clear();
    values.clear();
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        if p.groups.is_empty() {
            p.groups = groups;
            p.values = values;
        }
    });
}

fn run_batch(
    env: Env,
    slots: &mut [f64],
    (f, resource, ctx): (sys::napi_ref, sys::napi_ref, sys::napi_async_context),
    groups: &[PendingGroup],
    values: &[Value],
) {
    let n = groups.len();
    let base = GROUP.with(|g| {
        let base = g.get() + 1.0;
        // Numbers JS gives the groups, none of which a call made meanwhile reuses.
        g.set(base + n as f64);
        base
    });
    slots[EVENTS_GROUP as usize] = base;
    slots[EVENTS_COUNT as usize] = n as f64;
    slots[EVENTS_PROGRESS as usize] = 0.0;
    slots[EVENTS_AT as usize] = groups[0].header as f64;
    RUNNING_LAST.with(|l| l.set((n - 1) as f64));
    let mut callback = ptr::null_mut();
    let mut result = ptr::null_mut();
    NATIVE_TO_JS.with(|c| c.set(c.get() + 1));
    // SAFETY: on the JS thread with no JS frame below us; the addon's own resource and
    // context live as long as the env; f is a live function and `values` are live in the
    // handle scope `wait` opened. The callback scope is closed below, its handle scope kept.
    unsafe {
        sys::napi_open_callback_scope(env, napi::deref(env, resource), ctx, &mut callback);
        DEPTH.with(|d| d.set(d.get() + 1));
        let status = sys::napi_call_function(
            env,
            napi::undefined(env),
            napi::deref(env, f),
            values.len(),
            values.as_ptr(),
            &mut result,
        );
        if status == sys::Status::napi_pending_exception {
            uncaught(env);
        }
        DEPTH.with(|d| d.set(d.get() - 1));
        sys::napi_close_callback_scope(env, callback);
        let mut pending = false;
        sys::napi_is_exception_pending(env, &mut pending);
        if pending {
            uncaught(env);
        }
    }
    RUNNING_LAST.with(|l| l.set(-1.0));
}

/// An exception went to node's uncaught path (`noteUncaught()`).
pub fn note_uncaught() {
    UNCAUGHT.with(|u| u.set(true));
    let last = RUNNING_LAST.with(Cell::get);
    if last >= 0.0 && shared_slots().is_some_and(|s| s[EVENTS_PROGRESS as usize] == last) {
        LAST_THREW.with(|t| t.set(true));
    }
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
    (id, ctx): (Option<u64>, sys::napi_async_context),
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
        // JS wrote them back when the call ended or threw.
        waiting = slots[EVENTS_COUNT as usize] != 0.0;
        if let (Some(id), true) = (id, slots[EVENTS_READY as usize] != 0.0) {
            contexts::set_ready(id);
        }
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
    flush();
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

/// A callback scope (and the handle scope of its calls) in one connection's context; or,
/// while its events wait for a batch (`waits`), neither yet.
pub struct Scope {
    env: Env,
    id: Option<u64>,
    waits: bool,
    handles: sys::napi_handle_scope,
    callback: sys::napi_callback_scope,
    resource: sys::napi_ref,
    ctx: sys::napi_async_context,
}

impl Scope {
    /// Opens the scope of a group that waited: what waits goes first.
    fn open(&mut self) {
        flush();
        self.waits = false;
        // SAFETY: on the JS thread with no JS frame below us (the group could wait); the
        // resource and context are live.
        unsafe {
            sys::napi_open_handle_scope(self.env, &mut self.handles);
            let resource = napi::deref(self.env, self.resource);
            sys::napi_open_callback_scope(self.env, resource, self.ctx, &mut self.callback);
        }
        DEPTH.with(|d| d.set(d.get() + 1));
        next_group();
    }

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
        if self.waits {
            if let Some(id) = self.id {
                close_waiting(id);
            }
            return;
        }
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
        if let (Some(id), true) = (id, may_wait()) {
            if let Some((resource, ctx)) = contexts::ready(id) {
                return Some(Scope {
                    env,
                    id: Some(id),
                    waits: true,
                    handles: ptr::null_mut(),
                    callback: ptr::null_mut(),
                    resource,
                    ctx,
                });
            }
        }
        flush();
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
            id,
            waits: false,
            handles,
            callback,
            resource: rref,
            ctx,
        })
    }

    fn boundary(scope: &mut Scope) -> bool {
        if scope.waits {
            // Its ticks run in the batch's call, after its events.
            let mine = scope.id.is_some_and(|id| {
                PENDING.with(|p| {
                    p.borrow()
                        .groups
                        .last()
                        .is_some_and(|g| g.id == id && g.open)
                })
            });
            LAST_THREW.with(|t| t.set(false));
            flush();
            next_group();
            return mine && LAST_THREW.with(Cell::get);
        }
        scope.boundary()
    }

    fn deliver(scope: &mut Scope, batch: &mut Batch) -> bool {
        if scope.waits {
            if let Some(id) = scope.id {
                if wait(scope.env, id, scope.resource, batch) {
                    batch.clear();
                    // What JS queued runs at the batch's call.
                    return true;
                }
            }
            scope.open();
        }
        let recv = napi::deref(scope.env, scope.resource);
        let waiting = hand_over(scope.env, (scope.id, scope.ctx), recv, batch, &batch.events);
        batch.clear();
        waiting
    }

    fn emit(batch: &mut Batch) {
        flush();
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
                hand_over(env, (e.conn(), ctx), recv, batch, std::slice::from_ref(e));
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
        if !open {
            flush();
        }
        LOOP_BATCH.with(|b| b.set(open));
        let Some(slots) = contexts::responses() else {
            return false;
        };
        slots[RESPONSES_OPEN as usize] = if open { BATCH_OPEN as f64 } else { 0.0 };
        slots[RESPONSES_HELD_AT as usize] = 0.0;
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
        flush();
        let queued = contexts::responses().is_some_and(|s| s[RESPONSES_COUNT as usize] != 0.0);
        if queued {
            take_responses();
        }
        responses_written();
    }
}

/// The responses JS handed over are about to be written: none is held any more.
pub(super) fn responses_written() {
    if let Some(slots) = contexts::responses() {
        slots[RESPONSES_HELD_AT as usize] = 0.0;
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
