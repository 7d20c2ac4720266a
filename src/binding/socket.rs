//! The socket facade's calls: raw writes (upgraded sockets, and node's own response path),
//! reading control, options, addresses and counters.

use super::contract::values::{Chunk, Id};
use super::crossings::{self as x, Addresses, NO_RESPONSE};
use super::napi::{self, Value};
use super::response::count;
use crate::conn::Pinned;
use crate::reactor;

/// Buffers from this size are queued by reference instead of copied (off the V8 heap, so
/// their memory never moves; node's writev keeps Buffers the same way).
const PIN_MIN: usize = 16 * 1024;

/// Appends one chunk (a Buffer / TypedArray, or a string as latin1 or UTF-8) to the active
/// response of connection `id`. Returns the bytes not yet written of what may be written
/// now, -1 when the connection is gone or its writing side is shut.
fn append(env: napi::Env, id: u64, chunk: Chunk<'_>, latin1: bool) -> f64 {
    let q = match chunk {
        Chunk::Str(s) => reactor::with(|r| {
            r.write_with(id, |t| {
                if latin1 {
                    s.latin1_into(t)
                } else {
                    s.utf8_into(t)
                }
            })
        }),
        Chunk::Bytes(b, v) => {
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
        }
    };
    count(q.flatten())
}

/// Queues what was appended for writing and returns what is still unsent.
fn write_out(id: u64, hwm: f64) -> f64 {
    count(reactor::with(|r| r.flush_writes(id, hwm)).flatten())
}

/// `raw`: one chunk of the socket's own writes (upgraded sockets, node's response path).
pub(super) fn raw(a: x::Raw) -> Value {
    let id = a.id.0;
    let q = append(a.env, id, a.data, a.latin1);
    if q < 0.0 || (a.defer && q < a.high_water_mark) {
        return napi::f64v(a.env, q);
    }
    napi::f64v(a.env, write_out(id, a.high_water_mark))
}

/// `flush`: writes what deferred writes queued (the end of the JS task that wrote them).
pub(super) fn flush(a: x::Flush) -> Value {
    napi::f64v(a.env, write_out(a.id.0, a.high_water_mark))
}

pub(super) fn flush_all(a: x::FlushAll) -> Value {
    reactor::with(|r| r.flush_all());
    napi::undefined(a.env)
}

pub(super) fn write_batch(a: x::WriteBatch) -> Value {
    super::sink::responses_written();
    command(a.env, |r| r.write_batch())
}

/// Runs a command on the reactor and answers undefined.
fn command(env: napi::Env, f: impl FnOnce(&mut reactor::Reactor)) -> Value {
    reactor::with(f);
    napi::undefined(env)
}

pub(super) fn pause(a: x::Pause) -> Value {
    let Id(id) = a.id;
    command(a.env, |r| if a.paused { r.pause(id) } else { r.resume(id) })
}

/// `inject`: node's socket feeds its parser from 'data', so bytes handed to socket.push()
/// in HTTP mode are parsed as if read from the connection.
pub(super) fn inject(a: x::Inject) -> Value {
    command(a.env, |r| r.inject(a.id.0, a.bytes))
}

pub(super) fn decide_upgrade(a: x::DecideUpgrade) -> Value {
    command(a.env, |r| r.decide_upgrade(a.id.0, a.upgrade))
}

pub(super) fn discard_body(a: x::DiscardBody) -> Value {
    command(a.env, |r| r.discard_body(a.id.0))
}

pub(super) fn handler_threw(a: x::HandlerThrew) -> Value {
    command(a.env, |r| r.handler_threw(a.id.0, a.at, a.body))
}

/// `noteUncaught`: ticks a scope's close ran threw (a body's 'data' listener fails the
/// parser then, as node's).
pub(super) fn note_uncaught(a: x::NoteUncaught) -> Value {
    super::sink::note_uncaught();
    napi::undefined(a.env)
}

pub(super) fn tap(a: x::Tap) -> Value {
    command(a.env, |r| r.set_tap(a.id.0, a.on))
}

pub(super) fn watch(a: x::Watch) -> Value {
    let alive = reactor::with(|r| r.watch(a.id.0, a.on)).unwrap_or(false);
    napi::boolean(a.env, alive)
}

pub(super) fn destroy(a: x::Destroy) -> Value {
    let assigned = (a.assigned != f64::from(NO_RESPONSE)).then_some(a.assigned as u32);
    command(a.env, |r| r.destroy(a.id.0, a.reset, assigned))
}

/// `shutdown`: end() — FIN once the queued output is written; onShutdown follows.
pub(super) fn shutdown(a: x::Shutdown) -> Value {
    command(a.env, |r| r.shutdown(a.id.0))
}

pub(super) fn set_timeout(a: x::SetTimeout) -> Value {
    command(a.env, |r| r.set_idle_timeout(a.id.0, a.ms as u64))
}

pub(super) fn set_no_delay(a: x::SetNoDelay) -> Value {
    command(a.env, |r| r.set_no_delay(a.id.0, a.on))
}

pub(super) fn set_keep_alive(a: x::SetKeepAlive) -> Value {
    command(a.env, |r| r.set_keep_alive(a.id.0, a.on, a.delay_secs))
}

pub(super) fn conn_ref(a: x::ConnRef) -> Value {
    command(a.env, |r| r.set_conn_ref(a.id.0, a.on))
}

pub(super) fn info(a: x::Info) -> Value {
    match reactor::with(|r| r.addresses(a.id.0)).flatten() {
        Some((peer, local)) => super::contract::ToJs::to_js(&Addresses { local, peer }, a.env),
        None => napi::undefined(a.env),
    }
}

pub(super) fn io_stats(a: x::IoStats) -> Value {
    match reactor::with(|r| r.io_stats(a.id.0)).flatten() {
        None => napi::undefined(a.env),
        Some((rd, wr, q)) => {
            let vals: [Value; 3] = [
                napi::f64v(a.env, rd as f64),
                napi::f64v(a.env, wr as f64),
                napi::f64v(a.env, q as f64),
            ];
            napi::array(a.env, &vals)
        }
    }
}

/// `tlsExportKeyingMaterial`: node's tlsSocket.exportKeyingMaterial (its argument checks
/// are the JS side's). Throws ERR_FAST_HTTP_TLS when the handshake is not done.
pub(super) fn tls_export_keying_material(a: x::TlsExportKeyingMaterial) -> Value {
    let len = a.length.max(0.0) as usize;
    let mut label = Vec::new();
    a.label.utf8_into(&mut label);
    let out = reactor::with(|r| r.keying_material(a.id.0, len, &label, a.context))
        .unwrap_or(Err("the connection is closed"));
    match out {
        Ok(bytes) => napi::buffer_copy(a.env, &bytes),
        Err(msg) => {
            napi::throw_error(a.env, "ERR_FAST_HTTP_TLS", msg);
            std::ptr::null_mut()
        }
    }
}
