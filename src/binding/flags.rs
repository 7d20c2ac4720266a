//! Every flag value and constant JS and the addon share, in one place: JS reads them from
//! the addon (`binding.flags`, `binding.defaults`, `binding.clientErrorStatus`) instead of
//! keeping copies.

use super::napi::{self, Env, Value};
use crate::conn::{F_ASK_UPGRADE, F_UPGRADE_BODY};
use crate::proto::errors::{CLIENT_ERROR_STATUS, DEFAULT_CLIENT_ERROR_STATUS};
use crate::proto::parse::*;
use crate::proto::response::*;
use crate::reactor::commands::{L_CLOSE_AFTER, L_TENTATIVE};
use crate::reactor::server::*;
use crate::reactor::slots::INDEX_MASK;

/// (name, value): request facts (F_*), how to write a response (R_*), server settings (S_*).
pub const FLAGS: &[(&str, u32)] = &[
    ("F_HTTP11", F_HTTP11),
    ("F_KEEP_ALIVE", F_KEEP_ALIVE),
    ("F_UPGRADE", F_UPGRADE),
    ("F_EXPECT_CONTINUE", F_EXPECT_CONTINUE),
    ("F_EXPECT_OTHER", F_EXPECT_OTHER),
    ("F_HAS_BODY", F_HAS_BODY),
    ("F_BODY_DONE", F_BODY_DONE),
    ("F_HOST", F_HOST),
    ("F_CONNECT", F_CONNECT),
    ("F_CHUNKED", F_CHUNKED),
    ("F_CONTENT_LENGTH", F_CONTENT_LENGTH),
    ("F_CONN_CLOSE", F_CONN_CLOSE),
    ("F_HTTP10", F_HTTP10),
    ("F_INVALID_TE", F_INVALID_TE),
    ("F_ASK_UPGRADE", F_ASK_UPGRADE),
    ("F_UPGRADE_BODY", F_UPGRADE_BODY),
    // A connection id's slot index: `id & ID_INDEX_MASK` (no two open connections share one).
    ("ID_INDEX_MASK", INDEX_MASK),
    // The request's HTTP version in F_* flags: (flags >>> SHIFT) & MASK per digit.
    ("VERSION_MAJOR_SHIFT", VERSION_SHIFT),
    ("VERSION_MINOR_SHIFT", VERSION_SHIFT + 4),
    ("VERSION_DIGIT_MASK", 0xf),
    ("R_DATE", R_DATE),
    ("R_CONN_KEEP_ALIVE", R_CONN_KEEP_ALIVE),
    ("R_CONN_CLOSE", R_CONN_CLOSE),
    ("R_CONTENT_LENGTH", R_CONTENT_LENGTH),
    ("R_CHUNKED", R_CHUNKED),
    ("R_NO_BODY", R_NO_BODY),
    ("R_KA_TIMEOUT", R_KA_TIMEOUT),
    ("R_FRAME", R_FRAME),
    ("R_UTF8_HEAD", R_UTF8_HEAD),
    ("L_CLOSE_AFTER", L_CLOSE_AFTER),
    ("L_TENTATIVE", L_TENTATIVE),
    ("S_HAS_CONNECTION", S_HAS_CONNECTION),
    ("S_HAS_TIMEOUT", S_HAS_TIMEOUT),
    ("S_HAS_UPGRADE", S_HAS_UPGRADE),
    ("S_HAS_CONNECT", S_HAS_CONNECT),
    ("S_NO_DELAY", S_NO_DELAY),
    ("S_KEEP_ALIVE", S_KEEP_ALIVE),
    ("S_HALF_OPEN", S_HALF_OPEN),
    ("S_LENIENT", S_LENIENT),
    ("S_HAS_CLIENT_ERROR", S_HAS_CLIENT_ERROR),
    ("S_HAS_DROP", S_HAS_DROP),
    ("S_UPGRADE_CALLBACK", S_UPGRADE_CALLBACK),
    ("S_RELAXED", S_RELAXED),
    ("S_UPGRADE_BODY", S_UPGRADE_BODY),
    ("S_HAS_KEYLOG", S_HAS_KEYLOG),
    ("S_SNI_CALLBACK", S_SNI_CALLBACK),
    ("S_ALPN_CALLBACK", S_ALPN_CALLBACK),
    ("S_TLS_TO_NODE", S_TLS_TO_NODE),
];

/// The table as a frozen-by-convention JS object.
pub fn object(env: Env) -> Value {
    let obj = napi::object(env);
    for (name, v) in FLAGS {
        napi::set_named(env, obj, name, napi::u32v(env, *v));
    }
    obj
}

/// node:http's server defaults, as a new server starts with them on both sides, and the
/// header-count limits (maxHeadersCount: fields; node's parser.maxHeaderPairs: entries).
pub fn default_values() -> Vec<(&'static str, f64)> {
    let c = ServerCfg::default();
    vec![
        ("timeout", c.timeout as f64),
        ("keepAliveTimeout", c.keep_alive_timeout as f64),
        ("headersTimeout", c.headers_timeout as f64),
        ("requestTimeout", c.request_timeout as f64),
        ("connectionsCheckingInterval", c.check_interval as f64),
        ("maxHeaderSize", c.max_header_size as f64),
        ("maxHeaderFields", DEFAULT_MAX_HEADER_FIELDS as f64),
        ("maxHeaderPairs", (2 * DEFAULT_MAX_HEADER_FIELDS) as f64),
        ("handshakeTimeout", c.handshake_timeout as f64),
    ]
}

pub fn defaults(env: Env) -> Value {
    let obj = napi::object(env);
    for (name, v) in default_values() {
        napi::set_named(env, obj, name, napi::f64v(env, v));
    }
    obj
}

/// The status node:http answers a parse error with when no 'clientError' listener handles
/// it, by error code (`default` for the others).
pub fn client_error_status(env: Env) -> Value {
    let obj = napi::object(env);
    for (code, status) in CLIENT_ERROR_STATUS {
        napi::set_named(env, obj, code, napi::u32v(env, *status as u32));
    }
    let default = napi::u32v(env, DEFAULT_CLIENT_ERROR_STATUS as u32);
    napi::set_named(env, obj, "default", default);
    obj
}

#[cfg(test)]
mod tests {
    use super::FLAGS;

    #[test]
    fn names_and_values_are_unique_per_family() {
        for (i, (a, va)) in FLAGS.iter().enumerate() {
            for (b, vb) in &FLAGS[i + 1..] {
                assert_ne!(a, b);
                if a[..2] == b[..2] && !a.starts_with("VERSION") && !b.starts_with("VERSION") {
                    assert_ne!(va, vb, "{a} and {b} share a value");
                }
            }
        }
    }
}
