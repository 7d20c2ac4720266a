//! Each connection's async context: node's parser is one async resource per connection, so
//! what a handler stores with AsyncLocalStorage stays with its connection. A connection's
//! resource is JS's (`newResource`: an AsyncResource), made on first need; calls that concern
//! no connection run in the addon's own. Also what the binding keeps of JS per thread: the
//! env, the registered callbacks, and the array batches of events share with JS.

use super::contract::values::Id;
use super::contract::Invoke;
use super::crossings::cb;
use super::napi::{self, Env, Value};
use crate::reactor::slots::index_of;
use ::napi::sys;
use std::cell::RefCell;
use std::ptr;

/// The async resource type of connections' contexts, as node's parser resource is named.
pub const RESOURCE_NAME: &str = "HTTPINCOMINGMESSAGE";

/// One connection's async context.
struct ConnCtx {
    id: u64,
    resource: sys::napi_ref,
    ctx: sys::napi_async_context,
    /// JS said its resource carries the context's async ids: its groups may be batched.
    ready: bool,
}

/// The memory of a Float64Array shared with JS (batches of events, lib/internal/events.js;
/// queued responses, lib/http/response-batch.js): held by a reference, so it stays where it
/// is.
pub struct Shared {
    pub data: *mut f64,
    pub len: usize,
    _buffer: sys::napi_ref,
}

pub struct JsCtx {
    pub env: Env,
    /// The direct callbacks, at their places in `CALLBACKS` (None at an event's).
    pub direct: Vec<Option<sys::napi_ref>>,
    /// The function a connection's group of events is handed to.
    pub on_events: sys::napi_ref,
    /// The function many connections' groups are handed to.
    pub on_batch: sys::napi_ref,
    pub shared: Shared,
    /// The array ended responses wait in until the batch takes them.
    pub responses: Shared,
    /// The context of calls that concern no connection (servers).
    pub resource: sys::napi_ref,
    pub async_ctx: sys::napi_async_context,
    conns: Vec<Option<ConnCtx>>,
}

impl JsCtx {
    pub fn new(
        env: Env,
        registered: super::crossings::Registered,
        shared: Shared,
        responses: Shared,
        resource: sys::napi_ref,
        async_ctx: sys::napi_async_context,
    ) -> JsCtx {
        JsCtx {
            env,
            direct: registered.direct,
            on_events: registered.on_events,
            on_batch: registered.on_batch,
            shared,
            responses,
            resource,
            async_ctx,
            conns: Vec::new(),
        }
    }
}

impl Shared {
    /// Holds JS's array (a reference keeps its memory where it is).
    pub fn new(env: Env, array: super::contract::values::SharedF64) -> Shared {
        Shared {
            data: array.data,
            len: array.len,
            _buffer: napi::reference(env, array.value),
        }
    }
}

thread_local! {
    static JS: RefCell<Option<JsCtx>> = const { RefCell::new(None) };
}

pub fn install(js: JsCtx) {
    JS.with(|j| *j.borrow_mut() = Some(js));
}

/// Runs `f` with this thread's JS state, if any (never call JS inside it).
pub fn with_js<T>(f: impl FnOnce(&JsCtx) -> T) -> Option<T> {
    JS.with(|j| j.borrow().as_ref().map(f))
}

/// The array queued responses wait in (lib/http/response-batch.js), as a slice: JS does not
/// run while the addon reads or writes it.
pub fn responses<'a>() -> Option<&'a mut [f64]> {
    let (data, len) = with_js(|js| (js.responses.data, js.responses.len))?;
    // SAFETY: `data` is the live, aligned memory of the shared Float64Array (held by a
    // reference for the env's life), `len` doubles long; the addon holds no other slice of
    // it while this one is used, and JS does not run meanwhile.
    Some(unsafe { std::slice::from_raw_parts_mut(data, len) })
}

/// Drops every connection context (the env is going away).
pub fn uninstall() {
    let js = JS.with(|j| j.borrow_mut().take());
    if let Some(mut js) = js {
        for c in js.conns.drain(..).flatten() {
            // SAFETY: the env is still alive in its cleanup hook; each context and reference
            // is released once.
            unsafe {
                sys::napi_async_destroy(js.env, c.ctx);
                sys::napi_delete_reference(js.env, c.resource);
            }
        }
    }
}

/// The (resource, context) calls for `id` run in, made on first need. A connection's resource
/// is JS's (`callbacks.newResource`: an AsyncResource) and the `this` of its callbacks: what JS
/// runs from its tick queue runs in it (lib/http/tick-queue.js), so AsyncLocalStorage sees
/// one store per connection whichever way a listener is called, as with node's parser
/// resource.
pub fn context(id: Option<u64>) -> Option<(sys::napi_ref, sys::napi_async_context)> {
    let found = JS.with(|j| {
        let j = j.borrow();
        let js = j.as_ref()?;
        let Some(id) = id else {
            return Some(Found::Ready(js.resource, js.async_ctx));
        };
        Some(match js.conns.get(index_of(id)) {
            Some(Some(c)) if c.id == id => Found::Ready(c.resource, c.ctx),
            _ => {
                let factory = js.direct.get(<cb::NewResource as Invoke>::INDEX);
                Found::Make(js.env, (*factory?)?)
            }
        })
    })?;
    let (env, factory) = match found {
        Found::Ready(resource, ctx) => return Some((resource, ctx)),
        Found::Make(env, factory) => (env, factory),
    };
    let id = id?;
    let sid = crate::reactor::with(|r| r.server_of(id)).flatten();
    // JS runs here (the factory, and async_hooks' init hooks in napi_async_init): no borrow
    // of the context is held.
    let obj = new_resource(env, factory, sid, id);
    let mut ctx = ptr::null_mut();
    // SAFETY: on the JS thread with a live env and an open handle scope; the reference below
    // keeps the resource alive as long as the context.
    unsafe { sys::napi_async_init(env, obj, napi::utf8(env, RESOURCE_NAME), &mut ctx) };
    let resource = napi::reference(env, obj);
    let old = JS.with(|j| {
        let mut j = j.borrow_mut();
        let js = j.as_mut()?;
        let i = index_of(id);
        if js.conns.len() <= i {
            js.conns.resize_with(i + 1, || None);
        }
        js.conns[i].replace(ConnCtx {
            id,
            resource,
            ctx,
            ready: false,
        })
    });
    if let Some(old) = old {
        release_ctx(env, old);
    }
    Some((resource, ctx))
}

/// The connection whose context a call runs in. One whose first event is its close gets none
/// of its own (its async resource would stand for a handle already gone: async_hooks would
/// see a TCPWRAP begin at its end): it closes in the addon's.
pub fn own_context(close: bool, id: Option<u64>) -> Option<u64> {
    if !close {
        return id;
    }
    let id = id?;
    let has = JS.with(|j| {
        j.borrow()
            .as_ref()
            .is_some_and(|js| matches!(js.conns.get(index_of(id)), Some(Some(c)) if c.id == id))
    });
    has.then_some(id)
}

/// Connection `id`'s resource and context, when they exist and JS said the resource is ready
/// for batches.
pub fn ready(id: u64) -> Option<(sys::napi_ref, sys::napi_async_context)> {
    JS.with(|j| match j.borrow().as_ref()?.conns.get(index_of(id)) {
        Some(Some(c)) if c.id == id && c.ready => Some((c.resource, c.ctx)),
        _ => None,
    })
}

/// JS said connection `id`'s resource is ready for batches.
pub fn set_ready(id: u64) {
    JS.with(|j| {
        if let Some(js) = j.borrow_mut().as_mut() {
            if let Some(Some(c)) = js.conns.get_mut(index_of(id)) {
                if c.id == id {
                    c.ready = true;
                }
            }
        }
    });
}

enum Found {
    Ready(sys::napi_ref, sys::napi_async_context),
    Make(Env, sys::napi_ref),
}

/// A new connection's async resource from JS's factory, given the connection's server (-1
/// when gone) and id (a plain object when it throws, which then goes to the uncaught-exception
/// path, as a throwing async_hooks hook does on node).
fn new_resource(env: Env, factory: sys::napi_ref, sid: Option<u32>, id: u64) -> Value {
    let f = napi::deref(env, factory);
    let args = cb::NewResource {
        sid: sid.map_or(-1.0, f64::from),
        id: Id(id),
    }
    .values(env);
    let mut obj = ptr::null_mut();
    // SAFETY: f is a live function; args are live values in this scope.
    let status = unsafe {
        sys::napi_call_function(
            env,
            napi::undefined(env),
            f,
            args.len(),
            args.as_ptr(),
            &mut obj,
        )
    };
    if status == sys::Status::napi_ok && !obj.is_null() {
        return obj;
    }
    if status == sys::Status::napi_pending_exception {
        super::uncaught::uncaught(env);
    }
    napi::object(env)
}

fn release_ctx(env: Env, c: ConnCtx) {
    // SAFETY: the context and reference were created on this env and are released once.
    unsafe {
        sys::napi_async_destroy(env, c.ctx);
        sys::napi_delete_reference(env, c.resource);
    }
}

/// Connection `id` is gone: its context goes too.
pub fn released(id: u64) {
    JS.with(|j| {
        let mut j = j.borrow_mut();
        let Some(js) = j.as_mut() else { return };
        let env = js.env;
        if let Some(slot) = js.conns.get_mut(index_of(id)) {
            if slot.as_ref().map(|c| c.id) == Some(id) {
                if let Some(c) = slot.take() {
                    release_ctx(env, c);
                }
            }
        }
    });
}
