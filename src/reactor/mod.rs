//! The reactor: one mio::Poll per JS thread, driven from Node's own libuv loop (`driver`).
//! It owns the sockets, the connections' state machines (`crate::conn`), the timers and the
//! output batching, and tells its embedder what happened through `sink::Sink`; it knows
//! nothing of N-API.
//!
//! Rooms: `state` (the Reactor itself and what every room shares), `commands` (what JS asks
//! of a connection or a server: the embedder's only way to change their state), `slots`
//! (connection ids), `io` (accept, read, write, close, by `net::readiness`'s rules), `secure`
//! (the TLS room: what a session reports and what JS answers it; `secure_setup` the context
//! and session a new connection gets), `http` (bytes through the HTTP/1 state machine to the
//! sink), `batch` (corking, deferred events), `timers`, `event_loop` (what the reactor needs
//! of the loop it runs in), `driver` (that loop from libuv's handles and callbacks, `uv` its
//! FFI), `server` (settings, listener).

pub mod batch;
pub mod commands;
pub mod delivery;
pub mod driver;
pub mod event_loop;
pub mod events;
pub mod http;
pub mod io;
pub mod secure;
pub mod secure_setup;
pub mod server;
pub mod sink;
pub mod slots;
mod state;
#[cfg(feature = "test-hooks")]
pub mod test_hooks;
#[cfg(test)]
mod tests;
pub mod timers;
pub mod uv;

pub use state::*;
