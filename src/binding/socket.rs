//! The socket facade's calls: raw writes (upgraded sockets, and node's own response path),
//! reading control, options, addresses and counters.

use super::callback::{export, id_of, undef};
use super::napi::{self, Value};
use super::response::count;
use crate::conn::Pinned;
use crate::reactor;
use ::napi::sys;

/// Buffers from this size are queued by reference instead of copied (off the V8 heap, so
/// their memory never moves; node's writev keeps Buffers the same way).
const PIN_MIN: usize = 16 * 1024;

/// Appends one chunk (a Buffer / TypedArray, or a string as latin1 or UTF-8) to the active
/// response of connection `id`. Returns the bytes not yet written of what may be written
/// now, -1 when the connection is gone or its writing side is shut.
fn append(env: sys::napi_env, id: u64, v: Value, latin1: bool) -> f64 {
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: v is a live value of the current call.
    unsafe { sys::napi_typeof(env, v, &mut kind) };
    let q = if kind == sys::ValueType::napi_string {
        let enc = if latin1 {
            napi::Encoding::Latin1
        } else {
            napi::Encoding::Utf8
        };
        reactor::with(|r| {
            r.write_with(id, |t| {
                napi::string_into(env, v, t, enc);
            })
        })
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
                reactor::with(|r| r.write_pinned(id, p))
            }
            None => reactor::with(|r| r.write_with(id, |t| t.extend_from_slice(b))),
        }
    } else {
        reactor::with(|r| r.write_with(id, |_| {}))
    };
    count(q.flatten())
}

/// Queues what was appended for writing and returns what is still unsent.
fn write_out(id: u64, hwm: f64) -> f64 {
    count(reactor::with(|r| r.flush_writes(id, hwm)).flatten())
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
    let id = id_of(&a, 0);
    reactor::with(|r| if a.bool(1) { r.pause(id) } else { r.resume(id) });
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

// handlerThrew(id, at, body): a handler JS ran from its tick queue threw (F_QUEUED): the
// request's, or (body) a 'data' listener of its body.
export!(handler_threw, |a| {
    reactor::with(|r| r.handler_threw(id_of(&a, 0), a.u32(1), a.bool(2)));
    undef(&a)
});

// noteUncaught(): an exception reached node's uncaught path ('uncaughtExceptionMonitor'):
// ticks a scope's close ran threw (a body's 'data' listener fails the parser then, as node's).
export!(note_uncaught, |a| {
    super::sink::note_uncaught();
    undef(&a)
});

// tap(id, on): raw bytes also go to JS while the app listens for the socket's 'data'.
export!(tap, |a| {
    reactor::with(|r| r.set_tap(id_of(&a, 0), a.bool(1)));
    undef(&a)
});

// watch(id, on) -> alive: JS holds a socket object; tell it about close/end/timeout.
export!(watch, |a| {
    let alive = reactor::with(|r| r.watch(id_of(&a, 0), a.bool(1))).unwrap_or(false);
    napi::boolean(a.env, alive)
});

// destroy(id, reset, assigned): close now (RST with `reset`, as socket.resetAndDestroy());
// `assigned`: the seq of the response the socket belongs to in JS, or -1.
export!(destroy, |a| {
    let assigned = a.f64(2);
    let assigned = (assigned >= 0.0).then_some(assigned as u32);
    reactor::with(|r| r.destroy(id_of(&a, 0), a.bool(1), assigned));
    undef(&a)
});

// shutdown(id): end() — FIN once the queued output is written; onShutdown follows.
export!(shutdown, |a| {
    reactor::with(|r| r.shutdown(id_of(&a, 0)));
    undef(&a)
});

export!(set_timeout, |a| {
    reactor::with(|r| r.set_idle_timeout(id_of(&a, 0), a.f64(1) as u64));
    undef(&a)
});

export!(set_no_delay, |a| {
    reactor::with(|r| r.set_no_delay(id_of(&a, 0), a.bool(1)));
    undef(&a)
});

export!(set_keep_alive, |a| {
    reactor::with(|r| r.set_keep_alive(id_of(&a, 0), a.bool(1), a.u32(2)));
    undef(&a)
});

export!(conn_ref, |a| {
    reactor::with(|r| r.set_conn_ref(id_of(&a, 0), a.bool(1)));
    undef(&a)
});

// info(id) -> SocketAddresses (contract.rs) | undefined
export!(info, |a| {
    let id = id_of(&a, 0);
    match reactor::with(|r| r.addresses(id)).flatten() {
        Some((peer, local)) => super::sink::addresses(a.env, local, peer),
        None => undef(&a),
    }
});

// ioStats(id) -> [bytesRead, bytesWritten, queued] | undefined
export!(io_stats, |a| {
    let id = id_of(&a, 0);
    let v = reactor::with(|r| r.io_stats(id)).flatten();
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

// tlsExportKeyingMaterial(id, length, label, context?) -> Buffer: RFC 5705 keying material of
// a TLS connection whose handshake is done (node's tlsSocket.exportKeyingMaterial; its
// argument checks are the JS side's). Throws ERR_FAST_HTTP_TLS otherwise.
export!(tls_export_keying_material, |a| {
    let id = id_of(&a, 0);
    let len = a.f64(1).max(0.0) as usize;
    let mut label = Vec::new();
    a.utf8_into(2, &mut label);
    let context = a.bytes(3);
    let out = reactor::with(|r| r.keying_material(id, len, &label, context))
        .unwrap_or(Err("the connection is closed"));
    match out {
        Ok(bytes) => napi::buffer_copy(a.env, &bytes),
        Err(msg) => {
            napi::throw_error(a.env, "ERR_FAST_HTTP_TLS", msg);
            std::ptr::null_mut()
        }
    }
});
