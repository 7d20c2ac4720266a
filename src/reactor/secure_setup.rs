//! The TLS room's setup half: the context a TLS server's connections are made with, the
//! session a new connection gets, and the protocol it speaks after the handshake. Nothing
//! here touches the reactor's state, so the server's settings hold a context without
//! importing the room (`secure`).

use crate::net::tls::TlsSession;
use crate::net::tls_config::TlsContext;
use crate::net::Stream;
use std::sync::Arc;

/// A TLS server's context (certificates, options, ticket keys), shared by its connections.
pub type Context = Arc<TlsContext>;

/// What a new connection's session asks of JS.
#[derive(Clone, Copy, Default)]
pub struct Asks {
    /// Key-log lines (the server listens for 'keylog').
    pub keylog: bool,
    /// A ClientHello that names a server waits for the SNICallback.
    pub sni: bool,
    /// A ClientHello that offers ALPN waits for the ALPNCallback.
    pub alpn: bool,
    /// The connection is node's TLS's from its first byte (`TlsSession::hand_off_now`).
    pub to_node: bool,
}

/// Puts a TLS session of `ctx` over a new connection's socket. None when rustls cannot make
/// one (the connection is refused).
pub fn begin(stream: &mut Stream, ctx: &Context, asks: Asks) -> Option<()> {
    let mut t = TlsSession::new(ctx.clone()).ok()?;
    t.set_keylog(asks.keylog);
    if asks.to_node {
        t.hand_off_now();
    } else if asks.sni || asks.alpn {
        t.ask_sni(asks.sni, asks.alpn);
    }
    stream.secure(t);
    Some(())
}

/// The protocol a connection speaks after its handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Http1,
}

/// The protocol for the ALPN choice (RFC 7301 §3.2: the server's selection, or none). node's
/// https.Server runs its HTTP/1 parser whatever was negotiated (a client that chose `h2`
/// meets HTTP/1.1 there too); a second protocol's machine is chosen here.
pub fn protocol(alpn: Option<&[u8]>) -> Protocol {
    match alpn {
        Some(b"http/1.1") | None => Protocol::Http1,
        Some(_) => Protocol::Http1,
    }
}
