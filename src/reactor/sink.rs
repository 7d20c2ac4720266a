//! What the reactor tells its embedder (the N-API binding) and asks of it. The reactor knows
//! nothing of JS: it gathers what happened as `Event`s and hands them over in batches, never
//! while it holds a borrow of itself, since the embedder may call back into it. The embedder
//! alone decides what runs now and what waits in its tick queue.

use super::events::Batch;

/// The embedder. All functions run on the loop's thread. What the TLS room tells it is
/// `SecureSink`.
pub trait Sink: super::secure::SecureSink {
    /// Held while a group of events for connection `id` (or none) is delivered; dropping it
    /// ends the group (where JS runs its ticks and promise jobs, as after one node:http read).
    type Scope;

    fn scope(id: Option<u64>) -> Option<Self::Scope>;
    /// Ends the group so far and starts the next one in the same scope: node runs ticks and
    /// promise jobs after each of its parser's body callbacks. Returns true when they threw
    /// (the exception went to node's uncaught path).
    fn boundary(scope: &mut Self::Scope) -> bool;
    /// Hands the batch's events over in order, in one call, inside the group; leaves the
    /// batch empty. Returns whether the embedder holds events to run from its tick queue
    /// (they run at the group's next boundary or end). A handler that threw and whose throw
    /// fails the connection's parser (node's parser callbacks) says so with
    /// `Reactor::handler_threw`.
    fn deliver(scope: &mut Self::Scope, batch: &mut Batch) -> bool;
    /// Events outside any group (a deferred close, drain, end): each in its own connection's
    /// context, its ticks run after it, as after a libuv callback of node's. Leaves the batch
    /// empty.
    fn emit(batch: &mut Batch);
    /// Connection `id` is gone: whatever the embedder keeps for it can go.
    fn released(id: u64);
    /// A batch began (`open`) or ended. While one is open, the embedder may keep the
    /// responses its code ends and hand them over all at once when asked
    /// (`take_responses`). Returns, at the end, whether it still keeps some (the batch
    /// ended without taking them: a panic unwound it).
    fn batch_open(_open: bool) -> bool {
        false
    }
    /// The batch is about to write: the embedder hands over (`Reactor::respond`) the
    /// responses it kept.
    fn take_responses() {}
    /// The batch reads the last connection its poll found ready (`last`), or polls again.
    fn last_read(_last: bool) {}
}
