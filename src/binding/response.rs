//! Responses: a whole response in one call (`respond`, node's implicit writeHead + end),
//! a head node serialized plus the body (`send`); responses node's own code streams through
//! the socket (`raw`, in socket.rs) end with `finish`. The bytes are encoded by proto's
//! response module from the parts JS passed; this file only says where each part comes from.

use super::contract::values::{Chunk, JsStr};
use super::crossings as x;
use super::napi::{self, Value};
use crate::proto::response::{Head, Response, Source, R_NO_BODY, R_UTF8_HEAD};
use crate::reactor::commands::{Respond, L_TENTATIVE};
use crate::reactor::{self, Reactor};

/// A JS string written as latin1 (node writes header text one byte per unit), or UTF-8.
struct Text {
    s: JsStr,
    utf8: bool,
}

impl Source for Text {
    fn write_to(&self, out: &mut Vec<u8>) {
        if self.utf8 {
            self.s.utf8_into(out)
        } else {
            self.s.latin1_into(out)
        }
    }
}

/// Head text in the encoding the flags say (R_UTF8_HEAD: the first body chunk's).
fn text(s: JsStr, flags: u32) -> Text {
    Text {
        s,
        utf8: flags & R_UTF8_HEAD != 0,
    }
}

/// Trailer lines (latin1, as node writes them).
fn trailers(t: Option<JsStr>) -> Option<Text> {
    t.map(|s| Text { s, utf8: false })
}

/// A command's answer for JS: a count, or -1 when the connection is gone or shut.
pub(super) fn count(n: Option<usize>) -> f64 {
    n.map_or(-1.0, |n| n as f64)
}

/// Buffer bodies from this size are offered to the kernel without a copy (write_direct).
const DIRECT_BODY: usize = 16 * 1024;

thread_local! {
    /// The buffer string bodies are encoded into, kept between responses.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Scratch buffers up to this capacity are kept for the next response.
const SCRATCH_KEEP: usize = 64 * 1024;

/// Queues `res` with `body` (a string encoded once, before the head that needs its length:
/// measuring its UTF-8 length first was a second scan of the string). A large Buffer body
/// is offered to the kernel straight from JS memory, head and framing around it.
fn queue(env: napi::Env, id: u64, seq: u32, life: u32, res: &Response<'_>, body: Option<Chunk>) {
    let how = Respond::from_bits(life);
    let body = if res.flags & R_NO_BODY != 0 {
        None
    } else {
        body
    };
    match body {
        None => {
            reactor::with(|r| r.respond(id, seq, how, res, &[]));
        }
        Some(Chunk::Bytes(bytes, value)) => {
            let direct = bytes.len() >= DIRECT_BODY && life & L_TENTATIVE == 0;
            let keep =
                || napi::JsRef::new(env, value).map(|k| Box::new(k) as Box<dyn std::any::Any>);
            let sent = direct
                && reactor::with(|r: &mut Reactor| {
                    // SAFETY: `bytes` is the backing store of the Buffer `value`; it is at
                    // least DIRECT_BODY bytes, so off the V8 heap and never moved, and `keep`
                    // holds a strong reference to that Buffer.
                    unsafe { r.respond_direct(id, seq, how.close, res, bytes, keep) }
                })
                .unwrap_or(false);
            if !sent {
                reactor::with(|r| r.respond(id, seq, how, res, bytes));
            }
        }
        Some(Chunk::Str(s)) => {
            let mut encoded = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
            s.utf8_into(&mut encoded);
            reactor::with(|r| r.respond(id, seq, how, res, &encoded));
            if encoded.capacity() <= SCRATCH_KEEP {
                encoded.clear();
                SCRATCH.with(|s| *s.borrow_mut() = encoded);
            }
        }
    }
}

/// `respond`: a whole response in one crossing (node's implicit writeHead + end): status
/// line, the app's header lines, node's automatic headers as the flags say, the body.
pub(super) fn respond(a: x::Respond) -> Value {
    let reason = a.reason.map(|s| text(s, a.flags));
    let lines = text(a.header_lines, a.flags);
    let trailers = trailers(a.trailers);
    let res = Response {
        head: Head::Parts {
            status: a.status as u16,
            reason: reason.as_ref().map(|r| r as &dyn Source),
            lines: &lines,
        },
        flags: a.flags,
        trailers: trailers.as_ref().map(|t| t as &dyn Source),
    };
    queue(a.env, a.id.0, a.seq, a.life, &res, a.body);
    napi::undefined(a.env)
}

/// `send`: a response whose head node already serialized (writeHead), plus its whole body.
pub(super) fn send(a: x::SendWithHead) -> Value {
    let head = text(a.head, a.flags);
    let trailers = trailers(a.trailers);
    let res = Response {
        head: Head::Text(&head),
        flags: a.flags,
        trailers: trailers.as_ref().map(|t| t as &dyn Source),
    };
    queue(a.env, a.id.0, a.seq, a.life, &res, a.body);
    napi::undefined(a.env)
}

/// `finish`: a response written through the socket is complete.
pub(super) fn finish(a: x::Finish) -> Value {
    reactor::with(|r| r.finish(a.id.0, a.seq, a.close));
    napi::undefined(a.env)
}
