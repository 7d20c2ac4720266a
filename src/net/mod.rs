//! Transports: listening sockets (`listener`), accepted connections (`stream`), how they are
//! read and written when the poll says they are ready (`readiness`), TLS (`tls`, a session
//! without I/O; `tls_config`, `tls_scope`, `tls_tickets`), and the socket
//! calls that differ between operating systems (`sys`, one `cfg` per OS so the rest of the
//! crate never names a Linux- or macOS-only constant).

pub mod listener;
pub mod pkcs12;
pub mod readiness;
pub mod stream;
mod sys;
#[cfg(test)]
pub(crate) mod test_support;
pub mod tls;
pub mod tls_config;
pub mod tls_scope;
pub mod tls_tickets;

pub use listener::{adopt_listener, adopt_stream, listen_tcp, listen_unix, Listener, TcpOptions};
pub use stream::Stream;
