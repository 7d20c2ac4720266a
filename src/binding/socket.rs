//! The socket facade's calls: raw writes (upgraded sockets, and node's own response path),
//! reading control, options, addresses and counters.

use super::napi::{self, Value};
use super::response::want_drain;
use super::{export, id_of, undef};
use crate::conn::{Pinned, Writing};
use crate::reactor::{self, C_JS_WATCH, C_TAP};
use ::napi::sys;

/// Buffers from this size are queued by reference instead of copied (off the V8 heap, so
/// their memory never moves; node's writev keeps Buffers the same way).
const PIN_MIN: usize = 16 * 1024;

/// Appends one chunk (a Buffer / TypedArray, or a string as latin1 or UTF-8) to the active
/// response of connection `id`. Returns the bytes not yet written of what may be written
/// now (pipelined responses waiting their turn do not count: they wait on this one), -1
/// when the connection is gone or its writing side is shut.
fn append(env: sys::napi_env, id: u64, v: Value, latin1: bool) -> f64 {
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: v is a live value of the current call.
    unsafe { sys::napi_typeof(env, v, &mut kind) };
    reactor::with(|r| {
        let Some(c) = r.conn(id) else { return -1.0 };
        if c.http.writing == Writing::Shut {
            return -1.0;
        }
        let out = &mut c.http.out;
        let seq = out.active;
        if kind == sys::ValueType::napi_string {
            let enc = if latin1 {
                napi::Encoding::Latin1
            } else {
                napi::Encoding::Utf8
            };
            let Some(t) = out.tail(seq) else {
                return out.unsent() as f64;
            };
            let before = t.len();
            napi::string_into(env, v, t, enc);
            let n = t.len() - before;
            out.pushed(n);
        } else if let Some(b) = napi::bytes_of(env, v) {
            let keep = if b.len() >= PIN_MIN {
                napi::JsRef::new(env, v)
            } else {
                None
            };
            match keep {
                Some(keep) => {
                    // SAFETY: `b` is the memory of the Buffer `keep` holds: at least PIN_MIN
                    // bytes, so off the V8 heap and never moved while referenced.
                    let p = unsafe { Pinned::new(b.as_ptr(), b.len(), Box::new(keep)) };
                    let _ = out.push_pinned(p);
                }
                None => {
                    let Some(t) = out.tail(seq) else {
                        return out.unsent() as f64;
                    };
                    t.extend_from_slice(b);
                    out.pushed(b.len());
                }
            }
        }
        out.unsent() as f64
    })
    .unwrap_or(-1.0)
}

/// Queues what was appended for writing (at once outside a batch, at its end inside one)
/// and returns what is still unsent; past the high-water mark JS hears (drain) once it is
/// written.
fn write_out(id: u64, hwm: f64) -> f64 {
    let left = reactor::with(|r| {
        r.after_write(id);
        r.conn(id).map_or(-1.0, |c| c.http.out.unsent() as f64)
    })
    .unwrap_or(-1.0);
    want_drain(id, left, hwm);
    left
}

// raw(id, data, latin1?, highWaterMark, defer?) -> bytes still unsent | -1 when closed
// One chunk of the socket's own writes (upgraded sockets, node's response path). With
// `defer` it waits in the queue for flush() unless the queue passes the high-water mark.
export!(raw, |a| {
    let id = id_of(&a, 0);
    let hwm = a.f64(3);
    let Some(v) = a.get(1) else {
        return napi::f64v(a.env, -1.0);
    };
    let q = append(a.env, id, v, a.bool(2));
    if q < 0.0 || (a.bool(4) && q < hwm) {
        return napi::f64v(a.env, q);
    }
    napi::f64v(a.env, write_out(id, hwm))
});

// flush(id, highWaterMark) -> bytes still unsent | -1: writes what deferred writes queued
// (the end of the JS task that wrote them).
export!(flush, |a| {
    let q = write_out(id_of(&a, 0), a.f64(1));
    napi::f64v(a.env, q)
});

// flushAll(): the process is about to exit; what was ended goes to the kernel now.
export!(flush_all, |a| {
    reactor::with(|r| r.flush_all());
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

/// Sets or clears a connection flag.
fn set_flag(id: u64, flag: u32, on: bool) -> bool {
    reactor::with(|r| {
        r.conn(id)
            .map(|c| {
                if on {
                    c.flags |= flag
                } else {
                    c.flags &= !flag
                }
            })
            .is_some()
    })
    .unwrap_or(false)
}

// decideUpgrade(id, upgrade): server.shouldUpgradeCallback's answer for the Upgrade request
// dispatched with F_ASK_UPGRADE.
export!(decide_upgrade, |a| {
    reactor::with(|r| r.decide_upgrade(id_of(&a, 0), a.bool(1)));
    undef(&a)
});

// discardBody(id): the request whose body is being read was dumped; drop its pieces.
export!(discard_body, |a| {
    reactor::with(|r| r.discard_body(id_of(&a, 0)));
    undef(&a)
});

// tap(id, on): raw bytes also go to JS while the app listens for the socket's 'data'.
export!(tap, |a| {
    set_flag(id_of(&a, 0), C_TAP, a.bool(1));
    undef(&a)
});

// watch(id, on) -> alive: JS holds a socket object; tell it about close/end/timeout.
export!(watch, |a| {
    let alive = set_flag(id_of(&a, 0), C_JS_WATCH, a.bool(1));
    napi::boolean(a.env, alive)
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

// shutdown(id): end() — FIN once the queued output is written; onShutdown follows.
export!(shutdown, |a| {
    reactor::with(|r| r.shutdown(id_of(&a, 0)));
    undef(&a)
});

export!(set_timeout, |a| {
    let id = id_of(&a, 0);
    let ms = a.f64(1) as u64;
    reactor::with(|r| {
        if let Some(c) = r.conn(id) {
            c.http.keep_alive_idle = false;
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

// info(id) -> SocketAddresses (contract.rs) | undefined
export!(info, |a| {
    let id = id_of(&a, 0);
    let addrs = reactor::with(|r| {
        r.conn(id)
            .map(|c| (c.stream.peer_addr(), c.stream.local_addr()))
    })
    .flatten();
    match addrs {
        Some((peer, local)) => super::sink::addresses(a.env, local, peer),
        None => undef(&a),
    }
});

// ioStats(id) -> [bytesRead, bytesWritten, queued] | undefined
export!(io_stats, |a| {
    let id = id_of(&a, 0);
    let v = reactor::with(|r| {
        r.conn(id)
            .map(|c| (c.bytes_read, c.bytes_written, c.http.out.queued()))
    })
    .flatten();
    match v {
        None => undef(&a),
        Some((rd, wr, q)) => {
            let vals: [Value; 3] = [
                napi::f64v(a.env, rd as f64),
                napi::f64v(a.env, wr as f64),
                napi::f64v(a.env, q as f64),
            ];
            napi::array(a.env, &vals)
        }
    }
});
