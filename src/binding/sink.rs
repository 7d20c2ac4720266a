//! The reactor's events as calls into JS. Each connection runs its callbacks in an async
//! context of its own (node's parser is one async resource per connection), so what a
//! handler stores with AsyncLocalStorage stays with its connection. A group of calls (all
//! requests parsed from one read) shares one callback scope: process ticks and promise jobs
//! run once when it closes, as after node's own `onread`.

use super::napi::{self, Env, Value};
use crate::net::tls::{SessionInfo, TlsFailure};
use crate::reactor::secure::SecureSink;
use crate::reactor::sink::{ClientError, Request, Sink};
use crate::reactor::slots::index_of;
use ::napi::sys;
use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::ptr;

/// The JS callbacks `init` takes, in `contract::CALLBACKS`'s order (names and arguments).
#[derive(Clone, Copy, Debug)]
pub enum Cb {
    /// (serverId, connId, seq, method, url, headerBlock, flags, body|undefined, headEnd)
    Request = 0,
    /// (connId, seq, chunk, at, queue)
    Body,
    /// (connId, seq, trailerBlock|undefined)
    BodyEnd,
    /// (connId)
    Drain,
    /// (connId, errno)
    Close,
    /// (serverId, connId, errno): a connection JS never saw failed
    Reset,
    /// (connId, serverId)
    Timeout,
    /// (serverId, connId, code, reason, rawPacket|undefined, bytesParsed, queue)
    ClientError,
    /// (serverId, connId)
    Connection,
    /// (serverId, [localAddress, localPort, localFamily, remoteAddress, remotePort,
    /// remoteFamily])
    Drop,
    /// (connId, chunk): bytes of an upgraded connection, or tapped HTTP bytes
    Data,
    /// (connId): the peer ended its side
    End,
    /// (serverId): a closed server's last connection is gone
    ServerDrained,
    /// (connId): FIN went out after socket.end()
    Shutdown,
    /// (serverId|-1, message): fast-http panicked
    InternalError,
    /// (connId, seq, head|undefined): an Upgrade request whose body went through it upgrades
    Upgrade,
    /// (serverId, connId, TlsSession): the TLS handshake completed
    Secure,
    /// (serverId, connId, code, message): a TLS connection failed before its handshake did
    TlsClientError,
    /// (serverId, connId, line): one NSS key-log line of a TLS handshake
    Keylog,
    /// (serverId, connId, servername): the handshake waits for the SNICallback
    SniRequest,
    /// () -> object: a new connection's async resource
    NewResource,
    /// (token): the close callback `closePhase(token)` armed
    ClosePhase,
}

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
            _ => Found::Make(js.env, js.cbs[Cb::NewResource as usize]),
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
fn own_context(cb: Cb, id: Option<u64>) -> Option<u64> {
    if !matches!(cb, Cb::Close) {
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
    let args = [
        napi::f64v(env, sid.map_or(-1.0, f64::from)),
        napi::f64v(env, id as f64),
    ];
    let mut obj = ptr::null_mut();
    // SAFETY: f is a live function; args are live values in this scope.
    let status = unsafe {
        sys::napi_call_function(env, napi::undefined(env), f, 2, args.as_ptr(), &mut obj)
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

/// Calls callback `cb` with the values `build` creates, in connection `id`'s context.
/// Returns true when it threw (the exception went to Node's uncaught-exception path).
fn call<const N: usize>(cb: Cb, id: Option<u64>, build: impl FnOnce(Env) -> [Value; N]) -> bool {
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
    let found = context(own_context(cb, id)).and_then(|(resource, ctx)| {
        let f = JS.with(|j| j.borrow().as_ref().map(|js| js.cbs[cb as usize]))?;
        Some((f, resource, ctx))
    });
    if let Some((fref, rref, async_ctx)) = found {
        let args = build(env);
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
            unsafe { sys::napi_call_function(env, recv, f, N, args.as_ptr(), &mut result) }
        } else {
            // SAFETY: f is a live function; args are live values in this scope.
            unsafe {
                sys::napi_make_callback(env, async_ctx, recv, f, N, args.as_ptr(), &mut result)
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
    call(Cb::ClosePhase, None, |env| [napi::f64v(env, token as f64)]);
}

/// A dropped connection's addresses for net's 'drop' event: [localAddress, localPort,
/// localFamily, remoteAddress, remotePort, remoteFamily].
pub fn addresses(env: Env, local: Option<SocketAddr>, peer: Option<SocketAddr>) -> Value {
    let mut parts = Vec::with_capacity(6);
    for a in [local, peer] {
        match a {
            Some(a) => {
                parts.push(napi::utf8(env, &a.ip().to_string()));
                parts.push(napi::u32v(env, a.port() as u32));
                parts.push(napi::utf8(env, if a.is_ipv6() { "IPv6" } else { "IPv4" }));
            }
            None => parts.extend([napi::undefined(env); 3]),
        }
    }
    napi::array(env, &parts)
}

fn f64v(env: Env, id: u64) -> Value {
    napi::f64v(env, id as f64)
}

fn bytes_or_undefined(env: Env, b: Option<&[u8]>) -> Value {
    match b {
        Some(b) => napi::buffer_copy(env, b),
        None => napi::undefined(env),
    }
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
        call(Cb::Connection, Some(id), |env| {
            [napi::u32v(env, sid), f64v(env, id)]
        });
    }

    fn drop(sid: u32, local: Option<SocketAddr>, peer: Option<SocketAddr>) {
        call(Cb::Drop, None, |env| {
            [napi::u32v(env, sid), addresses(env, local, peer)]
        });
    }

    fn request(q: &Request<'_>) -> bool {
        call(Cb::Request, Some(q.id), |env| {
            [
                napi::u32v(env, q.sid),
                f64v(env, q.id),
                napi::u32v(env, q.seq),
                napi::u32v(env, q.method as u32),
                napi::latin1(env, q.url),
                napi::latin1(env, q.headers),
                napi::u32v(env, q.flags),
                bytes_or_undefined(env, q.body),
                napi::u32v(env, q.head_end),
            ]
        })
    }

    fn body(id: u64, seq: u32, chunk: &[u8], at: u32, queue: bool) -> bool {
        call(Cb::Body, Some(id), |env| {
            [
                f64v(env, id),
                napi::u32v(env, seq),
                napi::buffer_copy(env, chunk),
                napi::u32v(env, at),
                napi::boolean(env, queue),
            ]
        })
    }

    fn body_end(id: u64, seq: u32, trailers: Option<&[u8]>) {
        call(Cb::BodyEnd, Some(id), |env| {
            [
                f64v(env, id),
                napi::u32v(env, seq),
                match trailers {
                    Some(t) => napi::latin1(env, t),
                    None => napi::undefined(env),
                },
            ]
        });
    }

    fn upgrade(id: u64, seq: u32, head: Option<&[u8]>) {
        call(Cb::Upgrade, Some(id), |env| {
            [
                f64v(env, id),
                napi::u32v(env, seq),
                bytes_or_undefined(env, head),
            ]
        });
    }

    fn data(id: u64, chunk: &[u8]) {
        call(Cb::Data, Some(id), |env| {
            [f64v(env, id), napi::buffer_copy(env, chunk)]
        });
    }

    fn client_error(e: &ClientError<'_>, queue: bool) {
        call(Cb::ClientError, Some(e.id), |env| {
            [
                napi::u32v(env, e.sid),
                f64v(env, e.id),
                napi::utf8(env, e.code),
                napi::utf8(env, e.reason),
                bytes_or_undefined(env, e.packet),
                napi::u32v(env, e.at),
                napi::boolean(env, queue),
            ]
        });
    }

    fn drain(id: u64) {
        call(Cb::Drain, Some(id), |env| [f64v(env, id)]);
    }

    fn close(id: u64, errno: i32) {
        call(Cb::Close, Some(id), |env| {
            [f64v(env, id), napi::i32v(env, errno)]
        });
    }

    fn reset(sid: u32, id: u64, errno: i32) {
        call(Cb::Reset, Some(id), |env| {
            [napi::u32v(env, sid), f64v(env, id), napi::i32v(env, errno)]
        });
    }

    fn end(id: u64) {
        call(Cb::End, Some(id), |env| [f64v(env, id)]);
    }

    fn shutdown(id: u64) {
        call(Cb::Shutdown, Some(id), |env| [f64v(env, id)]);
    }

    fn timeout(id: u64, sid: u32) {
        call(Cb::Timeout, Some(id), |env| {
            [f64v(env, id), napi::u32v(env, sid)]
        });
    }

    fn server_drained(sid: u32) {
        call(Cb::ServerDrained, None, |env| [napi::u32v(env, sid)]);
    }

    fn internal_error(sid: Option<u32>, message: &str) {
        call(Cb::InternalError, None, |env| {
            [
                napi::i32v(env, sid.map_or(-1, |s| s as i32)),
                napi::utf8(env, message),
            ]
        });
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
        call(Cb::Secure, Some(id), |env| {
            let o = napi::object(env);
            let str_or_false = |s: Option<&[u8]>| match s {
                Some(s) => napi::latin1(env, s),
                None => napi::boolean(env, false),
            };
            napi::set_named(env, o, "protocol", napi::utf8(env, info.protocol));
            napi::set_named(env, o, "cipherName", napi::utf8(env, info.cipher.0));
            napi::set_named(env, o, "standardName", napi::utf8(env, info.cipher.1));
            napi::set_named(env, o, "alpnProtocol", str_or_false(info.alpn.as_deref()));
            let sni = info.servername.as_deref().map(str::as_bytes);
            napi::set_named(env, o, "servername", str_or_false(sni));
            napi::set_named(env, o, "resumed", napi::boolean(env, info.resumed));
            let chain: Vec<Value> = info
                .peer_chain
                .iter()
                .map(|c| napi::buffer_copy(env, c))
                .collect();
            napi::set_named(env, o, "peerChain", napi::array(env, &chain));
            let authz = match info.authorization_error {
                Some(code) => napi::utf8(env, code),
                None => napi::boolean(env, false),
            };
            napi::set_named(env, o, "authorizationError", authz);
            [napi::u32v(env, sid), f64v(env, id), o]
        });
    }

    fn tls_client_error(sid: u32, id: u64, e: &TlsFailure) {
        call(Cb::TlsClientError, Some(id), |env| {
            [
                napi::u32v(env, sid),
                f64v(env, id),
                napi::utf8(env, e.code),
                napi::utf8(env, &e.to_string()),
            ]
        });
    }

    fn keylog(sid: u32, id: u64, line: &[u8]) {
        call(Cb::Keylog, Some(id), |env| {
            [
                napi::u32v(env, sid),
                f64v(env, id),
                napi::buffer_copy(env, line),
            ]
        });
    }

    fn sni_request(sid: u32, id: u64, servername: &str, protocols: &[Vec<u8>]) {
        // The protocols as on the wire (each prefixed by its length), as node's
        // callALPNCallback reads them.
        let mut wire = Vec::new();
        for p in protocols {
            wire.push(p.len() as u8);
            wire.extend_from_slice(p);
        }
        call(Cb::SniRequest, Some(id), |env| {
            [
                napi::u32v(env, sid),
                f64v(env, id),
                napi::utf8(env, servername),
                napi::buffer_copy(env, &wire),
            ]
        });
    }
}
