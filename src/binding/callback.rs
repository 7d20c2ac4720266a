//! The N-API callback wrapper every exported function is made with (`export!`), and the
//! two argument helpers they share. A leaf: it knows the N-API helpers (`napi`) only.

use super::napi::{self, Args, Value};
use std::cell::Cell;

thread_local! {
    /// Calls JS made into the addon (the one-crossing-per-response test counts them).
    pub(super) static JS_TO_NATIVE: Cell<u64> = const { Cell::new(0) };
}

/// Defines a raw N-API callback behind `napi::guard` (no panic crosses into Node) that
/// counts one JS → native crossing.
macro_rules! export {
    ($name:ident, |$a:ident| $body:expr) => {
        pub(super) unsafe extern "C" fn $name(
            env: ::napi::sys::napi_env,
            info: ::napi::sys::napi_callback_info,
        ) -> $crate::binding::napi::Value {
            $crate::binding::napi::guard(env, || {
                // SAFETY: env/info are the ones Node passed to this callback.
                let $a = unsafe { $crate::binding::napi::Args::new(env, info) };
                $crate::binding::callback::count_crossing();
                $body
            })
        }
    };
    // Introspection that must not count itself.
    (uncounted $name:ident, |$a:ident| $body:expr) => {
        pub(super) unsafe extern "C" fn $name(
            env: ::napi::sys::napi_env,
            info: ::napi::sys::napi_callback_info,
        ) -> $crate::binding::napi::Value {
            $crate::binding::napi::guard(env, || {
                // SAFETY: env/info are the ones Node passed to this callback.
                let $a = unsafe { $crate::binding::napi::Args::new(env, info) };
                $body
            })
        }
    };
}
pub(crate) use export;

pub(crate) fn count_crossing() {
    JS_TO_NATIVE.with(|n| n.set(n.get() + 1));
}

pub(super) fn undef(a: &Args) -> Value {
    napi::undefined(a.env)
}

/// A connection id from JS (a double: 22 index bits and a 31-bit generation, exact).
pub(super) fn id_of(a: &Args, i: usize) -> u64 {
    a.f64(i) as u64
}
