//! Functions JS calls. Each is a raw N-API callback behind `napi::guard` (no panic crosses
//! into Node) and counts one JS → native crossing.

use super::js::{JsCtx, CALLBACK_NAMES};
use super::napi::{self, Args, Env, Value};
use crate::conn::*;
use crate::net::listener::{self, Listener, TcpOptions};
use crate::proto::encode::{self, *};
use crate::proto::parse::Methods;
use crate::reactor::{self, Reactor, Server, ServerCfg};
use ::napi::sys;
use std::net::IpAddr;
use std::ptr;

macro_rules! export {
    ($name:ident, |$a:ident| $body:expr) => {
        unsafe extern "C" fn $name(env: sys::napi_env, info: sys::napi_callback_info) -> Value {
            napi::guard(env, || {
                // SAFETY: env/info are the ones Node passed to this callback.
                let $a = unsafe { Args::new(env, info) };
                reactor::with(|r| r.counters.js_to_native += 1);
                $body
            })
        }
    };
    // Introspection that must not count itself.
    (uncounted $name:ident, |$a:ident| $body:expr) => {
        unsafe extern "C" fn $name(env: sys::napi_env, info: sys::napi_callback_info) -> Value {
            napi::guard(env, || {
                // SAFETY: env/info are the ones Node passed to this callback.
                let $a = unsafe { Args::new(env, info) };
                $body
            })
        }
    };
}

/// Registers every function on `exports`.
pub fn register(env: Env, exports: Value) {
    let fns: &[(&str, sys::napi_callback)] = &[
        ("init", Some(init)),
        ("serverCreate", Some(server_create)),
        ("serverConfig", Some(server_config)),
        ("serverFlags", Some(server_flags)),
        ("listenTcp", Some(listen_tcp)),
        ("listenUnix", Some(listen_unix)),
        ("serverClose", Some(server_close)),
        ("serverFree", Some(server_free)),
        ("serverRef", Some(server_ref)),
        ("serverConns", Some(server_conns)),
        ("respond", Some(respond)),
        ("send", Some(send)),
        ("writeHead", Some(write_head)),
        ("write", Some(write)),
        ("end", Some(end)),
        ("raw", Some(raw)),
        ("finish", Some(finish)),
        ("flush", Some(flush)),
        ("pause", Some(pause)),
        ("inject", Some(inject)),
        ("tap", Some(tap)),
        ("destroy", Some(destroy)),
        ("shutdown", Some(shutdown)),
        ("setTimeout", Some(set_timeout)),
        ("setNoDelay", Some(set_no_delay)),
        ("setKeepAlive", Some(set_keep_alive)),
        ("connRef", Some(conn_ref)),
        ("watch", Some(watch)),
        ("info", Some(info)),
        ("ioStats", Some(io_stats)),
        ("stats", Some(stats)),
        ("counters", Some(counters)),
    ];
    for (name, f) in fns {
        napi::define_fn(env, exports, name, *f);
    }
}

fn undef(a: &Args) -> Value {
    napi::undefined(a.env)
}

fn id_of(a: &Args, i: usize) -> u64 {
    a.f64(i) as u64
}

// init(callbacks, methods[], statusCodes[code, message, ...])
export!(init, |a| {
    let env = a.env;
    let Some(cbs_obj) = a.get(0) else {
        return undef(&a);
    };
    let mut cbs = Vec::new();
    for name in CALLBACK_NAMES {
        cbs.push(napi::reference(env, napi::get_named(env, cbs_obj, name)));
    }
    let mut methods = Vec::new();
    if let Some(arr) = a.get(1) {
        for i in 0..napi::array_len(env, arr) {
            let mut v = Vec::new();
            napi::string_into(
                env,
                napi::element(env, arr, i),
                &mut v,
                napi::Encoding::Latin1,
            );
            methods.push(v);
        }
    }
    let mut status: Vec<Option<Vec<u8>>> = vec![None; 1000];
    if let Some(arr) = a.get(2) {
        let n = napi::array_len(env, arr);
        let mut i = 0;
        while i + 1 < n {
            let mut code = 0u32;
            // SAFETY: element values are live in this call.
            unsafe { sys::napi_get_value_uint32(env, napi::element(env, arr, i), &mut code) };
            let mut msg = Vec::new();
            napi::string_into(
                env,
                napi::element(env, arr, i + 1),
                &mut msg,
                napi::Encoding::Latin1,
            );
            if (code as usize) < status.len() {
                let mut line = Vec::new();
                encode::status_line(&mut line, code as u16, &msg);
                status[code as usize] = Some(line);
            }
            i += 2;
        }
    }
    let mut resource = ptr::null_mut();
    let mut ctx = ptr::null_mut();
    // SAFETY: a plain object as the async resource, and a name string, both live here.
    unsafe {
        sys::napi_create_object(env, &mut resource);
        let name = napi::utf8(env, "HTTPINCOMINGMESSAGE");
        sys::napi_async_init(env, resource, name, &mut ctx);
    }
    let js = JsCtx {
        env,
        async_ctx: ctx,
        resource: napi::reference(env, resource),
        cbs,
    };
    if let Err(e) = reactor::install(env, js, Methods::new(methods), status) {
        napi::throw_error(env, "ERR_FAST_HTTP_INIT", &e.to_string());
        return ptr::null_mut();
    }
    // SAFETY: the hook runs when this env is torn down, on this thread.
    unsafe { sys::napi_add_env_cleanup_hook(env, Some(cleanup), ptr::null_mut()) };
    undef(&a)
});

unsafe extern "C" fn cleanup(_arg: *mut std::ffi::c_void) {
    let _ = std::panic::catch_unwind(reactor::teardown);
}

export!(server_create, |a| {
    let sid = reactor::with(|r| {
        r.servers.push(Some(Server {
            cfg: ServerCfg::default(),
            listener: None,
            refd: true,
            conns: 0,
            closed: false,
        }));
        r.stats.servers_created += 1;
        (r.servers.len() - 1) as u32
    })
    .unwrap_or(u32::MAX);
    napi::u32v(a.env, sid)
});

// serverConfig(sid, maxHeaderSize, keepAliveTimeout, timeout, headersTimeout, requestTimeout,
//              checkInterval, flags, keepAliveDelaySecs, maxConnections, keepAliveLine)
export!(server_config, |a| {
    let sid = a.u32(0);
    let mut ka_line = Vec::new();
    a.latin1_into(10, &mut ka_line);
    reactor::with(|r| {
        let restart = {
            let Some(s) = r.server(sid) else { return };
            let c = &mut s.cfg;
            let old_interval = c.check_interval;
            c.max_header_size = a.u32(1) as usize;
            c.keep_alive_timeout = a.f64(2) as u64;
            c.timeout = a.f64(3) as u64;
            c.headers_timeout = a.f64(4) as u64;
            c.request_timeout = a.f64(5) as u64;
            c.check_interval = a.f64(6) as u64;
            c.flags = a.u32(7);
            c.keep_alive_delay = a.u32(8);
            c.max_connections = a.u32(9);
            c.ka_line = ka_line;
            old_interval != c.check_interval && s.listener.is_some()
        };
        if restart {
            r.start_server_checks(sid);
        }
    });
    undef(&a)
});

// serverFlags(sid, mask, value): listener-presence bits, updated as JS listeners come and go.
export!(server_flags, |a| {
    let (sid, mask, value) = (a.u32(0), a.u32(1), a.u32(2));
    reactor::with(|r| {
        if let Some(s) = r.server(sid) {
            s.cfg.flags = (s.cfg.flags & !mask) | (value & mask);
        }
    });
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
                    napi::utf8(env, family),
                    napi::u32v(env, sa.port() as u32),
                ],
            )
        }
        None => napi::undefined(env),
    }
}

fn errno_of(e: &std::io::Error) -> i32 {
    -e.raw_os_error().unwrap_or(libc::EINVAL)
}

// listenTcp(sid, ip, port, backlog, reusePort, ipv6Only) -> [address, family, port] | -errno
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
    match listener::listen_tcp(ip, a.u32(2) as u16, &opts) {
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
    match listener::listen_unix(&path, a.u32(2) as i32) {
        Err(e) => napi::i32v(a.env, errno_of(&e)),
        Ok(l) => match reactor::with(|r| r.register_listener(sid, Listener::Unix(l, path))) {
            Some(Ok(())) => napi::i32v(a.env, 0),
            Some(Err(e)) => napi::i32v(a.env, errno_of(&e)),
            None => napi::i32v(a.env, -libc::EINVAL),
        },
    }
});

// serverClose(sid) -> connections still open
export!(server_close, |a| {
    let n = reactor::with(|r| r.close_listener(a.u32(0))).unwrap_or(0);
    napi::u32v(a.env, n)
});

// serverFree(sid): the JS server was garbage-collected.
export!(server_free, |a| {
    let sid = a.u32(0);
    reactor::with(|r| {
        r.close_listener(sid);
        if r.server(sid).map(|s| s.conns == 0) == Some(true) {
            r.servers[sid as usize] = None;
        }
    });
    undef(&a)
});

export!(server_ref, |a| {
    reactor::with(|r| r.set_server_ref(a.u32(0), a.bool(1)));
    undef(&a)
});

// serverConns(sid, idleOnly, close) -> ids (closing them natively when `close`)
export!(server_conns, |a| {
    let (sid, idle, close) = (a.u32(0), a.bool(1), a.bool(2));
    let ids = reactor::with(|r| {
        let ids = r.server_conns(sid, idle);
        if close {
            for &id in &ids {
                r.close_conn(id, 0);
            }
        }
        ids
    })
    .unwrap_or_default();
    let vals: Vec<Value> = ids.iter().map(|&id| napi::f64v(a.env, id as f64)).collect();
    napi::array(a.env, &vals)
});

/// Head text as latin1, or UTF-8 with R_UTF8_HEAD.
fn head_text(a: &Args, i: usize, out: &mut Vec<u8>, flags: u32) {
    if flags & R_UTF8_HEAD != 0 {
        a.utf8_into(i, out);
    } else {
        a.latin1_into(i, out);
    }
}

/// Status line (cached per code unless a custom reason is given) and the user's header lines.
fn put_head(
    r: &mut Reactor,
    a: &Args,
    out: &mut Vec<u8>,
    status: u16,
    reason: usize,
    headers: usize,
    flags: u32,
) {
    if a.is_nullish(reason) {
        match r.status_line(status) {
            Some(l) => out.extend_from_slice(l),
            None => encode::status_line(out, status, b"unknown"),
        }
    } else {
        let mut msg = Vec::new();
        head_text(a, reason, &mut msg, flags);
        encode::status_line(out, status, &msg);
    }
    head_text(a, headers, out, flags);
}

enum Body<'a> {
    None,
    Bytes(&'a [u8]),
    Str(Value),
}

fn body_of<'a>(a: &'a Args, i: usize) -> Body<'a> {
    if a.is_nullish(i) {
        return Body::None;
    }
    if a.kind(i) == sys::ValueType::napi_string {
        return Body::Str(a.argv[i]);
    }
    match a.bytes(i) {
        Some(b) => Body::Bytes(b),
        None => Body::None,
    }
}

fn utf8_len(env: Env, v: Value) -> usize {
    let mut len = 0usize;
    // SAFETY: v is a live string value; a null buffer asks for the length only.
    unsafe { sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len) };
    len
}

/// Appends a body to `out`, framed as one chunk when `chunked`.
fn put_body(env: Env, out: &mut Vec<u8>, body: &Body<'_>, chunked: bool) {
    match body {
        Body::None => {}
        Body::Bytes(b) => {
            if chunked {
                encode::chunk(out, b)
            } else {
                out.extend_from_slice(b)
            }
        }
        Body::Str(v) => {
            if chunked {
                let n = utf8_len(env, *v);
                if n == 0 {
                    return;
                }
                encode::chunk_header(out, n);
                napi::string_into(env, *v, out, napi::Encoding::Utf8);
                out.extend_from_slice(b"\r\n");
            } else {
                napi::string_into(env, *v, out, napi::Encoding::Utf8);
            }
        }
    }
}

/// Runs `f` on the bytes of response `seq` (or the active response when seq is -1), then
/// schedules the flush. Returns the connection's queued output, or -1 when it is gone.
/// Returns the connection's queued output (or, with `appended`, the bytes this call added).
fn with_output(
    id: u64,
    seq: f64,
    tentative: bool,
    f: impl FnOnce(&mut Reactor, &mut Vec<u8>),
) -> f64 {
    with_output_ex(id, seq, tentative, false, 256, f)
}

/// `size`: about how many bytes `f` appends (one allocation instead of repeated growth).
fn with_output_ex(
    id: u64,
    seq: f64,
    tentative: bool,
    appended: bool,
    size: usize,
    f: impl FnOnce(&mut Reactor, &mut Vec<u8>),
) -> f64 {
    reactor::with(|r| {
        let mut out = r.out_buffer(size);
        let seq = {
            let Some(c) = r.conn(id) else { return -1.0 };
            if seq < 0.0 {
                c.out.active
            } else {
                seq as u32
            }
        };
        f(r, &mut out);
        let added = out.len() as f64;
        let Some(c) = r.conn(id) else { return -1.0 };
        if c.flags & C_WRITE_SHUT != 0 {
            return -1.0;
        }
        let tentative = tentative && c.out.tentative.is_none();
        let at = c.out.buf.len();
        let active = seq == c.out.active;
        if let Some(t) = c.out.target(seq) {
            if t.is_empty() {
                std::mem::swap(t, &mut out);
            } else {
                t.extend_from_slice(&out);
            }
        }
        if tentative && active {
            c.out.tentative = Some(at);
        }
        let result = if appended {
            added
        } else {
            c.out.queued() as f64
        };
        r.recycle(out);
        result
    })
    .unwrap_or(-1.0)
}

fn after(id: u64, seq: u32, last: bool, close: bool) {
    reactor::with(|r| {
        if last {
            r.response_done(id, seq, close);
        } else {
            r.after_write(id);
        }
    });
}

/// Appends a body (framed as one chunk plus the last chunk and trailers with R_FRAME).
fn put_full_body(a: &Args, out: &mut Vec<u8>, body: &Body<'_>, flags: u32, trailers: usize) {
    if flags & R_NO_BODY != 0 {
        return;
    }
    let frame = flags & R_FRAME != 0;
    put_body(a.env, out, body, frame);
    if frame {
        let mut t = Vec::new();
        a.latin1_into(trailers, &mut t);
        encode::last_chunk(out, &t);
    }
}

fn body_len(env: Env, body: &Body<'_>) -> usize {
    match body {
        Body::None => 0,
        Body::Bytes(b) => b.len(),
        Body::Str(v) => utf8_len(env, *v),
    }
}

/// Buffer bodies from this size are offered to the kernel without a copy (write_direct).
const DIRECT_BODY: usize = 16 * 1024;

// respond(id, seq, status, reason|null, headerLines, body|undefined, flags, trailers)
//   -> bytes written | -1
// A whole response in one crossing (node's implicit writeHead + end): status line, the user's
// header lines, then Date / Connection / Keep-Alive / Content-Length / Transfer-Encoding
// from cached blobs as the flags say, then the body.
export!(respond, |a| {
    let (id, seq, status, flags) = (id_of(&a, 0), a.u32(1), a.u32(2) as u16, a.u32(6));
    let mut body = body_of(&a, 5);
    // A string body is encoded once, before the head that needs its length: measuring its
    // UTF-8 length first was a second scan of the string.
    let mut encoded = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let from_string = if let Body::Str(v) = body {
        napi::string_into(a.env, v, &mut encoded, napi::Encoding::Utf8);
        body = Body::Bytes(&encoded);
        true
    } else {
        false
    };
    let len = body_len(a.env, &body);
    if let (Body::Bytes(bytes), false) = (&body, from_string) {
        let bytes = *bytes;
        if bytes.len() >= DIRECT_BODY && flags & (R_TENTATIVE | R_NO_BODY) == 0 {
            let sent = reactor::with(|r| {
                let mut head = Vec::with_capacity(512);
                put_head(r, &a, &mut head, status, 3, 4, flags);
                auto_headers_for(r, id, &mut head, flags, len);
                let mut tail = Vec::new();
                if flags & R_FRAME != 0 {
                    // One chunk and the last chunk, as put_full_body frames it.
                    encode::chunk_header(&mut head, len);
                    tail.extend_from_slice(b"\r\n");
                    let mut trailers = Vec::new();
                    a.latin1_into(7, &mut trailers);
                    encode::last_chunk(&mut tail, &trailers);
                }
                let body_value = a.argv[5];
                let keep = || {
                    napi::JsRef::new(a.env, body_value)
                        .map(|k| Box::new(k) as Box<dyn std::any::Any>)
                };
                // SAFETY: `bytes` is the backing store of the Buffer `body_value`; it is at
                // least DIRECT_BODY bytes, so off the V8 heap and never moved, and `keep`
                // holds a strong reference to that Buffer.
                unsafe { r.write_direct(id, seq, &head, bytes, &tail, keep) }
                    .map(|_| (head.len() + len + tail.len()) as f64)
            })
            .flatten();
            if let Some(written) = sent {
                after(id, seq, true, flags & R_CLOSE_AFTER != 0);
                return napi::f64v(a.env, written);
            }
        }
    }
    let q = with_output_ex(
        id,
        seq as f64,
        flags & R_TENTATIVE != 0,
        true,
        512 + len,
        |r, out| {
            put_head(r, &a, out, status, 3, 4, flags);
            auto_headers_for(r, id, out, flags, len);
            put_full_body(&a, out, &body, flags, 7);
        },
    );
    if q >= 0.0 {
        after(id, seq, true, flags & R_CLOSE_AFTER != 0);
    }
    if encoded.capacity() <= SCRATCH_KEEP {
        encoded.clear();
        SCRATCH.with(|s| *s.borrow_mut() = encoded);
    }
    napi::f64v(a.env, q)
});

thread_local! {
    /// The buffer string bodies are encoded into, kept between responses.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Scratch buffers up to this capacity are kept for the next response.
const SCRATCH_KEEP: usize = 64 * 1024;

// send(id, seq, head, body|undefined, flags, trailers) -> bytes written | -1
// A response whose head node already serialized (writeHead), plus its whole body.
export!(send, |a| {
    let (id, seq, flags) = (id_of(&a, 0), a.u32(1), a.u32(4));
    let body = body_of(&a, 3);
    let size = 512 + body_len(a.env, &body);
    let q = with_output_ex(
        id,
        seq as f64,
        flags & R_TENTATIVE != 0,
        true,
        size,
        |_, out| {
            head_text(&a, 2, out, flags);
            put_full_body(&a, out, &body, flags, 5);
        },
    );
    if q >= 0.0 {
        after(id, seq, true, flags & R_CLOSE_AFTER != 0);
    }
    napi::f64v(a.env, q)
});

fn auto_headers_for(r: &mut Reactor, id: u64, out: &mut Vec<u8>, flags: u32, len: usize) {
    let sid = r.conn(id).map(|c| c.server);
    // Borrowed, not copied: this runs for every response.
    if flags & R_DATE != 0 {
        r.refresh_date();
    }
    let ka = sid
        .and_then(|sid| r.servers.get(sid as usize))
        .and_then(|s| s.as_ref())
        .map(|s| s.cfg.ka_line.as_slice())
        .unwrap_or(b"");
    encode::auto_headers(out, flags, len, r.date.current(), ka);
}

// writeHead(id, seq, status, reason|null, headerLines, flags, contentLength) -> queued | -1
export!(write_head, |a| {
    let (id, seq, status, flags) = (id_of(&a, 0), a.u32(1), a.u32(2) as u16, a.u32(5));
    let cl = a.f64(6) as usize;
    let q = with_output(id, seq as f64, false, |r, out| {
        put_head(r, &a, out, status, 3, 4, flags);
        let ka = r
            .conn(id)
            .map(|c| c.server)
            .and_then(|sid| r.server(sid).map(|s| s.cfg.ka_line.clone()))
            .unwrap_or_default();
        let date = if flags & R_DATE != 0 {
            r.refresh_date();
            r.date.current().to_vec()
        } else {
            Vec::new()
        };
        encode::auto_headers(out, flags, cl, &date, &ka);
    });
    if q >= 0.0 {
        after(id, seq, false, false);
    }
    napi::f64v(a.env, q)
});

/// Marks that JS saw a full buffer, so it gets onDrain once the output is written.
fn want_drain(id: u64, queued: f64, hwm: f64) {
    if queued >= hwm && queued > 0.0 {
        reactor::with(|r| {
            if let Some(c) = r.conn(id) {
                c.flags |= C_WANT_DRAIN;
            }
        });
    }
}

// write(id, seq, chunk, flags, highWaterMark) -> queued | -1
export!(write, |a| {
    let (id, seq, flags) = (id_of(&a, 0), a.u32(1), a.u32(3));
    let body = body_of(&a, 2);
    let env = a.env;
    let q = with_output(id, seq as f64, false, |_, out| {
        put_body(env, out, &body, flags & R_FRAME != 0);
    });
    if q >= 0.0 {
        after(id, seq, false, false);
        want_drain(id, q, a.f64(4));
    }
    napi::f64v(a.env, q)
});

// end(id, seq, chunk|undefined, trailerLines|undefined, flags) -> queued | -1
export!(end, |a| {
    let (id, seq, flags) = (id_of(&a, 0), a.u32(1), a.u32(4));
    let body = body_of(&a, 2);
    let env = a.env;
    let q = with_output(id, seq as f64, false, |_, out| {
        if flags & R_NO_BODY == 0 {
            put_body(env, out, &body, flags & R_FRAME != 0);
        }
        if flags & R_FRAME != 0 {
            let mut trailers = Vec::new();
            a.latin1_into(3, &mut trailers);
            encode::last_chunk(out, &trailers);
        }
    });
    if q >= 0.0 {
        after(id, seq, true, flags & R_CLOSE_AFTER != 0);
    }
    napi::f64v(a.env, q)
});

/// Held (deferred) bytes past which a coalescing batch is written at once.
const COALESCE_LIMIT: usize = 64 * 1024;

// raw(id, seq (-1 = the active response), data, latin1?, highWaterMark, defer?)
//   -> bytes still unsent after trying to write | 0 when held (defer) | -1 when closed
// With `defer` the bytes wait in the connection's buffer for flush() (write coalescing on
// upgraded sockets), unless the held batch passes 64 KB.
export!(raw, |a| {
    let id = id_of(&a, 0);
    let seq = a.f64(1);
    let latin1 = a.bool(3);
    let defer = a.bool(5);
    let env = a.env;
    // Appended straight into the connection's buffer: this is the per-write hot path of
    // upgraded sockets.
    let q = reactor::with(|r| {
        let Some(c) = r.conn(id) else { return -1.0 };
        if c.flags & C_WRITE_SHUT != 0 {
            return -1.0;
        }
        let seq = if seq < 0.0 { c.out.active } else { seq as u32 };
        let Some(t) = c.out.target(seq) else {
            return c.out.queued() as f64;
        };
        if a.kind(2) == sys::ValueType::napi_string {
            let enc = if latin1 {
                napi::Encoding::Latin1
            } else {
                napi::Encoding::Utf8
            };
            napi::string_into(env, a.argv[2], t, enc);
        } else if let Some(b) = a.bytes(2) {
            t.extend_from_slice(b);
        }
        c.out.queued() as f64
    })
    .unwrap_or(-1.0);
    if q < 0.0 {
        return napi::f64v(a.env, q);
    }
    if defer && q as usize <= COALESCE_LIMIT {
        // Held, not refused: no backpressure yet.
        return napi::f64v(a.env, 0.0);
    }
    // What the kernel did not take (inside a batch, everything until the batch ends).
    let left = reactor::with(|r| {
        r.after_write(id);
        r.conn(id).map(|c| c.out.queued() as f64).unwrap_or(-1.0)
    })
    .unwrap_or(-1.0);
    want_drain(id, left, a.f64(4));
    napi::f64v(a.env, left)
});

// flush(id): write what coalescing held back (end of the JS task's microtasks).
export!(flush, |a| {
    let id = id_of(&a, 0);
    reactor::with(|r| r.after_write(id));
    undef(&a)
});

// finish(id, seq, close): a response written through raw() is complete.
export!(finish, |a| {
    after(id_of(&a, 0), a.u32(1), true, a.bool(2));
    undef(&a)
});

export!(pause, |a| {
    reactor::with(|r| r.set_paused(id_of(&a, 0), a.bool(1)));
    undef(&a)
});

// inject(id, bytes): bytes handed to socket.push() in HTTP mode are parsed as if they had
// been read from the connection (node's socket feeds its parser from 'data').
export!(inject, |a| {
    let id = id_of(&a, 0);
    if let Some(b) = a.bytes(1) {
        reactor::with(|r| r.inject(id, b));
    }
    undef(&a)
});

// tap(id, on): raw bytes also go to JS while the app listens for the socket's 'data'.
export!(tap, |a| {
    let id = id_of(&a, 0);
    reactor::with(|r| {
        if let Some(c) = r.conn(id) {
            if a.bool(1) {
                c.flags |= C_TAP;
            } else {
                c.flags &= !C_TAP;
            }
        }
    });
    undef(&a)
});

// destroy(id, reset): close now (RST with `reset`, as socket.resetAndDestroy()).
export!(destroy, |a| {
    let id = id_of(&a, 0);
    reactor::with(|r| {
        if a.bool(1) {
            if let Some(c) = r.conn(id) {
                c.stream.set_linger_zero();
            }
        }
        r.close_conn(id, 0)
    });
    undef(&a)
});

// shutdown(id): end() — FIN once the queued output is written.
export!(shutdown, |a| {
    let id = id_of(&a, 0);
    reactor::with(|r| {
        if let Some(c) = r.conn(id) {
            c.flags |= C_END_AFTER_FLUSH | C_NO_MORE_REQUESTS;
        }
        r.after_write(id);
    });
    undef(&a)
});

export!(set_timeout, |a| {
    let id = id_of(&a, 0);
    let ms = a.f64(1) as u64;
    reactor::with(|r| {
        if let Some(c) = r.conn(id) {
            c.flags &= !C_KEEP_ALIVE_IDLE;
        }
        r.set_timeout(id, ms)
    });
    undef(&a)
});

export!(set_no_delay, |a| {
    let id = id_of(&a, 0);
    reactor::with(|r| r.conn(id).map(|c| c.stream.set_nodelay(a.bool(1))));
    undef(&a)
});

export!(set_keep_alive, |a| {
    let id = id_of(&a, 0);
    reactor::with(|r| {
        r.conn(id)
            .map(|c| c.stream.set_keepalive(a.bool(1), a.u32(2)))
    });
    undef(&a)
});

export!(conn_ref, |a| {
    reactor::with(|r| r.set_conn_ref(id_of(&a, 0), a.bool(1)));
    undef(&a)
});

// watch(id, on): JS holds a socket object; tell it about close/end/timeout.
export!(watch, |a| {
    let id = id_of(&a, 0);
    let alive = reactor::with(|r| {
        r.conn(id)
            .map(|c| {
                if a.bool(1) {
                    c.flags |= C_JS_WATCH
                } else {
                    c.flags &= !C_JS_WATCH
                }
            })
            .is_some()
    })
    .unwrap_or(false);
    napi::boolean(a.env, alive)
});

// info(id) -> [remoteAddress, remotePort, remoteFamily, localAddress, localPort] | undefined
export!(info, |a| {
    let id = id_of(&a, 0);
    let addrs = reactor::with(|r| {
        r.conn(id)
            .map(|c| (c.stream.peer_addr(), c.stream.local_addr()))
    })
    .flatten();
    let env = a.env;
    match addrs {
        None => undef(&a),
        Some((peer, local)) => {
            let ip = |s: &Option<std::net::SocketAddr>| match s {
                Some(sa) => napi::utf8(env, &sa.ip().to_string()),
                None => napi::undefined(env),
            };
            let port = |s: &Option<std::net::SocketAddr>| match s {
                Some(sa) => napi::u32v(env, sa.port() as u32),
                None => napi::undefined(env),
            };
            let fam = match peer {
                Some(sa) if sa.is_ipv6() => napi::utf8(env, "IPv6"),
                Some(_) => napi::utf8(env, "IPv4"),
                None => napi::undefined(env),
            };
            napi::array(
                env,
                &[ip(&peer), port(&peer), fam, ip(&local), port(&local)],
            )
        }
    }
});

// ioStats(id) -> [bytesRead, bytesWritten, queued] | undefined
export!(io_stats, |a| {
    let id = id_of(&a, 0);
    let v = reactor::with(|r| {
        r.conn(id)
            .map(|c| (c.bytes_read, c.bytes_written, c.out.queued()))
    })
    .flatten();
    match v {
        None => undef(&a),
        Some((rd, wr, q)) => napi::array(
            a.env,
            &[
                napi::f64v(a.env, rd as f64),
                napi::f64v(a.env, wr as f64),
                napi::f64v(a.env, q as f64),
            ],
        ),
    }
});

// stats() -> [serversCreated, connectionsAccepted, requestsDispatched]
export!(uncounted stats, |a| {
    let s = reactor::with(|r| r.stats).unwrap_or_default();
    napi::array(
        a.env,
        &[
            napi::f64v(a.env, s.servers_created as f64),
            napi::f64v(a.env, s.connections_accepted as f64),
            napi::f64v(a.env, s.requests_dispatched as f64),
        ],
    )
});

// counters() -> [nativeToJs, jsToNative, writeCalls, readCalls]: crossings (the
// one-crossing-per-response test), write(2) calls (the write-coalescing tests) and read(2)
// calls (one per request).
export!(uncounted counters, |a| {
    let c = reactor::with(|r| r.counters).unwrap_or_default();
    napi::array(
        a.env,
        &[
            napi::f64v(a.env, c.native_to_js as f64),
            napi::f64v(a.env, c.js_to_native as f64),
            napi::f64v(a.env, c.write_calls as f64),
            napi::f64v(a.env, c.read_calls as f64),
        ],
    )
});
