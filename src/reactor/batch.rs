//! What every batch (`super::readiness::batch`) runs inside: a panic guard, which closes only
//! the connection a panic concerns and leaves the reactor usable; the batch's end writes
//! every connection written during it; the batch's clock.

use super::sink::Sink;
use super::state::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`; a panic in it closes connection `id` (when given), is reported to the sink,
/// and does not unwind further.
pub fn guarded<S: Sink, T>(id: Option<u64>, f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            let message = format!("fast-http: internal error: {message}");
            let _ = catch_unwind(AssertUnwindSafe(|| {
                with(|r| {
                    let sid = id.and_then(|id| r.conn(id).map(|c| c.server));
                    if let Some(id) = id {
                        r.close_conn(id, -libc::EIO);
                    }
                    r.defer(Deferred::Panic(sid, message));
                });
            }));
            None
        }
    }
}

impl Reactor {
    /// Writes every connection written during the batch.
    pub(super) fn flush_dirty(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        if self.ring.is_some() {
            self.ring_flush(&dirty);
        } else {
            for &id in &dirty {
                self.flush(id, false);
            }
        }
        if self.dirty.is_empty() {
            self.dirty = dirty;
            self.dirty.clear();
        }
    }

    pub(super) fn now_ms(&mut self) -> u64 {
        self.now = self.handles.now();
        self.now
    }
}
