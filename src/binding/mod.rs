//! The only code that touches N-API, and a translator only: every crossing is declared once
//! (`crossings`, with `contract`'s macros: each export's named arguments, read and checked in
//! one step, the object arguments, the callbacks, the constants), and each export's code turns
//! its arguments into a command of the reactor (`crate::reactor::commands`) and its answer
//! into a JS value; the flag values and defaults both sides use (`flags`), the server options
//! (`server`), and the reactor's events as calls into JS (`sink`). No connection state is
//! edited here. The declarations are exported to JS, which generates
//! lib/internal/native.d.ts from them.

mod callback;
mod contexts;
pub mod contract;
pub mod crossings;
mod encode;
pub mod flags;
pub mod napi;
mod response;
mod server;
pub mod sink;
mod socket;
mod uncaught;

use crate::proto::parse::Methods;
use crate::proto::response as wire;
use crate::reactor::{self, driver};
use ::napi::sys;
use callback::{count_crossing, JS_TO_NATIVE};
use contexts::JsCtx;
use contract::Export;
use crossings::{CALLBACKS, EXPORTS};
use napi::{Args, Env, Value};
use sink::JsSink;
use std::cell::Cell;
use std::ptr;

/// Every function JS calls goes through here: `data` is its `Export`.
unsafe extern "C" fn call(env: sys::napi_env, info: sys::napi_callback_info) -> Value {
    napi::guard(env, || {
        // SAFETY: env/info are the ones Node passed to this callback.
        let (a, data) = unsafe { Args::with_data(env, info) };
        // SAFETY: `register` made this function with a pointer into the static `EXPORTS`.
        let e = unsafe { &*(data as *const Export) };
        if e.counted {
            count_crossing();
        }
        let _in_js_call = sink::JsCall::enter();
        (e.f)(a)
    })
}

/// Registers every function on `exports`, and the flag values as `exports.flags`.
pub fn register(env: Env, exports: Value) {
    for e in EXPORTS {
        let data = e as *const Export as *mut std::ffi::c_void;
        napi::define_fn(env, exports, &contract::camel(e.name), Some(call), data);
    }
    let declared = contract::object(
        env,
        EXPORTS,
        CALLBACKS,
        crossings::OBJECTS,
        crossings::TYPES,
        crossings::CONSTANTS,
    );
    napi::set_named(env, exports, "contract", declared);
    let constants = napi::object(env);
    for (name, v) in crossings::CONSTANTS {
        napi::set_named(env, constants, name, napi::i32v(env, *v));
    }
    napi::set_named(env, exports, "constants", constants);
    napi::set_named(env, exports, "flags", flags::object(env));
    napi::set_named(env, exports, "defaults", flags::defaults(env));
    napi::set_named(
        env,
        exports,
        "clientErrorStatus",
        flags::client_error_status(env),
    );
    napi::set_named(env, exports, "callbacks", {
        let names: Vec<Value> = CALLBACKS
            .iter()
            .map(|c| napi::utf8(env, &contract::camel(c.name)))
            .collect();
        napi::array(env, &names)
    });
}

/// `init`: the callbacks, the methods and node's status lines; starts the reactor.
fn init(a: crossings::Init) -> Value {
    let env = a.env;
    let methods: Vec<Vec<u8>> = a.methods.into_iter().map(|m| m.0).collect();
    let mut status: Vec<Option<Vec<u8>>> = vec![None; 1000];
    for (code, reason) in a.status_codes {
        if let Some(slot) = status.get_mut(code as usize) {
            let mut line = Vec::new();
            wire::status_line(&mut line, code as u16, &reason.0);
            *slot = Some(line);
        }
    }
    let mut resource = ptr::null_mut();
    let mut ctx = ptr::null_mut();
    let name = napi::utf8(env, contexts::RESOURCE_NAME);
    // SAFETY: a plain object as the async resource of calls that concern no connection.
    unsafe {
        sys::napi_create_object(env, &mut resource);
        sys::napi_async_init(env, resource, name, &mut ctx);
    }
    let shared = contexts::Shared::new(env, a.events);
    let responses = contexts::Shared::new(env, a.responses);
    let js = JsCtx::new(
        env,
        a.callbacks,
        shared,
        responses,
        napi::reference(env, resource),
        ctx,
    );
    let mut lp = ptr::null_mut();
    // SAFETY: env is the live env of this call.
    unsafe { napi::sys_get_uv_loop(env, &mut lp) };
    // SAFETY: lp is this thread's loop; the cleanup hook below tears the reactor down
    // before the env (and its loop) goes away.
    let installed = unsafe { driver::install::<JsSink>(lp, Methods::new(methods), status) };
    if let Err(e) = installed {
        napi::throw_error(env, "ERR_FAST_HTTP_INIT", &e.to_string());
        return ptr::null_mut();
    }
    contexts::install(js);
    // SAFETY: the hook runs when this env is torn down, on this thread.
    unsafe { sys::napi_add_env_cleanup_hook(env, Some(cleanup), ptr::null_mut()) };
    napi::undefined(env)
}

// closePhase(token) -> boolean: onClosePhase(token) runs as a close callback
// (driver::at_close_phase); false when no loop takes it (the env is going away).
fn close_phase(a: crossings::ClosePhase) -> Value {
    let armed = driver::at_close_phase(a.token as i64, sink::close_phase);
    napi::boolean(a.env, armed)
}

unsafe extern "C" fn cleanup(_arg: *mut std::ffi::c_void) {
    let _ = std::panic::catch_unwind(|| {
        driver::teardown();
        contexts::uninstall();
    });
}

// stats() -> [serversCreated, connectionsAccepted, requestsDispatched, tlsHandshakes,
// driver]: the driver plain connections get ('io_uring' or 'epoll').
fn stats(a: crossings::Stats) -> Value {
    let s = reactor::with(|r| r.stats()).unwrap_or_default();
    let driver = reactor::with(|r| r.driver_name()).unwrap_or("epoll");
    napi::array(
        a.env,
        &[
            napi::f64v(a.env, s.servers_created as f64),
            napi::f64v(a.env, s.connections_accepted as f64),
            napi::f64v(a.env, s.requests_dispatched as f64),
            napi::f64v(a.env, s.tls_handshakes as f64),
            napi::utf8(a.env, driver),
        ],
    )
}

// counters() -> [nativeToJs, jsToNative, writeCalls, readCalls]: crossings (the
// one-crossing-per-response test), write(2) calls (the write-coalescing tests) and read(2)
// calls (one per request).
fn counters(a: crossings::Counters) -> Value {
    let c = reactor::with(|r| r.counters()).unwrap_or_default();
    let to_js = sink::NATIVE_TO_JS.with(Cell::get);
    let to_native = JS_TO_NATIVE.with(Cell::get);
    napi::array(
        a.env,
        &[
            napi::f64v(a.env, to_js as f64),
            napi::f64v(a.env, to_native as f64),
            napi::f64v(a.env, c.write_calls as f64),
            napi::f64v(a.env, c.read_calls as f64),
        ],
    )
}

// testPanicOn(url): the next request for `url` panics inside its batch.
#[cfg(feature = "test-hooks")]
fn test_panic_on(a: crossings::TestPanicOn) -> Value {
    let mut url = Vec::new();
    a.url.latin1_into(&mut url);
    reactor::test_hooks::arm(url);
    napi::undefined(a.env)
}
