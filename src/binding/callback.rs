//! How every exported function is defined (`export!`: `EXPORTS` in mod.rs declares its name
//! and arguments, `call` runs it behind `napi::guard` once the arguments fit), the crossing
//! counter, and the two argument helpers they share. A leaf: it knows the N-API helpers
//! (`napi`) only.

use super::napi::{self, Args, Value};
use std::cell::Cell;

thread_local! {
    /// Calls JS made into the addon (the one-crossing-per-response test counts them).
    pub(super) static JS_TO_NATIVE: Cell<u64> = const { Cell::new(0) };
}

/// Defines an exported function's code: `EXPORTS` declares its name and arguments, and
/// `call` runs it behind `napi::guard` (no panic crosses into Node) once the arguments fit.
macro_rules! export {
    ($name:ident, |$a:ident| $body:expr) => {
        pub(super) fn $name($a: $crate::binding::napi::Args) -> $crate::binding::napi::Value {
            $body
        }
    };
    // Introspection that must not count itself (`counted: false` in `EXPORTS`).
    (uncounted $name:ident, |$a:ident| $body:expr) => {
        fn $name($a: $crate::binding::napi::Args) -> $crate::binding::napi::Value {
            $body
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
