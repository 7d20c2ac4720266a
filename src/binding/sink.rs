//! The reactor's events as calls into JS. Each connection runs its callbacks in an async
//! context of its own (node's parser is one async resource per connection), so what a
//! handler stores with AsyncLocalStorage stays with its connection. A group of calls (all
//! requests parsed from one read) shares one callback scope: process ticks and promise jobs
//! run once when it closes, as after node's own `onread`.

use super::contract::values::{Id, OrFalse, Text};
use super::contract::Invoke;
use super::crossings::{cb, Addresses, TlsSession};
use super::napi::{self, Env, Value};
use crate::net::tls::{SessionInfo, TlsFailure};
use crate::reactor::secure::SecureSink;
use crate::reactor::sink::{ClientError, Request, Sink};
use crate::reactor::slots::index_of;
use ::napi::sys;
use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::ptr;

/// The async resource type of connections' contexts, as node's parser resource is named.
pub const RESOURCE_NAME: &str = "HTTPINCOMINGMESSAGE";

/// One connection's async context.
struct ConnCtx {
    id: u64,
    resource: sys::napi_ref,
    ctx: sys::napi_async_context,
}

pub struct JsCtx {
    pub env: Env,
    pub cbs: Vec<sys::napi_ref>,
    /// The context of calls that concern no connection (servers).
    pub resource: sys::napi_ref,
    pub async_ctx: sys::napi_async_context,
    conns: Vec<Option<ConnCtx>>,
}

impl JsCtx {
    pub fn new(
        env: Env,
        cbs: Vec<sys::napi_ref>,
        resource: sys::napi_ref,
        async_ctx: sys::napi_async_context,
    ) -> JsCtx {
        JsCtx {
            env,
            cbs,
            resource,
            async_ctx,
            conns: Vec::new(),
        }
    }
}

thread_local! {
    static JS: RefCell<Option<JsCtx>> = const { RefCell::new(None) };
    /// How many scopes are open on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// JS was called since the innermost scope opened or its last boundary.
    static TOUCHED: Cell<bool> = const { Cell::new(false) };
    /// Calls made into JS (the one-crossing-per-response test counts them).
    pub static NATIVE_TO_JS: Cell<u64> = const { Cell::new(0) };
    /// Node's uncaught-exception path ran (JS's 'uncaughtExceptionMonitor' says so): a tick
    /// that throws is handled inside the tick queue, so closing a scope leaves none pending.
    static UNCAUGHT: Cell<bool> = const { Cell::new(false) };
}

/// An exception went to node's uncaught path (`noteUncaught()`).
pub fn note_uncaught() {
    UNCAUGHT.with(|u| u.set(true));
}

pub fn install(js: JsCtx) {
    JS.with(|j| *j.borrow_mut() = Some(js));
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
fn context(id: Option<u64>) -> Option<(sys::napi_ref, sys::napi_async_context)> {
    let found = JS.with(|j| {
        let j = j.borrow();
        let js = j.as_ref()?;
        let Some(id) = id else {
            return Some(Found::Ready(js.resource, js.async_ctx));
        };
        Some(match js.conns.get(index_of(id)) {
            Some(Some(c)) if c.id == id => Found::Ready(c.resource, c.ctx),
            _ => Found::Make(js.env, js.cbs[<cb::NewResource as Invoke>::INDEX]),
        })
    })?;
    let (env, factory) = match found {
        Found::Ready(resource, ctx) => return Some((resource, ctx)),
        Found::Make(env, factory) => (env, factory),
    };
    let id = id?;
    let sid = crate::reactor::with(|r| r.conn(id).map(|c| c.server)).flatten();
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
        js.conns[i].replace(ConnCtx { id, resource, ctx })
    });
    if let Some(old) = old {
        release_ctx(env, old);
    }
    Some((resource, ctx))
}

/// The connection whose context a call runs in. One whose first event is its close gets none
/// of its own (its async resource would stand for a handle already gone: async_hooks would
/// see a TCPWRAP begin at its end): it closes in the addon's.
fn own_context(index: usize, id: Option<u64>) -> Option<u64> {
    if index != <cb::Close as Invoke>::INDEX {
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
        uncaught(env);
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

/// Calls the callback `args` are for, in connection `id`'s context. Returns true when it
/// threw (the exception went to Node's uncaught-exception path).
fn call<C: Invoke>(id: Option<u64>, args: C) -> bool {
    let Some(env) = JS.with(|j| j.borrow().as_ref().map(|j| j.env)) else {
        return false;
    };
    let mut threw = false;
    // A scope's handle scope holds the values of all its calls (a handle scope per call was
    // an allocation and a free in Node per request).
    let scoped = DEPTH.with(Cell::get) > 0;
    let mut handles = ptr::null_mut();
    if !scoped {
        // SAFETY: called on the JS thread from a libuv callback (no JS frame below us).
        unsafe { sys::napi_open_handle_scope(env, &mut handles) };
    }
    let found = context(own_context(C::INDEX, id)).and_then(|(resource, ctx)| {
        let f = JS.with(|j| j.borrow().as_ref().map(|js| js.cbs[C::INDEX]))?;
        Some((f, resource, ctx))
    });
    if let Some((fref, rref, async_ctx)) = found {
        let args = args.values(env);
        let args = args.as_ref();
        let f = napi::deref(env, fref);
        // napi_make_callback needs an object receiver: the async resource.
        let recv = napi::deref(env, rref);
        let mut result = ptr::null_mut();
        NATIVE_TO_JS.with(|n| n.set(n.get() + 1));
        TOUCHED.with(|t| t.set(true));
        // Inside a scope the open callback scope already carries the async context and runs
        // the ticks when it closes: a nested napi_make_callback would only push and pop the
        // same context again (about 5 % of a pipelined request's CPU in perf).
        let status = if scoped {
            // SAFETY: f is a live function; args are live values in this scope.
            unsafe { sys::napi_call_function(env, recv, f, args.len(), args.as_ptr(), &mut result) }
        } else {
            // SAFETY: f is a live function; args are live values in this scope.
            unsafe {
                let n = args.len();
                sys::napi_make_callback(env, async_ctx, recv, f, n, args.as_ptr(), &mut result)
            }
        };
        if status == sys::Status::napi_pending_exception {
            threw = true;
            uncaught(env);
        }
    }
    if !scoped {
        // SAFETY: closes the scope opened above.
        unsafe { sys::napi_close_handle_scope(env, handles) };
    }
    threw
}

/// Hands a pending exception to Node's uncaught-exception path, as a throwing node:http
/// handler's does. Output already ended goes to the kernel first: the process may exit.
fn uncaught(env: Env) {
    crate::reactor::with(|r| r.flush_all());
    let mut err = ptr::null_mut();
    // SAFETY: an exception is pending on env.
    unsafe {
        sys::napi_get_and_clear_last_exception(env, &mut err);
        sys::napi_fatal_exception(env, err);
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
        TOUCHED.with(|t| t.set(false));
        pending || UNCAUGHT.with(Cell::get)
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
        // A scope inside another one ran JS in the outer one's group.
        TOUCHED.with(|t| t.set(true));
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
        let env = JS.with(|j| j.borrow().as_ref().map(|j| j.env))?;
        let mut handles = ptr::null_mut();
        // SAFETY: on the JS thread in a libuv callback (no JS frame below us).
        unsafe { sys::napi_open_handle_scope(env, &mut handles) };
        let Some((rref, ctx)) = context(id) else {
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
        TOUCHED.with(|t| t.set(false));
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

    fn touched() -> bool {
        TOUCHED.with(Cell::get)
    }

    fn connection(sid: u32, id: u64) {
        call(Some(id), cb::Connection { sid, id: Id(id) });
    }

    fn drop(sid: u32, local: Option<SocketAddr>, peer: Option<SocketAddr>) {
        let addresses = Addresses { local, peer };
        call(None, cb::Dropped { sid, addresses });
    }

    fn request(q: &Request<'_>) -> bool {
        call(
            Some(q.id),
            cb::Request {
                sid: q.sid,
                id: Id(q.id),
                seq: q.seq,
                method: q.method as u32,
                url: Text(q.url),
                header_block: Text(q.headers),
                flags: q.flags,
                body: q.body,
                head_end: q.head_end,
            },
        )
    }

    fn body(id: u64, seq: u32, chunk: &[u8], at: u32, queue: bool) -> bool {
        let args = cb::Body {
            id: Id(id),
            seq,
            chunk,
            at,
            queue,
        };
        call(Some(id), args)
    }

    fn body_end(id: u64, seq: u32, trailers: Option<&[u8]>) {
        let args = cb::BodyEnd {
            id: Id(id),
            seq,
            trailer_block: trailers.map(Text),
        };
        call(Some(id), args);
    }

    fn upgrade(id: u64, seq: u32, head: Option<&[u8]>) {
        call(
            Some(id),
            cb::Upgrade {
                id: Id(id),
                seq,
                head,
            },
        );
    }

    fn data(id: u64, chunk: &[u8]) {
        call(Some(id), cb::Data { id: Id(id), chunk });
    }

    fn client_error(e: &ClientError<'_>, queue: bool) {
        call(
            Some(e.id),
            cb::ClientError {
                sid: e.sid,
                id: Id(e.id),
                code: e.code,
                reason: e.reason,
                raw_packet: e.packet,
                bytes_parsed: e.at,
                queue,
            },
        );
    }

    fn drain(id: u64) {
        call(Some(id), cb::Drain { id: Id(id) });
    }

    fn close(id: u64, errno: i32) {
        call(Some(id), cb::Close { id: Id(id), errno });
    }

    fn reset(sid: u32, id: u64, errno: i32) {
        call(
            Some(id),
            cb::Reset {
                sid,
                id: Id(id),
                errno,
            },
        );
    }

    fn end(id: u64) {
        call(Some(id), cb::End { id: Id(id) });
    }

    fn shutdown(id: u64) {
        call(Some(id), cb::Shutdown { id: Id(id) });
    }

    fn timeout(id: u64, sid: u32) {
        call(Some(id), cb::Timeout { id: Id(id), sid });
    }

    fn server_drained(sid: u32) {
        call(None, cb::ServerDrained { sid });
    }

    fn internal_error(sid: Option<u32>, message: &str) {
        let sid = sid.map_or(-1, |s| s as i32);
        call(None, cb::InternalError { sid, message });
    }

    fn released(id: u64) {
        JS.with(|j| {
            let mut j = j.borrow_mut();
            let Some(js) = j.as_mut() else { return };
            let env = js.env;
            let i = index_of(id);
            if let Some(slot) = js.conns.get_mut(i) {
                if slot.as_ref().map(|c| c.id) == Some(id) {
                    if let Some(c) = slot.take() {
                        release_ctx(env, c);
                    }
                }
            }
        });
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
}
