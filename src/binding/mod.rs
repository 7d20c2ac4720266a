//! The only code that touches N-API, and a translator only: one table of the functions JS
//! calls with their arguments (`EXPORTS`, checked on every call by `call`; the types and the
//! callbacks JS registers are in `contract`), each turning its N-API arguments into a command
//! of the reactor (`crate::reactor::commands`) and its answer into a JS value; the flag values
//! and defaults both sides use (`flags`), the server options (`server`), and the reactor's
//! events as calls into JS (`sink`). No connection state is edited here. The declarations are
//! exported to JS, which generates lib/internal/native.d.ts from them.

mod callback;
pub mod contract;
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
use callback::{count_crossing, export, undef, JS_TO_NATIVE};
use contract::{Arg, Export, Ty, CALLBACKS};
use napi::{Args, Env, Value};
use sink::{JsCtx, JsSink};
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
        if let Some(msg) = contract::mismatch(&a, e) {
            napi::throw_type_error(env, "ERR_INVALID_ARG_TYPE", &msg);
            return ptr::null_mut();
        }
        (e.f)(a)
    })
}

const fn ex(
    name: &'static str,
    args: &'static [Arg],
    ret: &'static str,
    f: fn(Args) -> Value,
) -> Export {
    Export {
        name,
        args,
        ret,
        f,
        counted: true,
    }
}

const ID: Arg = ("id", Ty::Id);
const SID: Arg = ("sid", Ty::Sid);

/// Every function JS can call, with its arguments (checked on each call) and what it returns.
const EXPORTS: &[Export] = &[
    ex(
        "init",
        &[
            ("callbacks", Ty::CallbacksObj),
            ("methods", Ty::Array),
            ("statusCodes", Ty::Array),
        ],
        "void",
        init,
    ),
    ex(
        "serverCreate",
        &[("sameAsLast", Ty::Bool)],
        "number",
        server::create,
    ),
    ex(
        "tlsContextCreate",
        &[("spec", Ty::TlsSpecObj)],
        "number",
        server::tls_context_create,
    ),
    ex(
        "tlsDecodePfx",
        &[("pfx", Ty::Bytes), ("passphrase", Ty::OptStr)],
        "Buffer[] | undefined",
        server::tls_decode_pfx,
    ),
    ex(
        "tlsContextFree",
        &[("ctx", Ty::Num)],
        "void",
        server::tls_context_free,
    ),
    ex(
        "serverSetTls",
        &[SID, ("ctx", Ty::Num)],
        "void",
        server::server_set_tls,
    ),
    ex(
        "tlsAddContext",
        &[
            ("ctx", Ty::Num),
            ("servername", Ty::Str),
            ("other", Ty::Num),
        ],
        "void",
        server::tls_add_context,
    ),
    ex(
        "tlsSniAnswer",
        &[ID, ("ctx", Ty::Num), ("alpn", Ty::Num)],
        "void",
        server::tls_sni_answer,
    ),
    ex(
        "tlsGetTicketKeys",
        &[("ctx", Ty::Num)],
        "Buffer",
        server::tls_get_ticket_keys,
    ),
    ex(
        "tlsSetTicketKeys",
        &[("ctx", Ty::Num), ("keys", Ty::Bytes)],
        "void",
        server::tls_set_ticket_keys,
    ),
    ex(
        "tlsExportKeyingMaterial",
        &[
            ID,
            ("length", Ty::Num),
            ("label", Ty::Str),
            ("context", Ty::OptBytes),
        ],
        "Buffer",
        socket::tls_export_keying_material,
    ),
    ex(
        "serverConfig",
        &[SID, ("options", Ty::OptionsObj)],
        "void",
        server::config,
    ),
    ex(
        "serverFlags",
        &[SID, ("mask", Ty::Num), ("value", Ty::Num)],
        "void",
        server::flags,
    ),
    ex(
        "listenTcp",
        &[
            SID,
            ("ip", Ty::Str),
            ("port", Ty::Num),
            ("backlog", Ty::Num),
            ("reusePort", Ty::Bool),
            ("ipv6Only", Ty::Bool),
        ],
        "ListenAddress | number",
        server::listen_tcp,
    ),
    ex(
        "listenUnix",
        &[SID, ("path", Ty::Str), ("backlog", Ty::Num)],
        "number",
        server::listen_unix,
    ),
    ex(
        "adoptListener",
        &[
            SID,
            ("fd", Ty::Num),
            ("backlog", Ty::Num),
            ("dup", Ty::Bool),
        ],
        "ListenAddress | string | number",
        server::adopt_listener,
    ),
    ex(
        "adoptConnection",
        &[SID, ("fd", Ty::Num)],
        "[id: number, wantsConnectionEvent: boolean] | [SocketAddresses] | [] | number",
        server::adopt_connection,
    ),
    ex("serverClose", &[SID], "number", server::close),
    ex("serverFree", &[SID], "number", server::free),
    ex(
        "serverRef",
        &[SID, ("on", Ty::Bool)],
        "void",
        server::set_ref,
    ),
    ex(
        "serverConns",
        &[SID, ("idleOnly", Ty::Bool)],
        "number[]",
        server::conns,
    ),
    ex(
        "respond",
        &[
            ID,
            ("seq", Ty::Num),
            ("status", Ty::Num),
            ("reason", Ty::OptStr),
            ("headerLines", Ty::Str),
            ("body", Ty::Body),
            ("flags", Ty::Num),
            ("trailers", Ty::OptStr),
        ],
        "number",
        response::respond,
    ),
    ex(
        "send",
        &[
            ID,
            ("seq", Ty::Num),
            ("head", Ty::Str),
            ("body", Ty::Body),
            ("flags", Ty::Num),
            ("trailers", Ty::OptStr),
        ],
        "number",
        response::send,
    ),
    ex(
        "finish",
        &[ID, ("seq", Ty::Num), ("close", Ty::Bool)],
        "void",
        response::finish,
    ),
    ex(
        "raw",
        &[
            ID,
            ("data", Ty::Chunk),
            ("latin1", Ty::Bool),
            ("highWaterMark", Ty::Num),
            ("defer", Ty::Bool),
        ],
        "number",
        socket::raw,
    ),
    ex(
        "flush",
        &[ID, ("highWaterMark", Ty::Num)],
        "number",
        socket::flush,
    ),
    ex("flushAll", &[], "void", socket::flush_all),
    ex("pause", &[ID, ("paused", Ty::Bool)], "void", socket::pause),
    ex(
        "inject",
        &[ID, ("bytes", Ty::Bytes)],
        "void",
        socket::inject,
    ),
    ex(
        "decideUpgrade",
        &[ID, ("upgrade", Ty::Bool)],
        "void",
        socket::decide_upgrade,
    ),
    ex("discardBody", &[ID], "void", socket::discard_body),
    ex(
        "handlerThrew",
        &[ID, ("at", Ty::Num), ("body", Ty::Bool)],
        "void",
        socket::handler_threw,
    ),
    ex("noteUncaught", &[], "void", socket::note_uncaught),
    ex("tap", &[ID, ("on", Ty::Bool)], "void", socket::tap),
    ex(
        "destroy",
        &[ID, ("reset", Ty::Bool), ("assigned", Ty::Num)],
        "void",
        socket::destroy,
    ),
    ex("shutdown", &[ID], "void", socket::shutdown),
    ex("closePhase", &[("token", Ty::Num)], "boolean", close_phase),
    ex(
        "setTimeout",
        &[ID, ("ms", Ty::Num)],
        "void",
        socket::set_timeout,
    ),
    ex(
        "setNoDelay",
        &[ID, ("on", Ty::Bool)],
        "void",
        socket::set_no_delay,
    ),
    ex(
        "setKeepAlive",
        &[ID, ("on", Ty::Bool), ("delaySecs", Ty::Num)],
        "void",
        socket::set_keep_alive,
    ),
    ex("connRef", &[ID, ("on", Ty::Bool)], "void", socket::conn_ref),
    ex("watch", &[ID, ("on", Ty::Bool)], "boolean", socket::watch),
    ex("info", &[ID], "SocketAddresses | undefined", socket::info),
    ex(
        "ioStats",
        &[ID],
        "[bytesRead: number, bytesWritten: number, queued: number] | undefined",
        socket::io_stats,
    ),
    Export {
        counted: false,
        ..ex(
            "stats",
            &[],
            "[serversCreated: number, connectionsAccepted: number, requestsDispatched: number, \
             tlsHandshakes: number]",
            stats,
        )
    },
    Export {
        counted: false,
        ..ex(
            "counters",
            &[],
            "[nativeToJs: number, jsToNative: number, writeCalls: number, readCalls: number]",
            counters,
        )
    },
    #[cfg(feature = "test-hooks")]
    ex("testPanicOn", &[("url", Ty::Str)], "void", test_panic_on),
];

/// Registers every function on `exports`, and the flag values as `exports.flags`.
pub fn register(env: Env, exports: Value) {
    for e in EXPORTS {
        let data = e as *const Export as *mut std::ffi::c_void;
        napi::define_fn(env, exports, e.name, Some(call), data);
    }
    napi::set_named(env, exports, "contract", contract::object(env, EXPORTS));
    napi::set_named(env, exports, "flags", flags::object(env));
    napi::set_named(env, exports, "defaults", flags::defaults(env));
    napi::set_named(
        env,
        exports,
        "clientErrorStatus",
        flags::client_error_status(env),
    );
    napi::set_named(env, exports, "serverOptions", server::option_names(env));
    napi::set_named(env, exports, "callbacks", {
        let names: Vec<Value> = CALLBACKS.iter().map(|(n, _)| napi::utf8(env, n)).collect();
        napi::array(env, &names)
    });
}

// init(callbacks, methods[], statusCodes[code, message, ...])
export!(init, |a| {
    let env = a.env;
    let cbs_obj = a.argv[0];
    let mut cbs = Vec::with_capacity(CALLBACKS.len());
    for (name, _) in CALLBACKS {
        let f = napi::get_named(env, cbs_obj, name);
        if !napi::is_function(env, f) {
            let msg = format!("fast-http: init(): callbacks.{name} must be a function");
            napi::throw_type_error(env, "ERR_INVALID_ARG_TYPE", &msg);
            return ptr::null_mut();
        }
        cbs.push(napi::reference(env, f));
    }
    let mut methods = Vec::new();
    {
        let arr = a.argv[1];
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
    {
        let arr = a.argv[2];
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

// closePhase(token) -> boolean: onClosePhase(token) runs as a close callback
// (driver::at_close_phase); false when no loop takes it (the env is going away).
fn close_phase(a: Args) -> Value {
    let armed = driver::at_close_phase(a.f64(0) as i64, sink::close_phase);
    napi::boolean(a.env, armed)
}

unsafe extern "C" fn cleanup(_arg: *mut std::ffi::c_void) {
    let _ = std::panic::catch_unwind(|| {
        driver::teardown();
        sink::uninstall();
    });
}

// stats() -> [serversCreated, connectionsAccepted, requestsDispatched, tlsHandshakes]
export!(uncounted stats, |a| {
    let s = reactor::with(|r| r.stats).unwrap_or_default();
    napi::array(
        a.env,
        &[
            napi::f64v(a.env, s.servers_created as f64),
            napi::f64v(a.env, s.connections_accepted as f64),
            napi::f64v(a.env, s.requests_dispatched as f64),
            napi::f64v(a.env, s.tls_handshakes as f64),
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
