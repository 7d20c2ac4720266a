//! The JS → native crossing counter (the one-crossing-per-response test reads it). A leaf.

use std::cell::Cell;

thread_local! {
    /// Calls JS made into the addon.
    pub(super) static JS_TO_NATIVE: Cell<u64> = const { Cell::new(0) };
}

pub(crate) fn count_crossing() {
    JS_TO_NATIVE.with(|n| n.set(n.get() + 1));
}
