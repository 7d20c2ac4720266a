//! What crosses between JS and the addon, declared once: the argument types the exported
//! functions take (checked on every call: a missing or mistyped argument throws instead of
//! reading as 0), the callbacks JS registers, and the constants both sides use. JS reads all
//! of it from `binding.contract`; `scripts/check-contract.js` renders it as
//! `lib/internal/native.d.ts` and type-checks lib/ against that file.

use super::napi::{self, Args, Env, Value};
use ::napi::sys;

/// The type of one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A connection id (a double: slot index and generation).
    Id,
    /// A server id.
    Sid,
    Num,
    Bool,
    Str,
    /// A Buffer or another TypedArray.
    Bytes,
    /// A string, a Buffer / TypedArray, or undefined / null (no body).
    Body,
    /// A string, or undefined / null.
    OptStr,
    /// A string or a Buffer / TypedArray.
    Chunk,
    /// A Buffer / TypedArray, or undefined / null.
    OptBytes,
    /// The options of `serverConfig` (`OPTION_TYPES`).
    OptionsObj,
    /// The callbacks object of `init` (`CALLBACKS`).
    CallbacksObj,
    /// A TLS context's settings (`TlsSpec` in `TYPES`).
    TlsSpecObj,
    Array,
}

impl Ty {
    /// The TypeScript type JS must pass.
    pub const fn ts(self) -> &'static str {
        match self {
            Ty::Id | Ty::Sid | Ty::Num => "number",
            Ty::Bool => "boolean",
            Ty::Str => "string",
            Ty::Bytes => "Uint8Array",
            Ty::Body => "string | Uint8Array | undefined | null",
            Ty::OptStr => "string | undefined | null",
            Ty::Chunk => "string | Uint8Array",
            Ty::OptBytes => "Uint8Array | undefined | null",
            Ty::OptionsObj => "ServerOptions",
            Ty::CallbacksObj => "Callbacks",
            Ty::TlsSpecObj => "TlsSpec",
            Ty::Array => "readonly unknown[]",
        }
    }

    fn accepts(self, env: Env, v: Value, t: sys::napi_valuetype) -> bool {
        use sys::ValueType as V;
        let nullish = t == V::napi_undefined || t == V::napi_null;
        match self {
            Ty::Id | Ty::Sid | Ty::Num => t == V::napi_number,
            Ty::Bool => t == V::napi_boolean,
            Ty::Str => t == V::napi_string,
            Ty::OptStr => t == V::napi_string || nullish,
            Ty::Chunk => {
                t == V::napi_string || (t == V::napi_object && napi::bytes_of(env, v).is_some())
            }
            Ty::Bytes => t == V::napi_object && napi::bytes_of(env, v).is_some(),
            Ty::OptBytes => nullish || (t == V::napi_object && napi::bytes_of(env, v).is_some()),
            Ty::Body => {
                t == V::napi_string
                    || nullish
                    || (t == V::napi_object && napi::bytes_of(env, v).is_some())
            }
            Ty::OptionsObj | Ty::CallbacksObj | Ty::TlsSpecObj => t == V::napi_object,
            Ty::Array => t == V::napi_object && napi::is_array(env, v),
        }
    }
}

/// One argument: its name (as the TypeScript declaration shows it) and type.
pub type Arg = (&'static str, Ty);

/// An exported function: what JS calls it, its arguments, what it returns (TypeScript), and
/// the code (`Args` checked against `args` first).
pub struct Export {
    pub name: &'static str,
    pub args: &'static [Arg],
    pub ret: &'static str,
    pub f: fn(Args) -> Value,
    /// Calls count as JS → native crossings (not the introspection the counting test uses).
    pub counted: bool,
}

/// Why `a` does not fit `e`'s arguments, or None when it does.
pub fn mismatch(a: &Args, e: &Export) -> Option<String> {
    if a.argc > e.args.len() {
        return Some(format!(
            "fast-http: {}() takes {} arguments, got {}",
            e.name,
            e.args.len(),
            a.argc
        ));
    }
    for (i, &(name, ty)) in e.args.iter().enumerate() {
        let t = a.kind(i);
        let v = a.get(i).unwrap_or(std::ptr::null_mut());
        if !ty.accepts(a.env, v, t) {
            let got = if i < a.argc { kind_name(t) } else { "nothing" };
            return Some(format!(
                "fast-http: {}(): argument '{}' must be {}, got {}",
                e.name,
                name,
                ty.ts(),
                got
            ));
        }
        if ty == Ty::OptionsObj {
            if let Some(msg) = option_mismatch(a.env, v) {
                return Some(format!("fast-http: {}(): {msg}", e.name));
            }
        }
    }
    None
}

/// Why a field of a `serverConfig` options object has the wrong type (absent, undefined and
/// null fields are not applied).
fn option_mismatch(env: Env, obj: Value) -> Option<String> {
    use sys::ValueType as V;
    for &(name, ts) in OPTION_TYPES {
        let v = napi::get_named(env, obj, name);
        let mut t = V::napi_undefined;
        // SAFETY: v is a live value of the current call.
        unsafe { sys::napi_typeof(env, v, &mut t) };
        let want = if ts == S {
            V::napi_string
        } else {
            V::napi_number
        };
        if t != want && t != V::napi_undefined && t != V::napi_null {
            return Some(format!("options.{name} must be {ts}, got {}", kind_name(t)));
        }
    }
    None
}

fn kind_name(t: sys::napi_valuetype) -> &'static str {
    use sys::ValueType as V;
    match t {
        V::napi_undefined => "undefined",
        V::napi_null => "null",
        V::napi_boolean => "a boolean",
        V::napi_number => "a number",
        V::napi_string => "a string",
        V::napi_symbol => "a symbol",
        V::napi_function => "a function",
        V::napi_bigint => "a bigint",
        _ => "an object",
    }
}

/// A callback JS registers with `init`: its name and the arguments the addon passes. The
/// order is `sink::Cb`'s.
pub type Callback = (&'static str, &'static [(&'static str, &'static str)]);

const N: &str = "number";
const S: &str = "string";
const B: &str = "Buffer";

pub const CALLBACKS: [Callback; 22] = [
    (
        "onRequest",
        &[
            ("sid", N),
            ("id", N),
            ("seq", N),
            ("method", S),
            ("url", S),
            ("headerBlock", S),
            ("flags", N),
            ("body", "Buffer | undefined"),
            ("headEnd", N),
        ],
    ),
    (
        "onBody",
        &[
            ("id", N),
            ("seq", N),
            ("chunk", B),
            ("at", N),
            ("queue", "boolean"),
        ],
    ),
    (
        "onBodyEnd",
        &[
            ("id", N),
            ("seq", N),
            ("trailerBlock", "string | undefined"),
        ],
    ),
    ("onDrain", &[("id", N)]),
    ("onClose", &[("id", N), ("errno", N)]),
    ("onReset", &[("sid", N), ("id", N), ("errno", N)]),
    ("onTimeout", &[("id", N), ("sid", N)]),
    (
        "onClientError",
        &[
            ("sid", N),
            ("id", N),
            ("code", S),
            ("reason", S),
            ("rawPacket", "Buffer | undefined"),
            ("bytesParsed", N),
            ("queue", "boolean"),
        ],
    ),
    ("onConnection", &[("sid", N), ("id", N)]),
    ("onDrop", &[("sid", N), ("addresses", "SocketAddresses")]),
    ("onData", &[("id", N), ("chunk", B)]),
    ("onEnd", &[("id", N)]),
    ("onServerDrained", &[("sid", N)]),
    ("onShutdown", &[("id", N)]),
    ("onInternalError", &[("sid", N), ("message", S)]),
    (
        "onUpgrade",
        &[("id", N), ("seq", N), ("head", "Buffer | undefined")],
    ),
    (
        "onSecure",
        &[("sid", N), ("id", N), ("session", "TlsSession")],
    ),
    (
        "onTlsClientError",
        &[("sid", N), ("id", N), ("code", S), ("message", S)],
    ),
    ("onKeylog", &[("sid", N), ("id", N), ("line", B)]),
    (
        "onSniRequest",
        &[("sid", N), ("id", N), ("servername", S), ("protocols", B)],
    ),
    ("newResource", &[("sid", N), ("id", N)]),
    ("onClosePhase", &[("token", N)]),
];

/// Named TypeScript types the declarations above use.
pub const TYPES: &[(&str, &str)] = &[
    (
        "TlsSession",
        "{ protocol: string; cipherName: string; standardName: string; \
         alpnProtocol: string | false; servername: string | false; resumed: boolean; \
         peerChain: Buffer[]; authorizationError: string | false }",
    ),
    (
        "TlsSpec",
        "{ pairs: Array<[cert: Uint8Array, key: Uint8Array]>; ca: Uint8Array[]; \
         roots?: Uint8Array[]; \
         requestCert: boolean; rejectUnauthorized: boolean; minVersion: number; \
         maxVersion: number; alpn: string[]; tickets: boolean; ciphers?: string[]; \
         honorCipherOrder?: boolean; groups?: string[]; sessionTimeout?: number; \
         ticketKeys?: Uint8Array }",
    ),
    (
        "ListenAddress",
        "[address: string, port: number, family: string]",
    ),
    (
        "SocketAddresses",
        "[localAddress?: string, localPort?: number, localFamily?: string, \
         remoteAddress?: string, remotePort?: number, remoteFamily?: string]",
    ),
];

/// The fields of `serverConfig`'s options object (every one optional: a field present is
/// applied), with their TypeScript types. `server::OPTIONS` has the same names.
pub const OPTION_TYPES: &[(&str, &str)] = &[
    ("maxHeaderSize", N),
    ("keepAliveTimeout", N),
    ("timeout", N),
    ("headersTimeout", N),
    ("requestTimeout", N),
    ("checkInterval", N),
    ("flags", N),
    ("keepAliveDelay", N),
    ("maxConnections", N),
    ("maxHeaderLines", N),
    ("keepAliveLine", S),
    ("handshakeTimeout", N),
];

/// `[(name, [(arg, type)])]` as a JS array of `[name, [[arg, type], ...]]`.
fn sigs<'a>(
    env: Env,
    items: impl Iterator<Item = (&'a str, Vec<(&'a str, &'a str)>, &'a str)>,
) -> Value {
    let rows: Vec<Value> = items
        .map(|(name, args, ret)| {
            let args: Vec<Value> = args
                .iter()
                .map(|(n, t)| napi::array(env, &[napi::utf8(env, n), napi::utf8(env, t)]))
                .collect();
            napi::array(
                env,
                &[
                    napi::utf8(env, name),
                    napi::array(env, &args),
                    napi::utf8(env, ret),
                ],
            )
        })
        .collect();
    napi::array(env, &rows)
}

/// The declarations as JS data: `{ exports, callbacks, options, types }`, each a list of
/// `[name, [[arg, type], ...], returnType]` (options and types: `[name, [], type]`).
pub fn object(env: Env, exports: &[Export]) -> Value {
    let obj = napi::object(env);
    let ex = exports.iter().map(|e| {
        (
            e.name,
            e.args.iter().map(|&(n, t)| (n, t.ts())).collect(),
            e.ret,
        )
    });
    napi::set_named(env, obj, "exports", sigs(env, ex));
    let cbs = CALLBACKS
        .iter()
        .map(|&(name, args)| (name, args.to_vec(), "void"));
    napi::set_named(env, obj, "callbacks", sigs(env, cbs));
    let opts = OPTION_TYPES.iter().map(|&(n, t)| (n, Vec::new(), t));
    napi::set_named(env, obj, "options", sigs(env, opts));
    let types = TYPES.iter().map(|&(n, t)| (n, Vec::new(), t));
    napi::set_named(env, obj, "types", sigs(env, types));
    obj
}

#[cfg(test)]
mod tests {
    use super::super::sink::Cb;
    use super::CALLBACKS;

    #[test]
    fn callbacks_are_in_cb_order() {
        let order = [
            (Cb::Request, "onRequest"),
            (Cb::Body, "onBody"),
            (Cb::BodyEnd, "onBodyEnd"),
            (Cb::Drain, "onDrain"),
            (Cb::Close, "onClose"),
            (Cb::Reset, "onReset"),
            (Cb::Timeout, "onTimeout"),
            (Cb::ClientError, "onClientError"),
            (Cb::Connection, "onConnection"),
            (Cb::Drop, "onDrop"),
            (Cb::Data, "onData"),
            (Cb::End, "onEnd"),
            (Cb::ServerDrained, "onServerDrained"),
            (Cb::Shutdown, "onShutdown"),
            (Cb::InternalError, "onInternalError"),
            (Cb::Upgrade, "onUpgrade"),
            (Cb::Secure, "onSecure"),
            (Cb::TlsClientError, "onTlsClientError"),
            (Cb::Keylog, "onKeylog"),
            (Cb::SniRequest, "onSniRequest"),
            (Cb::NewResource, "newResource"),
            (Cb::ClosePhase, "onClosePhase"),
        ];
        assert_eq!(order.len(), CALLBACKS.len());
        for (cb, name) in order {
            assert_eq!(CALLBACKS[cb as usize].0, name);
        }
    }
}
