//! Responses: a whole response in one call (`respond`, node's implicit writeHead + end),
//! a head node serialized plus the body (`send`); responses node's own code streams through
//! the socket (`raw`, in socket.rs) end with `finish`.

use super::napi::{self, Args, Env, Value};
use super::{export, id_of};
use crate::conn::Writing;
use crate::proto::encode::{self, *};
use crate::reactor::{self, Reactor};
use ::napi::sys;
use std::ptr;

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

pub(super) enum Body<'a> {
    None,
    Bytes(&'a [u8]),
    Str(Value),
}

pub(super) fn body_of<'a>(a: &'a Args, i: usize) -> Body<'a> {
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

/// Queues the bytes `f` appends (about `size` of them) for response `seq` of connection
/// `id`, then schedules the flush. Returns the bytes this call added; -1 when the connection
/// is gone.
fn with_output(
    id: u64,
    seq: u32,
    tentative: bool,
    size: usize,
    f: impl FnOnce(&mut Reactor, &mut Vec<u8>),
) -> f64 {
    reactor::with(|r| {
        let mut out = r.out_buffer(size);
        if r.conn(id).is_none() {
            return -1.0;
        }
        f(r, &mut out);
        let added = out.len() as f64;
        let Some(c) = r.conn(id) else { return -1.0 };
        if c.http.writing == Writing::Shut {
            r.recycle(out);
            return -1.0;
        }
        let q = &mut c.http.out;
        if tentative && seq == q.active {
            q.mark_tentative();
        }
        if let Some(spare) = q.push(seq, out) {
            r.recycle(spare);
        }
        added
    })
    .unwrap_or(-1.0)
}

/// After bytes of response `seq` were queued: the response is done (`last`), or more follow.
pub(super) fn after(id: u64, seq: u32, last: bool, close: bool) {
    reactor::with(|r| {
        if last {
            r.response_done(id, seq, close);
        } else {
            r.after_write(id);
        }
    });
}

/// Buffer bodies from this size are offered to the kernel without a copy (write_direct).
const DIRECT_BODY: usize = 16 * 1024;

thread_local! {
    /// The buffer string bodies are encoded into, kept between responses.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Scratch buffers up to this capacity are kept for the next response.
const SCRATCH_KEEP: usize = 64 * 1024;

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

/// A large Buffer body offered to the kernel straight from JS memory, head and framing
/// around it. None when it must take the queued path.
fn respond_direct(
    a: &Args,
    id: u64,
    seq: u32,
    status: u16,
    flags: u32,
    bytes: &[u8],
) -> Option<f64> {
    let len = bytes.len();
    reactor::with(|r| {
        let mut head = Vec::with_capacity(512);
        put_head(r, a, &mut head, status, 3, 4, flags);
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
        let keep =
            || napi::JsRef::new(a.env, body_value).map(|k| Box::new(k) as Box<dyn std::any::Any>);
        // SAFETY: `bytes` is the backing store of the Buffer `body_value`; it is at least
        // DIRECT_BODY bytes, so off the V8 heap and never moved, and `keep` holds a strong
        // reference to that Buffer.
        unsafe { r.write_direct(id, seq, &head, bytes, &tail, keep) }
            .map(|_| (head.len() + len + tail.len()) as f64)
    })
    .flatten()
}

// respond(id, seq, status, reason|null, headerLines, body|undefined, flags, trailers)
//   -> bytes written | -1
// A whole response in one crossing (node's implicit writeHead + end): status line, the user's
// header lines, then Date / Connection / Keep-Alive / Content-Length / Transfer-Encoding
// from cached blobs as the flags say, then the body.
export!(respond, |a| {
    let (id, seq, status, flags) = (id_of(&a, 0), a.u32(1), a.u32(2) as u16, a.u32(6));
    let mut body = body_of(&a, 5);
    if let Body::Bytes(bytes) = body {
        if bytes.len() >= DIRECT_BODY && flags & (R_TENTATIVE | R_NO_BODY) == 0 {
            if let Some(written) = respond_direct(&a, id, seq, status, flags, bytes) {
                after(id, seq, true, flags & R_CLOSE_AFTER != 0);
                return napi::f64v(a.env, written);
            }
        }
    }
    // A string body is encoded once, before the head that needs its length: measuring its
    // UTF-8 length first was a second scan of the string.
    let mut encoded = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
    if let Body::Str(v) = body {
        napi::string_into(a.env, v, &mut encoded, napi::Encoding::Utf8);
        body = Body::Bytes(&encoded);
    }
    let len = body_len(a.env, &body);
    let q = with_output(id, seq, flags & R_TENTATIVE != 0, 512 + len, |r, out| {
        put_head(r, &a, out, status, 3, 4, flags);
        auto_headers_for(r, id, out, flags, len);
        put_full_body(&a, out, &body, flags, 7);
    });
    if q >= 0.0 {
        after(id, seq, true, flags & R_CLOSE_AFTER != 0);
    }
    if encoded.capacity() <= SCRATCH_KEEP {
        encoded.clear();
        SCRATCH.with(|s| *s.borrow_mut() = encoded);
    }
    napi::f64v(a.env, q)
});

// send(id, seq, head, body|undefined, flags, trailers) -> bytes written | -1
// A response whose head node already serialized (writeHead), plus its whole body.
export!(send, |a| {
    let (id, seq, flags) = (id_of(&a, 0), a.u32(1), a.u32(4));
    let body = body_of(&a, 3);
    let size = 512 + body_len(a.env, &body);
    let q = with_output(id, seq, flags & R_TENTATIVE != 0, size, |_, out| {
        head_text(&a, 2, out, flags);
        put_full_body(&a, out, &body, flags, 5);
    });
    if q >= 0.0 {
        after(id, seq, true, flags & R_CLOSE_AFTER != 0);
    }
    napi::f64v(a.env, q)
});

/// Marks that JS saw a full buffer, so it hears (drain) once the output is written.
pub(super) fn want_drain(id: u64, queued: f64, hwm: f64) {
    if queued >= hwm && queued > 0.0 {
        reactor::with(|r| {
            if let Some(c) = r.conn(id) {
                c.flags |= reactor::C_WANT_DRAIN;
            }
        });
    }
}

// finish(id, seq, close): a response written through the socket is complete.
export!(finish, |a| {
    after(id_of(&a, 0), a.u32(1), true, a.bool(2));
    napi::undefined(a.env)
});
