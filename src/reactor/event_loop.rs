//! What the reactor needs of the event loop it runs inside: the loop's clock, a reference
//! that keeps it alive, a wake-up for deferred work, one timer and an idle hook. `driver`
//! provides them from libuv; the reactor's tests from a plain fake. A leaf.

pub trait EventLoop {
    /// The loop's cached time, ms.
    fn now(&self) -> u64;
    /// Whether the reactor keeps the loop alive (a listening server or an open connection is
    /// ref'd).
    fn set_ref(&mut self, on: bool);
    /// Runs deferred work on the next loop turn.
    fn kick(&mut self);
    /// The kick's callback begins (`true`) or ends.
    fn in_kick(&mut self, on: bool);
    /// The timer heap's next deadline is `delay` ms away.
    fn start_timer(&mut self, delay: u64);
    /// Keeps the loop from blocking while a connection that yielded has more to read.
    fn start_idle(&mut self);
    fn stop_idle(&mut self);
}
