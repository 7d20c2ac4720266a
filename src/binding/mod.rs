//! The only code that touches N-API, and a translator only: one table of the functions JS
//! calls (`EXPORTS`, made with `callback::export!`), each turning its N-API arguments into a
//! command of the reactor (`crate::reactor::commands`) and its answer into a JS value; the
//! flag values both sides use (`flags`, exported to JS), the server options (`server`), and
//! the reactor's events as calls into JS (`sink`). No connection state is edited here.

mod callback;
pub mod flags;
pub mod napi;
mod response;
mod server;
pub mod sink;
mod socket;

use crate::proto::encode;
use crate::proto::parse::Methods;
use crate::reactor::{self, driver};
use ::napi::sys;
use callback::{export, undef, JS_TO_NATIVE};
use napi::{Env, Value};
use sink::{JsCtx, JsSink, CALLBACK_NAMES};
use std::cell::Cell;
use std::ptr;

type Export = (
    &'static str,
    unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> Value,
);

/// Every function JS can call.
const EXPORTS: &[Export] = &[
    ("init", init),
    ("serverCreate", server::create),
    ("serverConfig", server::config),
    ("serverFlags", server::flags),
    ("listenTcp", server::listen_tcp),
    ("listenUnix", server::listen_unix),
    ("adoptListener", server::adopt_listener),
    ("adoptConnection", server::adopt_connection),
    ("serverClose", server::close),
    ("serverFree", server::free),
    ("serverRef", server::set_ref),
    ("serverConns", server::conns),
    ("respond", response::respond),
    ("send", response::send),
    ("finish", response::finish),
    ("raw", socket::raw),
    ("flush", socket::flush),
    ("flushAll", socket::flush_all),
    ("pause", socket::pause),
    ("inject", socket::inject),
    ("decideUpgrade", socket::decide_upgrade),
    ("discardBody", socket::discard_body),
    ("tap", socket::tap),
    ("destroy", socket::destroy),
    ("shutdown", socket::shutdown),
    ("setTimeout", socket::set_timeout),
    ("setNoDelay", socket::set_no_delay),
    ("setKeepAlive", socket::set_keep_alive),
    ("connRef", socket::conn_ref),
    ("watch", socket::watch),
    ("info", socket::info),
    ("ioStats", socket::io_stats),
    ("stats", stats),
    ("counters", counters),
    #[cfg(feature = "test-hooks")]
    ("testPanicOn", test_panic_on),
];

/// Registers every function on `exports`, and the flag values as `exports.flags`.
pub fn register(env: Env, exports: Value) {
    for (name, f) in EXPORTS {
        napi::define_fn(env, exports, name, Some(*f));
    }
    napi::set_named(env, exports, "flags", flags::object(env));
    napi::set_named(env, exports, "serverOptions", server::option_names(env));
    napi::set_named(env, exports, "callbacks", {
        let names: Vec<Value> = CALLBACK_NAMES.iter().map(|n| napi::utf8(env, n)).collect();
        napi::array(env, &names)
    });
}

// init(callbacks, methods[], statusCodes[code, message, ...])
export!(init, |a| {
    let env = a.env;
    let Some(cbs_obj) = a.get(0) else {
        return undef(&a);
    };
    let cbs = CALLBACK_NAMES
        .iter()
        .map(|name| napi::reference(env, napi::get_named(env, cbs_obj, name)))
        .collect();
    let mut methods = Vec::new();
    if let Some(arr) = a.get(1) {
        for i in 0..napi::array_len(env, arr) {
            let mut v = Vec::new();
            napi::string_into(
                env,
                napi::element(env, arr, i),
                &mut v,
                napi::Encoding::Latin1,
            );
            methods.push(v);
        }
    }
    let mut status: Vec<Option<Vec<u8>>> = vec![None; 1000];
    if let Some(arr) = a.get(2) {
        let n = napi::array_len(env, arr);
        let mut i = 0;
        while i + 1 < n {
            let code = napi::u32_of(env, napi::element(env, arr, i)) as usize;
            let mut msg = Vec::new();
            napi::string_into(
                env,
                napi::element(env, arr, i + 1),
                &mut msg,
                napi::Encoding::Latin1,
            );
            if code < status.len() {
                let mut line = Vec::new();
                encode::status_line(&mut line, code as u16, &msg);
                status[code] = Some(line);
            }
            i += 2;
        }
    }
    let mut resource = ptr::null_mut();
    let mut ctx = ptr::null_mut();
    let name = napi::utf8(env, sink::RESOURCE_NAME);
    // SAFETY: a plain object as the async resource of calls that concern no connection.
    unsafe {
        sys::napi_create_object(env, &mut resource);
        sys::napi_async_init(env, resource, name, &mut ctx);
    }
    let js = JsCtx::new(env, cbs, napi::reference(env, resource), ctx);
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
    sink::install(js);
    // SAFETY: the hook runs when this env is torn down, on this thread.
    unsafe { sys::napi_add_env_cleanup_hook(env, Some(cleanup), ptr::null_mut()) };
    undef(&a)
});

unsafe extern "C" fn cleanup(_arg: *mut std::ffi::c_void) {
    let _ = std::panic::catch_unwind(|| {
        driver::teardown();
        sink::uninstall();
    });
}

// stats() -> [serversCreated, connectionsAccepted, requestsDispatched]
export!(uncounted stats, |a| {
    let s = reactor::with(|r| r.stats).unwrap_or_default();
    napi::array(
        a.env,
        &[
            napi::f64v(a.env, s.servers_created as f64),
            napi::f64v(a.env, s.connections_accepted as f64),
            napi::f64v(a.env, s.requests_dispatched as f64),
        ],
    )
});

// counters() -> [nativeToJs, jsToNative, writeCalls, readCalls]: crossings (the
// one-crossing-per-response test), write(2) calls (the write-coalescing tests) and read(2)
// calls (one per request).
export!(uncounted counters, |a| {
    let c = reactor::with(|r| r.counters).unwrap_or_default();
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
});

// testPanicOn(url): the next request for `url` panics inside its batch.
#[cfg(feature = "test-hooks")]
export!(test_panic_on, |a| {
    let mut url = Vec::new();
    a.latin1_into(0, &mut url);
    reactor::test_hooks::arm(url);
    undef(&a)
});
