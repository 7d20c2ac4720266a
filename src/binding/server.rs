//! Servers: creation, options, listening, closing, their connections; TLS contexts.

use super::contract::values::Latin1;
use super::crossings::{self as x, Addresses, ServerOptions, SNI_FAILED, SNI_SERVER_CONTEXT};
use super::crossings::{ALPN_NONE, ALPN_NOT_ASKED};
use super::napi::{self, Env, Value};
use crate::net::tls::AlpnChoice;
use crate::net::tls_config::{TlsContext, TlsSpec};
use crate::net::{self, Listener, TcpOptions};
use crate::reactor::{self, io::Admit, server::ServerCfg};
use std::cell::RefCell;
use std::net::IpAddr;
use std::sync::Arc;

thread_local! {
    /// The settings the last `serverConfig` call left its server with: a server made with
    /// the same options (JS knows) starts with a copy instead of reading them again.
    static LAST_CFG: RefCell<Option<ServerCfg>> = const { RefCell::new(None) };
}

/// Where each server option goes: one place per option on this side.
fn apply(c: &mut ServerCfg, o: &ServerOptions) {
    if let Some(v) = o.max_header_size {
        c.max_header_size = v as usize;
    }
    if let Some(v) = o.keep_alive_timeout {
        c.keep_alive_timeout = v as u64;
    }
    if let Some(v) = o.timeout {
        c.timeout = v as u64;
    }
    if let Some(v) = o.headers_timeout {
        c.headers_timeout = v as u64;
    }
    if let Some(v) = o.request_timeout {
        c.request_timeout = v as u64;
    }
    if let Some(v) = o.check_interval {
        c.check_interval = v as u64;
    }
    if let Some(v) = o.flags {
        c.flags = v;
    }
    if let Some(v) = o.keep_alive_delay {
        c.keep_alive_delay = v;
    }
    if let Some(max) = o.max_connections {
        // A negative limit is none (0 is a limit: every connection is dropped).
        c.max_connections = (max >= 0.0).then_some(max as u32);
    }
    if let Some(v) = o.max_header_lines {
        c.max_headers = v as usize;
    }
    if let Some(Latin1(line)) = &o.keep_alive_line {
        c.ka_line.clone_from(line);
    }
    if let Some(v) = o.handshake_timeout {
        c.handshake_timeout = v as u64;
    }
}

/// `serverCreate`: with `same_as_last` the server starts with the settings the last
/// serverConfig call made (JS has checked they are the ones it wants).
pub(super) fn create(a: x::ServerCreate) -> Value {
    let cfg = if a.same_as_last {
        LAST_CFG.with(|c| c.borrow().clone())
    } else {
        None
    };
    let sid = reactor::with(|r| r.create_server(cfg)).unwrap_or(u32::MAX);
    napi::u32v(a.env, sid)
}

/// `serverConfig`: every option present is applied.
pub(super) fn config(a: x::ServerConfig) -> Value {
    let opts = &a.options;
    let cfg = reactor::with(|r| r.configure_server(a.sid, |c| apply(c, opts)))
        .flatten()
        .unwrap_or_else(|| {
            // Still what the next serverCreate(true) must start with.
            let mut cfg = ServerCfg::default();
            apply(&mut cfg, opts);
            cfg
        });
    LAST_CFG.with(|c| *c.borrow_mut() = Some(cfg));
    napi::undefined(a.env)
}

/// `serverFlags`: listener-presence bits, updated as JS listeners come and go.
pub(super) fn flags(a: x::ServerFlags) -> Value {
    reactor::with(|r| r.set_server_flags(a.sid, a.mask, a.value));
    napi::undefined(a.env)
}

fn addr_result(env: Env, addr: Option<std::net::SocketAddr>) -> Value {
    match addr {
        Some(sa) => {
            let family = if sa.is_ipv6() { "IPv6" } else { "IPv4" };
            napi::array(
                env,
                &[
                    napi::utf8(env, &sa.ip().to_string()),
                    napi::u32v(env, sa.port() as u32),
                    napi::utf8(env, family),
                ],
            )
        }
        None => napi::undefined(env),
    }
}

fn errno_of(e: &std::io::Error) -> i32 {
    -e.raw_os_error().unwrap_or(libc::EINVAL)
}

/// `listenTcp` -> [address, port, family] | -errno
pub(super) fn listen_tcp(a: x::ListenTcp) -> Value {
    let ip: Option<IpAddr> = a.ip.string().parse().ok();
    let Some(ip) = ip else {
        return napi::i32v(a.env, -libc::EINVAL);
    };
    let opts = TcpOptions {
        backlog: a.backlog as i32,
        reuse_port: a.reuse_port,
        ipv6_only: a.ipv6_only,
    };
    match net::listen_tcp(ip, a.port as u16, &opts) {
        Err(e) => napi::i32v(a.env, errno_of(&e)),
        Ok(l) => {
            let l = Listener::Tcp(l);
            let addr = l.local_addr();
            registered(a.env, a.sid, l, || addr_result(a.env, addr))
        }
    }
}

/// Registers a listener with the reactor; `ok` answers JS once it is.
fn registered(env: Env, sid: u32, l: Listener, ok: impl FnOnce() -> Value) -> Value {
    match reactor::with(|r| r.register_listener(sid, l)) {
        Some(Ok(())) => ok(),
        Some(Err(e)) => napi::i32v(env, errno_of(&e)),
        None => napi::i32v(env, -libc::EINVAL),
    }
}

/// `listenUnix` -> 0 | -errno
pub(super) fn listen_unix(a: x::ListenUnix) -> Value {
    let path = a.path.string();
    match net::listen_unix(&path, a.backlog as i32) {
        Err(e) => napi::i32v(a.env, errno_of(&e)),
        Ok(l) => registered(a.env, a.sid, Listener::Unix(l, path), || {
            napi::i32v(a.env, 0)
        }),
    }
}

/// `adoptListener` -> [address, port, family] | unixPath | -errno: listen({ fd }),
/// listen(handle) and a cluster's shared handle: an open socket to accept on.
pub(super) fn adopt_listener(a: x::AdoptListener) -> Value {
    match net::adopt_listener(a.fd as i32, a.backlog as i32, a.dup) {
        Err(e) => napi::i32v(a.env, errno_of(&e)),
        Ok(l) => {
            let addr = l.local_addr();
            let path = l.unix_path();
            registered(a.env, a.sid, l, || match path {
                Some(p) => napi::utf8(a.env, &p),
                None => addr_result(a.env, addr),
            })
        }
    }
}

/// `adoptConnection` -> [connId, wantsConnectionEvent] | [dropAddresses] | [] | -errno
/// ([dropAddresses] / []: dropped at maxConnections, with / without a 'drop' listener).
pub(super) fn adopt_connection(a: x::AdoptConnection) -> Value {
    let env = a.env;
    let stream = match net::adopt_stream(a.fd as i32) {
        Ok(s) => s,
        Err(e) => return napi::i32v(env, errno_of(&e)),
    };
    match reactor::with(|r| r.adopt(a.sid, stream)).flatten() {
        Some(Admit::Accepted(id, tell)) => {
            napi::array(env, &[napi::f64v(env, id as f64), napi::boolean(env, tell)])
        }
        // At maxConnections: the addresses for 'drop', which JS emits as net's onconnection
        // does, in the same call.
        Some(Admit::Dropped(Some((local, peer)))) => {
            let addresses = super::contract::ToJs::to_js(&Addresses { local, peer }, env);
            napi::array(env, &[addresses])
        }
        Some(Admit::Dropped(None)) => napi::array(env, &[]),
        None => napi::i32v(env, -libc::EMFILE),
    }
}

/// `serverClose` -> connections still open.
pub(super) fn close(a: x::ServerClose) -> Value {
    let n = reactor::with(|r| r.close_listener(a.sid)).unwrap_or(0);
    napi::u32v(a.env, n)
}

/// `serverFree` -> connections still open: stops listening and, when no connection is
/// left, frees the server (its id is not used again); else it lives until they have closed.
pub(super) fn free(a: x::ServerFree) -> Value {
    let n = reactor::with(|r| {
        let n = r.close_listener(a.sid);
        if n == 0 {
            r.free_server(a.sid);
        }
        n
    })
    .unwrap_or(0);
    napi::u32v(a.env, n)
}

pub(super) fn set_ref(a: x::ServerRef) -> Value {
    reactor::with(|r| r.set_server_ref(a.sid, a.on));
    napi::undefined(a.env)
}

/// `serverConns` -> ids: JS decides which to destroy (closeIdleConnections).
pub(super) fn conns(a: x::ServerConns) -> Value {
    let ids = reactor::with(|r| r.server_conns(a.sid, a.idle_only)).unwrap_or_default();
    let vals: Vec<Value> = ids.iter().map(|&id| napi::f64v(a.env, id as f64)).collect();
    napi::array(a.env, &vals)
}

thread_local! {
    /// TLS contexts JS made (tls.createSecureContext's counterpart), by handle.
    static TLS_CONTEXTS: RefCell<Vec<Option<Arc<TlsContext>>>> = const { RefCell::new(Vec::new()) };
}

/// Handles start at 1: 0 names no context (the server's own, in `tlsSniAnswer`).
fn tls_context(handle: u32) -> Option<Arc<TlsContext>> {
    TLS_CONTEXTS.with(|t| t.borrow().get(handle as usize).cloned().flatten())
}

/// The reactor's settings of a TLS context, from the declared object.
fn tls_spec(o: x::TlsSpec) -> TlsSpec {
    let bytes = |v: Vec<super::contract::values::Bytes>| v.into_iter().map(|b| b.0).collect();
    TlsSpec {
        pairs: o.pairs.into_iter().map(|(c, k)| (c.0, k.0)).collect(),
        ca: bytes(o.ca),
        roots: o.roots.map(bytes).unwrap_or_default(),
        request_cert: o.request_cert,
        reject_unauthorized: o.reject_unauthorized,
        min_version: o.min_version as u16,
        max_version: o.max_version as u16,
        alpn: o.alpn.into_iter().map(|a| a.0).collect(),
        tickets: o.tickets,
        ciphers: o.ciphers.unwrap_or_default(),
        // node's honorCipherOrder: the server's order unless it is false.
        honor_cipher_order: o.honor_cipher_order.unwrap_or(true),
        groups: o.groups.unwrap_or_default(),
        session_timeout: o
            .session_timeout
            .map(|v| v.clamp(0.0, u32::MAX as f64) as u32),
        ticket_keys: o.ticket_keys.map(|b| b.0),
    }
}

/// `tlsContextCreate` -> handle: a secure context from PEM/DER bytes; throws
/// ERR_FAST_HTTP_TLS with the reason when rustls refuses it.
pub(super) fn tls_context_create(a: x::TlsContextCreate) -> Value {
    let env = a.env;
    match TlsContext::new(&tls_spec(a.spec)) {
        Ok(ctx) => {
            let handle = TLS_CONTEXTS.with(|t| {
                let mut t = t.borrow_mut();
                if t.is_empty() {
                    t.push(None);
                }
                t.push(Some(Arc::new(ctx)));
                t.len() - 1
            });
            napi::u32v(env, handle as u32)
        }
        Err(msg) => {
            napi::throw_error(env, "ERR_FAST_HTTP_TLS", &msg);
            std::ptr::null_mut()
        }
    }
}

/// `tlsDecodePfx` -> [key, ...certs] (PKCS#8 DER, then DER certificates in the archive's
/// order), or undefined for an archive the decoder cannot open.
pub(super) fn tls_decode_pfx(a: x::TlsDecodePfx) -> Value {
    // OpenSSL's PKCS12_parse without a passphrase tries the empty one.
    let passphrase = a.passphrase.map(|p| p.string()).unwrap_or_default();
    match crate::net::pkcs12::decode(a.pfx, &passphrase) {
        Ok(d) => {
            let env = a.env;
            let items: Vec<_> = std::iter::once(&d.key)
                .chain(&d.certs)
                .map(|b| napi::buffer_copy(env, b))
                .collect();
            napi::array(env, &items)
        }
        Err(_) => napi::undefined(a.env),
    }
}

/// `tlsContextFree`: servers using it keep it until they let go.
pub(super) fn tls_context_free(a: x::TlsContextFree) -> Value {
    TLS_CONTEXTS.with(|t| {
        if let Some(slot) = t.borrow_mut().get_mut(a.ctx as usize) {
            *slot = None;
        }
    });
    napi::undefined(a.env)
}

/// `serverSetTls`: the server's next connections are TLS with this context (its creation,
/// and setSecureContext).
pub(super) fn server_set_tls(a: x::ServerSetTls) -> Value {
    let ctx = tls_context(a.ctx);
    reactor::with(|r| r.set_server_context(a.sid, ctx));
    napi::undefined(a.env)
}

/// `tlsAddContext`: node's server.addContext.
pub(super) fn tls_add_context(a: x::TlsAddContext) -> Value {
    if let (Some(ctx), Some(other)) = (tls_context(a.ctx), tls_context(a.other)) {
        ctx.add_context(&a.servername.string(), a.exact_case, &other);
    }
    napi::undefined(a.env)
}

/// `tlsGetTicketKeys` -> Buffer: node's server.getTicketKeys() (48 bytes).
pub(super) fn tls_get_ticket_keys(a: x::TlsGetTicketKeys) -> Value {
    match tls_context(a.ctx) {
        Some(ctx) => napi::buffer_copy(a.env, &ctx.ticketer.get_keys()),
        None => napi::undefined(a.env),
    }
}

/// `tlsSetTicketKeys`: node's server.setTicketKeys(); throws ERR_FAST_HTTP_TLS for keys
/// that are not 48 bytes.
pub(super) fn tls_set_ticket_keys(a: x::TlsSetTicketKeys) -> Value {
    if let Some(ctx) = tls_context(a.ctx) {
        if let Err(msg) = ctx.ticketer.set_keys(a.keys) {
            napi::throw_error(a.env, "ERR_FAST_HTTP_TLS", &msg);
            return std::ptr::null_mut();
        }
    }
    napi::undefined(a.env)
}

/// `tlsSniAnswer`: the SNICallback / ALPNCallback of a connection answered.
pub(super) fn tls_sni_answer(a: x::TlsSniAnswer) -> Value {
    let alpn = if a.alpn >= 0.0 {
        AlpnChoice::Chosen(a.alpn as usize)
    } else if a.alpn == f64::from(ALPN_NONE) {
        AlpnChoice::Refused
    } else {
        debug_assert_eq!(a.alpn, f64::from(ALPN_NOT_ASKED));
        AlpnChoice::Config
    };
    let choice = if a.ctx == f64::from(SNI_FAILED) {
        Err(())
    } else if a.ctx == f64::from(SNI_SERVER_CONTEXT) {
        Ok(None)
    } else {
        tls_context(a.ctx as u32).map(Some).ok_or(())
    };
    reactor::with(|r| r.sni_answer(a.id.0, choice, alpn));
    napi::undefined(a.env)
}
