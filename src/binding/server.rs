//! Servers: creation, options, listening, closing, their connections.

use super::callback::{export, undef};
use super::napi::{self, Env, Value};
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

type Setter = fn(&mut ServerCfg, Env, Value);

/// The server options JS passes to `serverConfig` (by these names), and where each goes: one
/// place per option on this side. JS reads the names from `binding.serverOptions`.
const OPTIONS: &[(&str, Setter)] = &[
    ("maxHeaderSize", |c, e, v| {
        c.max_header_size = napi::f64_of(e, v) as usize
    }),
    ("keepAliveTimeout", |c, e, v| {
        c.keep_alive_timeout = napi::f64_of(e, v) as u64
    }),
    ("timeout", |c, e, v| c.timeout = napi::f64_of(e, v) as u64),
    ("headersTimeout", |c, e, v| {
        c.headers_timeout = napi::f64_of(e, v) as u64
    }),
    ("requestTimeout", |c, e, v| {
        c.request_timeout = napi::f64_of(e, v) as u64
    }),
    ("checkInterval", |c, e, v| {
        c.check_interval = napi::f64_of(e, v) as u64
    }),
    ("flags", |c, e, v| c.flags = napi::u32_of(e, v)),
    ("keepAliveDelay", |c, e, v| {
        c.keep_alive_delay = napi::u32_of(e, v)
    }),
    ("maxConnections", |c, e, v| {
        // A negative limit is none (0 is a limit: every connection is dropped).
        let max = napi::f64_of(e, v);
        c.max_connections = (max >= 0.0).then_some(max as u32);
    }),
    ("maxHeaderLines", |c, e, v| {
        c.max_headers = napi::u32_of(e, v) as usize
    }),
    ("keepAliveLine", |c, e, v| {
        c.ka_line.clear();
        napi::string_into(e, v, &mut c.ka_line, napi::Encoding::Latin1);
    }),
    ("handshakeTimeout", |c, e, v| {
        c.handshake_timeout = napi::f64_of(e, v) as u64
    }),
];

pub fn option_names(env: Env) -> Value {
    let names: Vec<Value> = OPTIONS.iter().map(|(n, _)| napi::utf8(env, n)).collect();
    napi::array(env, &names)
}

// serverCreate(sameAsLast) -> sid; with `sameAsLast` the server starts with the settings the
// last serverConfig call made (JS has checked they are the ones it wants).
export!(create, |a| {
    let same = a.bool(0);
    let cfg = if same {
        LAST_CFG.with(|c| c.borrow().clone())
    } else {
        None
    };
    let sid = reactor::with(|r| r.create_server(cfg)).unwrap_or(u32::MAX);
    napi::u32v(a.env, sid)
});

// serverConfig(sid, options): every field of OPTIONS present on `options` is applied.
export!(config, |a| {
    let sid = a.u32(0);
    let Some(obj) = a.get(1) else {
        return undef(&a);
    };
    let env = a.env;
    let apply = |cfg: &mut ServerCfg| {
        for (name, set) in OPTIONS {
            let v = napi::get_named(env, obj, name);
            if !napi::is_nullish(env, v) {
                set(cfg, env, v);
            }
        }
    };
    let cfg = reactor::with(|r| r.configure_server(sid, apply))
        .flatten()
        .unwrap_or_else(|| {
            // Still what the next serverCreate(true) must start with.
            let mut cfg = ServerCfg::default();
            apply(&mut cfg);
            cfg
        });
    LAST_CFG.with(|c| *c.borrow_mut() = Some(cfg));
    undef(&a)
});

// serverFlags(sid, mask, value): listener-presence bits, updated as JS listeners come and go.
export!(flags, |a| {
    let (sid, mask, value) = (a.u32(0), a.u32(1), a.u32(2));
    reactor::with(|r| r.set_server_flags(sid, mask, value));
    undef(&a)
});

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

// listenTcp(sid, ip, port, backlog, reusePort, ipv6Only) -> [address, port, family] | -errno
export!(listen_tcp, |a| {
    let sid = a.u32(0);
    let ip: Option<IpAddr> = a.string(1).and_then(|s| s.parse().ok());
    let Some(ip) = ip else {
        return napi::i32v(a.env, -libc::EINVAL);
    };
    let opts = TcpOptions {
        backlog: a.u32(3) as i32,
        reuse_port: a.bool(4),
        ipv6_only: a.bool(5),
    };
    match net::listen_tcp(ip, a.u32(2) as u16, &opts) {
        Err(e) => napi::i32v(a.env, errno_of(&e)),
        Ok(l) => {
            let l = Listener::Tcp(l);
            let addr = l.local_addr();
            match reactor::with(|r| r.register_listener(sid, l)) {
                Some(Ok(())) => addr_result(a.env, addr),
                Some(Err(e)) => napi::i32v(a.env, errno_of(&e)),
                None => napi::i32v(a.env, -libc::EINVAL),
            }
        }
    }
});

// listenUnix(sid, path, backlog) -> 0 | -errno
export!(listen_unix, |a| {
    let sid = a.u32(0);
    let Some(path) = a.string(1) else {
        return napi::i32v(a.env, -libc::EINVAL);
    };
    match net::listen_unix(&path, a.u32(2) as i32) {
        Err(e) => napi::i32v(a.env, errno_of(&e)),
        Ok(l) => match reactor::with(|r| r.register_listener(sid, Listener::Unix(l, path))) {
            Some(Ok(())) => napi::i32v(a.env, 0),
            Some(Err(e)) => napi::i32v(a.env, errno_of(&e)),
            None => napi::i32v(a.env, -libc::EINVAL),
        },
    }
});

// adoptListener(sid, fd, backlog, dup) -> [address, port, family] | unixPath | -errno
// listen({ fd }), listen(handle) and a cluster's shared handle: an open socket to accept on.
export!(adopt_listener, |a| {
    let (sid, fd, backlog, dup) = (a.u32(0), a.f64(1) as i32, a.u32(2) as i32, a.bool(3));
    match net::adopt_listener(fd, backlog, dup) {
        Err(e) => napi::i32v(a.env, errno_of(&e)),
        Ok(l) => {
            let addr = l.local_addr();
            let path = l.unix_path();
            match reactor::with(|r| r.register_listener(sid, l)) {
                Some(Ok(())) => match path {
                    Some(p) => napi::utf8(a.env, &p),
                    None => addr_result(a.env, addr),
                },
                Some(Err(e)) => napi::i32v(a.env, errno_of(&e)),
                None => napi::i32v(a.env, -libc::EINVAL),
            }
        }
    }
});

// adoptConnection(sid, fd) -> [connId, wantsConnectionEvent] | [dropAddresses] | [] | -errno
// ([dropAddresses] / []: dropped at maxConnections, with / without a 'drop' listener)
// A connection accepted elsewhere (a cluster primary's round-robin hand-off).
export!(adopt_connection, |a| {
    let (sid, fd) = (a.u32(0), a.f64(1) as i32);
    let stream = match net::adopt_stream(fd) {
        Ok(s) => s,
        Err(e) => return napi::i32v(a.env, errno_of(&e)),
    };
    match reactor::with(|r| {
        r.now_ms();
        r.admit(sid, stream)
    })
    .flatten()
    {
        Some(Admit::Accepted(id, tell)) => napi::array(
            a.env,
            &[napi::f64v(a.env, id as f64), napi::boolean(a.env, tell)],
        ),
        // At maxConnections: the addresses for 'drop', which JS emits as net's onconnection
        // does, in the same call.
        Some(Admit::Dropped(Some((local, peer)))) => {
            napi::array(a.env, &[super::sink::addresses(a.env, local, peer)])
        }
        Some(Admit::Dropped(None)) => napi::array(a.env, &[]),
        None => napi::i32v(a.env, -libc::EMFILE),
    }
});

// serverClose(sid) -> connections still open
export!(close, |a| {
    let n = reactor::with(|r| r.close_listener(a.u32(0))).unwrap_or(0);
    napi::u32v(a.env, n)
});

// serverFree(sid) -> connections still open: stops listening and, when no connection is
// left, frees the server (its id is not used again); else it lives until they have closed.
export!(free, |a| {
    let sid = a.u32(0);
    let n = reactor::with(|r| {
        let n = r.close_listener(sid);
        if n == 0 {
            r.free_server(sid);
        }
        n
    })
    .unwrap_or(0);
    napi::u32v(a.env, n)
});

export!(set_ref, |a| {
    reactor::with(|r| r.set_server_ref(a.u32(0), a.bool(1)));
    undef(&a)
});

// serverConns(sid, idleOnly) -> ids: JS decides which to destroy (closeIdleConnections).
export!(conns, |a| {
    let ids = reactor::with(|r| r.server_conns(a.u32(0), a.bool(1))).unwrap_or_default();
    let vals: Vec<Value> = ids.iter().map(|&id| napi::f64v(a.env, id as f64)).collect();
    napi::array(a.env, &vals)
});

thread_local! {
    /// TLS contexts JS made (tls.createSecureContext's counterpart), by handle.
    static TLS_CONTEXTS: RefCell<Vec<Option<Arc<TlsContext>>>> = const { RefCell::new(Vec::new()) };
}

/// Handles start at 1: 0 names no context (the server's own, in `tlsSniAnswer`).
fn tls_context(handle: u32) -> Option<Arc<TlsContext>> {
    TLS_CONTEXTS.with(|t| t.borrow().get(handle as usize).cloned().flatten())
}

fn bytes_list(env: Env, arr: Value) -> Vec<Vec<u8>> {
    if !napi::is_array(env, arr) {
        return Vec::new();
    }
    (0..napi::array_len(env, arr))
        .filter_map(|i| napi::bytes_of(env, napi::element(env, arr, i)).map(<[u8]>::to_vec))
        .collect()
}

/// The strings of the array `obj[name]` (none when it is absent).
fn strings(env: Env, obj: Value, name: &str) -> Vec<String> {
    let arr = napi::get_named(env, obj, name);
    if !napi::is_array(env, arr) {
        return Vec::new();
    }
    (0..napi::array_len(env, arr))
        .map(|i| {
            let mut s = Vec::new();
            napi::string_into(
                env,
                napi::element(env, arr, i),
                &mut s,
                napi::Encoding::Utf8,
            );
            String::from_utf8_lossy(&s).into_owned()
        })
        .collect()
}

fn flag(env: Env, obj: Value, name: &str) -> bool {
    let v = napi::get_named(env, obj, name);
    let mut b = false;
    // SAFETY: v is a live value of the current call; a non-boolean leaves `b` false.
    unsafe { ::napi::sys::napi_get_value_bool(env, v, &mut b) };
    b
}

// tlsContextCreate(spec) -> handle: a secure context from PEM/DER bytes; throws
// ERR_FAST_HTTP_TLS with the reason when rustls refuses it.
export!(tls_context_create, |a| {
    let env = a.env;
    let Some(obj) = a.get(0) else {
        return undef(&a);
    };
    let pairs_arr = napi::get_named(env, obj, "pairs");
    let mut pairs = Vec::new();
    if napi::is_array(env, pairs_arr) {
        for i in 0..napi::array_len(env, pairs_arr) {
            let pair = bytes_list(env, napi::element(env, pairs_arr, i));
            if let [cert, key] = &pair[..] {
                pairs.push((cert.clone(), key.clone()));
            }
        }
    }
    let alpn_arr = napi::get_named(env, obj, "alpn");
    let mut alpn = Vec::new();
    if napi::is_array(env, alpn_arr) {
        for i in 0..napi::array_len(env, alpn_arr) {
            let mut name = Vec::new();
            napi::string_into(
                env,
                napi::element(env, alpn_arr, i),
                &mut name,
                napi::Encoding::Latin1,
            );
            alpn.push(name);
        }
    }
    let spec = TlsSpec {
        pairs,
        ca: bytes_list(env, napi::get_named(env, obj, "ca")),
        roots: bytes_list(env, napi::get_named(env, obj, "roots")),
        request_cert: flag(env, obj, "requestCert"),
        reject_unauthorized: flag(env, obj, "rejectUnauthorized"),
        min_version: napi::u32_of(env, napi::get_named(env, obj, "minVersion")) as u16,
        max_version: napi::u32_of(env, napi::get_named(env, obj, "maxVersion")) as u16,
        alpn,
        tickets: flag(env, obj, "tickets"),
        ciphers: strings(env, obj, "ciphers"),
        honor_cipher_order: {
            let v = napi::get_named(env, obj, "honorCipherOrder");
            napi::is_nullish(env, v) || flag(env, obj, "honorCipherOrder")
        },
        groups: strings(env, obj, "groups"),
        session_timeout: {
            let v = napi::get_named(env, obj, "sessionTimeout");
            (!napi::is_nullish(env, v))
                .then(|| napi::f64_of(env, v).clamp(0.0, u32::MAX as f64) as u32)
        },
        ticket_keys: {
            let v = napi::get_named(env, obj, "ticketKeys");
            napi::bytes_of(env, v).map(<[u8]>::to_vec)
        },
    };
    match TlsContext::new(&spec) {
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
});

// tlsDecodePfx(pfx, passphrase) -> [key, ...certs] (PKCS#8 DER, then DER certificates in
// the archive's order), or undefined for an archive the decoder cannot open.
export!(tls_decode_pfx, |a| {
    let Some(pfx) = a.bytes(0) else {
        return undef(&a);
    };
    // OpenSSL's PKCS12_parse without a passphrase tries the empty one.
    let passphrase = a.string(1).unwrap_or_default();
    match crate::net::pkcs12::decode(pfx, &passphrase) {
        Ok(d) => {
            let env = a.env;
            let items: Vec<_> = std::iter::once(&d.key)
                .chain(&d.certs)
                .map(|b| napi::buffer_copy(env, b))
                .collect();
            napi::array(env, &items)
        }
        Err(_) => undef(&a),
    }
});

// tlsContextFree(handle): servers using it keep it until they let go.
export!(tls_context_free, |a| {
    let handle = a.u32(0) as usize;
    TLS_CONTEXTS.with(|t| {
        if let Some(slot) = t.borrow_mut().get_mut(handle) {
            *slot = None;
        }
    });
    undef(&a)
});

// serverSetTls(sid, handle): the server's next connections are TLS with this context (its
// creation, and setSecureContext).
export!(server_set_tls, |a| {
    let sid = a.u32(0);
    let ctx = tls_context(a.u32(1));
    reactor::with(|r| r.set_server_context(sid, ctx));
    undef(&a)
});

// tlsAddContext(handle, servername, other): node's server.addContext.
export!(tls_add_context, |a| {
    let (Some(ctx), Some(name), Some(other)) =
        (tls_context(a.u32(0)), a.string(1), tls_context(a.u32(2)))
    else {
        return undef(&a);
    };
    ctx.add_context(&name, &other);
    undef(&a)
});

// tlsGetTicketKeys(ctx) -> Buffer: node's server.getTicketKeys() (48 bytes).
export!(tls_get_ticket_keys, |a| {
    match tls_context(a.u32(0)) {
        Some(ctx) => napi::buffer_copy(a.env, &ctx.ticketer.get_keys()),
        None => undef(&a),
    }
});

// tlsSetTicketKeys(ctx, keys): node's server.setTicketKeys(); throws ERR_FAST_HTTP_TLS for
// keys that are not 48 bytes.
export!(tls_set_ticket_keys, |a| {
    let (Some(ctx), Some(keys)) = (tls_context(a.u32(0)), a.bytes(1)) else {
        return undef(&a);
    };
    if let Err(msg) = ctx.ticketer.set_keys(keys) {
        napi::throw_error(a.env, "ERR_FAST_HTTP_TLS", &msg);
        return std::ptr::null_mut();
    }
    undef(&a)
});

// tlsSniAnswer(id, ctx, alpn): the SNICallback / ALPNCallback of connection `id` answered: a
// context handle, 0 for the server's own, -1 for an error (the connection closes; JS tells
// 'tlsClientError'); the index of the client's ALPN protocol chosen, -1 when no ALPNCallback
// was asked, -2 when it chose none.
export!(tls_sni_answer, |a| {
    use crate::net::tls::AlpnChoice;
    let id = super::callback::id_of(&a, 0);
    let handle = a.f64(1);
    let alpn = a.f64(2);
    let alpn = if alpn >= 0.0 {
        AlpnChoice::Chosen(alpn as usize)
    } else if alpn <= -2.0 {
        AlpnChoice::Refused
    } else {
        AlpnChoice::Config
    };
    let choice = if handle < 0.0 {
        Err(())
    } else if handle == 0.0 {
        Ok(None)
    } else {
        match tls_context(handle as u32) {
            Some(ctx) => Ok(Some(ctx)),
            None => Err(()),
        }
    };
    reactor::with(|r| r.sni_answer(id, choice, alpn));
    undef(&a)
});
