//! The reactor's side of delivery: a `Group` gathers the events of one sink scope (a read,
//! an accept, a timer) into a batch and hands them over at the points the rooms choose (a
//! boundary, before a request JS must answer at once, the group's end). What runs now and
//! what waits is the embedder's decision; the group only remembers its answer.

use super::events::Batch;
use super::sink::Sink;
use super::state::with;

/// A group of events for one connection (or none) in one sink scope: what a read parses,
/// handed over at its boundaries. JS runs its ticks and promise jobs where the group ends
/// and at each boundary: after each piece of a body, as node does after llhttp's on_body
/// callbacks (not after a request's head or its end, which run inside the read's scope).
pub struct Group<S: Sink> {
    scope: Option<S::Scope>,
    pub(super) batch: Batch,
    /// JS holds events of the group in its tick queue (its answer to the last delivery).
    waiting: bool,
}

impl<S: Sink> Group<S> {
    /// JS holds events of the group in its tick queue.
    pub(super) fn waiting(&self) -> bool {
        self.waiting
    }

    pub(super) fn open(id: Option<u64>) -> Group<S> {
        Group {
            scope: S::scope(id),
            batch: with(|r| std::mem::take(&mut r.spare_batch)).unwrap_or_default(),
            waiting: false,
        }
    }

    /// Hands what the group gathered so far to JS.
    pub(super) fn deliver(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        match self.scope.as_mut() {
            Some(scope) => self.waiting |= S::deliver(scope, &mut self.batch),
            None => self.batch.clear(),
        }
    }

    /// Hands the events over and ends the group's calls so far: JS runs what it queued,
    /// then its ticks and promise jobs. Returns true when they threw.
    pub(super) fn end_calls(&mut self) -> bool {
        self.deliver();
        self.waiting = false;
        self.scope.as_mut().is_some_and(|s| S::boundary(s))
    }
}

impl<S: Sink> Drop for Group<S> {
    fn drop(&mut self) {
        self.deliver();
        let mut batch = std::mem::take(&mut self.batch);
        batch.clear();
        with(|r| r.spare_batch = batch);
        drop(self.scope.take());
    }
}
