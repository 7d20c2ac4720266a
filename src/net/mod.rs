//! Transports: listening sockets (`listener`), accepted connections (`stream`), one step of
//! reading or writing one of them (`transport`; when to take a step is the reactor's driver's
//! rule), io_uring for the completion driver (`uring`), TLS (`tls`, a session
//! without I/O; `tls_config`, `tls_scope`, `tls_tickets`), and the socket
//! calls that differ between operating systems (`sys`, one `cfg` per OS so the rest of the
//! crate never names a Linux- or macOS-only constant).

pub mod listener;
pub mod pkcs12;
mod received;
pub mod stream;
mod sys;
#[cfg(test)]
pub(crate) mod test_support;
pub mod tls;
pub mod tls_config;
mod tls_hello;
mod tls_records;
pub mod tls_scope;
pub mod tls_tickets;
pub mod transport;
#[cfg(target_os = "linux")]
pub mod uring;
#[cfg(not(target_os = "linux"))]
#[path = "uring_none.rs"]
pub mod uring;
pub mod x509_chain;

pub use listener::{adopt_listener, adopt_stream, listen_tcp, listen_unix, Listener, TcpOptions};
pub use stream::Stream;
