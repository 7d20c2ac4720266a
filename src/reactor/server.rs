//! A server's settings and listener, as the reactor sees them.

use crate::net::Listener;
use crate::proto::parse::Leniency;
use std::cell::RefCell;

thread_local! {
    /// Servers whose listener waits to join this thread's poll set.
    static PENDING: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Server `sid`'s listener joins the poll set on the loop's next turn.
pub fn register_later(sid: u32) {
    PENDING.with(|p| p.borrow_mut().push(sid));
}

/// The servers whose listeners wait to join the poll set (the list is emptied).
pub fn take_pending() -> Vec<u32> {
    PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()))
}

/// The server listens for 'connection': JS hears about every accepted connection.
pub const S_HAS_CONNECTION: u32 = 1;
/// The server listens for 'timeout'.
pub const S_HAS_TIMEOUT: u32 = 1 << 2;
pub const S_HAS_UPGRADE: u32 = 1 << 3;
pub const S_HAS_CONNECT: u32 = 1 << 4;
pub const S_NO_DELAY: u32 = 1 << 5;
pub const S_KEEP_ALIVE: u32 = 1 << 6;
/// server.httpAllowHalfOpen: after the peer's FIN, finish the pending responses first.
pub const S_HALF_OPEN: u32 = 1 << 7;
/// httpValidation 'insecure', insecureHTTPParser or --insecure-http-parser: requests are
/// parsed with `Leniency::Insecure`.
pub const S_LENIENT: u32 = 1 << 8;
/// The server listens for 'clientError': a connection reset before JS knew of it is told.
pub const S_HAS_CLIENT_ERROR: u32 = 1 << 9;
/// The server listens for 'drop' (a connection closed at maxConnections).
pub const S_HAS_DROP: u32 = 1 << 10;
/// httpValidation 'relaxed' (Node 24+): requests are parsed with `Leniency::Relaxed`.
pub const S_RELAXED: u32 = 1 << 11;
/// server.shouldUpgradeCallback is the app's: JS decides whether an Upgrade request upgrades.
pub const S_UPGRADE_CALLBACK: u32 = 1 << 12;
/// Node 26+: an Upgrade request's body goes through the request before the upgrade.
pub const S_UPGRADE_BODY: u32 = 1 << 13;
/// The server listens for 'keylog': new TLS connections hand their key-log lines to JS.
pub const S_HAS_KEYLOG: u32 = 1 << 14;
/// The server has an SNICallback: a ClientHello that names a server waits for JS's answer.
pub const S_SNI_CALLBACK: u32 = 1 << 15;
/// The server has an ALPNCallback: a ClientHello that offers ALPN waits for JS's answer.
pub const S_ALPN_CALLBACK: u32 = 1 << 16;
/// The server listens for an event of OpenSSL's session cache or OCSP stapling ('newSession',
/// 'resumeSession', 'OCSPRequest'): its new TLS connections are node's TLS's.
pub const S_TLS_TO_NODE: u32 = 1 << 17;

#[derive(Clone)]
pub struct ServerCfg {
    pub max_header_size: usize,
    pub keep_alive_timeout: u64,
    /// The `Keep-Alive: timeout=N[, max=M]` line of keep-alive responses.
    pub ka_line: Vec<u8>,
    pub timeout: u64,
    pub headers_timeout: u64,
    pub request_timeout: u64,
    pub check_interval: u64,
    pub flags: u32,
    pub keep_alive_delay: u32,
    /// server.maxConnections: at this many connections new ones are dropped (None: no limit).
    pub max_connections: Option<u32>,
    /// Most header lines per request (0 = no limit): maxHeadersCount on Node 22+.
    pub max_headers: usize,
    /// tls.Server's handshakeTimeout, ms (0 = none).
    pub handshake_timeout: u64,
}

impl Default for ServerCfg {
    fn default() -> Self {
        // node:http's defaults (Node 20): maxHeaderSize 16 KiB, keepAliveTimeout 5 s,
        // headersTimeout 60 s, requestTimeout 300 s, connectionsCheckingInterval 30 s.
        ServerCfg {
            max_header_size: 16 * 1024,
            keep_alive_timeout: 5000,
            ka_line: b"Keep-Alive: timeout=5\r\n".to_vec(),
            timeout: 0,
            headers_timeout: 60_000,
            request_timeout: 300_000,
            check_interval: 30_000,
            flags: S_NO_DELAY,
            keep_alive_delay: 0,
            max_connections: None,
            max_headers: 0,
            handshake_timeout: 120_000,
        }
    }
}

pub struct Server {
    pub(super) cfg: ServerCfg,
    pub(super) listener: Option<Listener>,
    /// The listener is in the poll set (it joins it on the loop's next turn: see
    /// `Reactor::register_listener`).
    pub(super) registered: bool,
    /// The listener keeps the event loop alive (server.ref()).
    pub(super) refd: bool,
    pub(super) conns: u32,
    pub(super) closed: bool,
    /// Connections are TLS with this context (an https server); replaced by
    /// setSecureContext for the connections that follow.
    pub(super) tls: Option<super::secure_setup::Context>,
}

impl Server {
    pub fn new() -> Server {
        Server {
            cfg: ServerCfg::default(),
            listener: None,
            registered: false,
            refd: true,
            conns: 0,
            closed: false,
            tls: None,
        }
    }

    pub fn has(&self, flag: u32) -> bool {
        self.cfg.flags & flag != 0
    }

    /// How leniently requests are parsed (JS sets at most one of the two flags).
    pub fn leniency(&self) -> Leniency {
        if self.has(S_LENIENT) {
            Leniency::Insecure
        } else if self.has(S_RELAXED) {
            Leniency::Relaxed
        } else {
            Leniency::Strict
        }
    }
}

impl Default for Server {
    fn default() -> Self {
        Server::new()
    }
}
