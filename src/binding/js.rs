//! Calls from native into JS. A call outside a batch goes through `napi_make_callback` inside
//! its own handle scope, so process.nextTick callbacks and promise jobs run after it exactly as
//! after a node:http event; a throwing handler becomes an uncaught exception, as on node:http.

use super::napi::{self, Env, Value};
use crate::reactor;
use ::napi::sys;
use std::cell::Cell;
use std::ptr;

thread_local! {
    /// How many batch `Scope`s are open on this thread.
    static BATCH_DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// The JS callbacks registered by `init`, in this order.
#[derive(Clone, Copy, Debug)]
pub enum Cb {
    /// (serverId, connId, seq, method, url, headerBlock, flags, body|undefined)
    Request = 0,
    /// (connId, seq, chunk)
    Body,
    /// (connId, seq, trailerBlock|undefined)
    BodyEnd,
    /// (connId)
    Drain,
    /// (connId, errno)
    Close,
    /// (connId, serverId)
    Timeout,
    /// (serverId, connId, code, reason, rawPacket|undefined, bytesParsed)
    ClientError,
    /// (serverId, connId)
    Connection,
    /// (connId, chunk): bytes of an upgraded connection
    Data,
    /// (connId): the peer ended its side
    End,
    /// (serverId): a closed server's last connection is gone
    ServerDrained,
}

pub const CALLBACK_NAMES: [&str; 11] = [
    "onRequest",
    "onBody",
    "onBodyEnd",
    "onDrain",
    "onClose",
    "onTimeout",
    "onClientError",
    "onConnection",
    "onData",
    "onEnd",
    "onServerDrained",
];

pub struct JsCtx {
    pub env: Env,
    pub async_ctx: sys::napi_async_context,
    pub resource: sys::napi_ref,
    pub cbs: Vec<sys::napi_ref>,
}

/// Calls callback `cb` with the values `build` creates (inside the call's handle scope).
pub fn call<const N: usize>(cb: Cb, build: impl FnOnce(Env) -> [Value; N]) {
    let Some((env, async_ctx, fref, rref)) = reactor::with(|r| {
        r.js.as_ref()
            .map(|j| (j.env, j.async_ctx, j.cbs[cb as usize], j.resource))
    })
    .flatten() else {
        return;
    };
    // A batch's own handle scope holds the values of all its calls (a scope per call was an
    // allocation and a free in Node per request).
    let batched = BATCH_DEPTH.with(Cell::get) > 0;
    let mut scope = ptr::null_mut();
    if !batched {
        // SAFETY: called on the JS thread from a libuv callback (no JS frame below us), with
        // the env the reactor was created on.
        unsafe { sys::napi_open_handle_scope(env, &mut scope) };
    }
    let args = build(env);
    let f = napi::deref(env, fref);
    // napi_make_callback needs an object receiver: the async resource.
    let recv = napi::deref(env, rref);
    let mut result = ptr::null_mut();
    reactor::with(|r| r.counters.native_to_js += 1);
    // Inside a batch the open callback scope already carries the async context and runs the
    // ticks when it closes: a nested napi_make_callback would only push and pop the same
    // context again (about 5 % of a pipelined request's CPU in perf).
    let status = if batched {
        // SAFETY: f is a live function; args are live values in this scope.
        unsafe { sys::napi_call_function(env, recv, f, N, args.as_ptr(), &mut result) }
    } else {
        // SAFETY: f is a live function; args are live values in this scope.
        unsafe { sys::napi_make_callback(env, async_ctx, recv, f, N, args.as_ptr(), &mut result) }
    };
    if status == sys::Status::napi_pending_exception {
        let mut err = ptr::null_mut();
        // SAFETY: an exception is pending on env; hand it to Node's uncaught-exception path.
        unsafe {
            sys::napi_get_and_clear_last_exception(env, &mut err);
            sys::napi_fatal_exception(env, err);
        }
    }
    if !batched {
        // SAFETY: closes the scope opened above.
        unsafe { sys::napi_close_handle_scope(env, scope) };
    }
}

/// A callback scope around a batch of calls (all requests parsed from one read): process
/// ticks and promise jobs run once when it closes, as after node's own `onread`, not between
/// the requests of a pipelined batch.
pub struct Scope {
    env: Env,
    handles: sys::napi_handle_scope,
    callback: sys::napi_callback_scope,
}

pub fn scope() -> Option<Scope> {
    let (env, async_ctx, rref) =
        reactor::with(|r| r.js.as_ref().map(|j| (j.env, j.async_ctx, j.resource))).flatten()?;
    let mut handles = ptr::null_mut();
    let mut callback = ptr::null_mut();
    // SAFETY: on the JS thread in a libuv callback; the resource and context are live.
    unsafe {
        sys::napi_open_handle_scope(env, &mut handles);
        let resource = napi::deref(env, rref);
        sys::napi_open_callback_scope(env, resource, async_ctx, &mut callback);
    }
    BATCH_DEPTH.with(|d| d.set(d.get() + 1));
    Some(Scope {
        env,
        handles,
        callback,
    })
}

impl Drop for Scope {
    fn drop(&mut self) {
        BATCH_DEPTH.with(|d| d.set(d.get() - 1));
        // SAFETY: closes the scopes opened in `scope()`, innermost first. Closing the callback
        // scope runs the tick queue; an exception from it is Node's uncaught exception.
        unsafe {
            sys::napi_close_callback_scope(self.env, self.callback);
            let mut pending = false;
            sys::napi_is_exception_pending(self.env, &mut pending);
            if pending {
                let mut err = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(self.env, &mut err);
                sys::napi_fatal_exception(self.env, err);
            }
            sys::napi_close_handle_scope(self.env, self.handles);
        }
    }
}
