//! Transports: listening sockets (`listener`), accepted connections (`stream`), and the socket
//! calls that differ between operating systems (`sys`, one `cfg` per OS so the rest of the
//! crate never names a Linux- or macOS-only constant).

pub mod listener;
pub mod pkcs12;
pub mod stream;
mod sys;
pub mod tls;
pub mod tls_config;
pub mod tls_scope;
pub mod tls_tickets;

pub use listener::{adopt_listener, adopt_stream, listen_tcp, listen_unix, Listener, TcpOptions};
pub use stream::Stream;
