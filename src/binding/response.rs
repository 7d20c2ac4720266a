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

/// Where a response's head comes from: the status and the app's header lines (node's
/// automatic headers added as the flags say), or node's own head text (writeHead).
enum HeadFrom {
    Parts {
        status: u16,
        reason: Option<JsStr>,
        lines: JsStr,
    },
    Text(JsStr),
}

/// One ended response: its head, body and trailers, queued on connection `id`.
struct Ended<'a> {
    id: u64,
    seq: u32,
    head: HeadFrom,
    body: Option<Chunk<'a>>,
    flags: u32,
    trailers: Option<JsStr>,
    life: u32,
}

fn queue_ended(env: napi::Env, e: Ended<'_>) {
    let trailers = trailers(e.trailers);
    let trailers = trailers.as_ref().map(|t| t as &dyn Source);
    match e.head {
        HeadFrom::Parts {
            status,
            reason,
            lines,
        } => {
            let reason = reason.map(|s| text(s, e.flags));
            let lines = text(lines, e.flags);
            let res = Response {
                head: Head::Parts {
                    status,
                    reason: reason.as_ref().map(|r| r as &dyn Source),
                    lines: &lines,
                },
                flags: e.flags,
                trailers,
            };
            queue(env, e.id, e.seq, e.life, &res, e.body);
        }
        HeadFrom::Text(head) => {
            let head = text(head, e.flags);
            let res = Response {
                head: Head::Text(&head),
                flags: e.flags,
                trailers,
            };
            queue(env, e.id, e.seq, e.life, &res, e.body);
        }
    }
}

/// `respond`: a whole response in one crossing (node's implicit writeHead + end): status
/// line, the app's header lines, node's automatic headers as the flags say, the body.
pub(super) fn respond(a: x::Respond) -> Value {
    let head = HeadFrom::Parts {
        status: a.status as u16,
        reason: a.reason,
        lines: a.header_lines,
    };
    let e = Ended {
        id: a.id.0,
        seq: a.seq,
        head,
        body: a.body,
        flags: a.flags,
        trailers: a.trailers,
        life: a.life,
    };
    queue_ended(a.env, e);
    napi::undefined(a.env)
}

/// `send`: a response whose head node already serialized (writeHead), plus its whole body.
pub(super) fn send(a: x::SendWithHead) -> Value {
    let e = Ended {
        id: a.id.0,
        seq: a.seq,
        head: HeadFrom::Text(a.head),
        body: a.body,
        flags: a.flags,
        trailers: a.trailers,
        life: a.life,
    };
    queue_ended(a.env, e);
    napi::undefined(a.env)
}

/// The values one queued response passes to `respond_batch`.
const BATCH_VALUES: usize = 4;

/// `respond_batch`: the responses JS queued during a batch, each as `respond` or `send`
/// would have taken it. A response whose values do not fit throws, as `respond` would, with
/// the ones before it queued.
pub(super) fn respond_batch(a: x::RespondBatch) -> Value {
    let Some(numbers) = super::contexts::responses() else {
        return napi::undefined(a.env);
    };
    let start = x::RESPONSES_START as usize;
    let each = x::RESPONSE_NUMBERS as usize;
    for (i, v) in a.values.0.chunks(BATCH_VALUES).enumerate() {
        let at = start + (a.first as usize + i) * each;
        let Some(n) = numbers.get(at..at + each) else {
            // More responses than the array has numbers for: refused, never dropped unseen.
            let msg = format!(
                "response {} is past the responses array",
                a.first as usize + i
            );
            return super::contract::refuse(a.env, "respond_batch", &msg);
        };
        let [id, seq, status, flags, life] = [n[0], n[1], n[2], n[3], n[4]];
        match ended(a.env, v, id, seq, status, flags as u32, life as u32) {
            Ok(e) => queue_ended(a.env, e),
            Err(msg) => return super::contract::refuse(a.env, "respond_batch", &msg),
        }
    }
    napi::undefined(a.env)
}

/// A queued response from its numbers and its values ([reason, lines or head, body,
/// trailers]).
fn ended<'a>(
    env: napi::Env,
    v: &[Value],
    id: f64,
    seq: f64,
    status: f64,
    flags: u32,
    life: u32,
) -> Result<Ended<'a>, String> {
    use super::contract::FromJs;
    let get = |i: usize| v.get(i).copied();
    let field = |name: &'static str| move |m: super::contract::Misfit| m.message(name);
    let text = JsStr::from_js(env, get(1)).map_err(field("headerLines"))?;
    let head = if status == x::SENT_HEAD as f64 {
        HeadFrom::Text(text)
    } else {
        HeadFrom::Parts {
            status: status as u16,
            reason: Option::<JsStr>::from_js(env, get(0)).map_err(field("reason"))?,
            lines: text,
        }
    };
    Ok(Ended {
        id: id as u64,
        seq: seq as u32,
        head,
        body: Option::<Chunk>::from_js(env, get(2)).map_err(field("body"))?,
        flags,
        trailers: Option::<JsStr>::from_js(env, get(3)).map_err(field("trailers"))?,
        life,
    })
}

/// `finish`: a response written through the socket is complete.
pub(super) fn finish(a: x::Finish) -> Value {
    reactor::with(|r| r.finish(a.id.0, a.seq, a.close));
    napi::undefined(a.env)
}
