//! The reactor: one mio::Poll per JS thread, driven from Node's own libuv loop (`driver`).
//! It owns the sockets, the connections' state machines (`crate::conn`), the timers and the
//! output batching, and tells its embedder what happened as batches of events (`events`,
//! `delivery`, `sink::Sink`); it knows nothing of N-API and decides nothing about JS
//! scheduling.
//!
//! Rooms: `state` (the Reactor itself and what every room shares), `commands` (what JS asks
//! of a connection or a server: the embedder's only way to change their state), `slots`
//! (connection ids), `readiness` (the driver: the only code that reads and writes sockets,
//! by epoll readiness's rules, and calls the rooms' entry points: bytes arrived, end of
//! input, bytes written, errors; `completions` its io_uring sibling for plain connections), `io` (a connection's life: admitted, its output's
//! progress, its end), `http` (input through the HTTP/1 state machine to events), `secure`
//! (the TLS room: what a session reports and what JS answers it; `secure_setup` the context
//! and session a new connection gets), `events` and `delivery` (what JS is told, in groups),
//! `batch` (the panic guard and a batch's end), `timers`, `event_loop` (what the reactor
//! needs of the loop it runs in), `driver` (that loop from libuv's handles and callbacks,
//! `uv` its FFI), `server` (settings, listener).

pub mod batch;
pub mod commands;
pub mod completions;
pub mod delivery;
pub mod driver;
pub mod event_loop;
pub mod events;
pub mod http;
pub mod io;
pub mod readiness;
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
