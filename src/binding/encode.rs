//! The reactor's events as the declared callbacks' arguments (`crossings::cb`), encoded for
//! a batch: numbers into the array shared with JS, the rest as JS values.

use super::contract::values::{Id, Numbers, Text};
use super::contract::Encode;
use super::crossings::{cb, Addresses};
use super::napi::{Env, Value};
use crate::reactor::events::{Batch, Event};

/// Writes event `e` of `batch` to `nums` and `vals`.
pub fn event(env: Env, batch: &Batch, e: &Event, nums: &mut Numbers<'_>, vals: &mut Vec<Value>) {
    let b = |s| batch.bytes_of(s);
    match *e {
        Event::Connection { sid, id } => cb::Connection { sid, id: Id(id) }.encode(env, nums, vals),
        Event::Dropped { sid, local, peer } => cb::Dropped {
            sid,
            addresses: Addresses { local, peer },
        }
        .encode(env, nums, vals),
        Event::Request {
            sid,
            id,
            seq,
            method,
            url,
            headers,
            flags,
            body,
            head_end,
        } => cb::Request {
            sid,
            id: Id(id),
            seq,
            method: u32::from(method),
            url: Text(b(url)),
            header_block: Text(b(headers)),
            flags,
            body: body.map(b),
            head_end,
        }
        .encode(env, nums, vals),
        Event::Body { id, seq, chunk, at } => cb::Body {
            id: Id(id),
            seq,
            chunk: b(chunk),
            at,
        }
        .encode(env, nums, vals),
        Event::BodyEnd { id, seq, trailers } => cb::BodyEnd {
            id: Id(id),
            seq,
            trailer_block: trailers.map(|t| Text(b(t))),
        }
        .encode(env, nums, vals),
        Event::Upgrade { id, seq, head } => cb::Upgrade {
            id: Id(id),
            seq,
            head: head.map(b),
        }
        .encode(env, nums, vals),
        Event::Data { id, chunk } => cb::Data {
            id: Id(id),
            chunk: b(chunk),
        }
        .encode(env, nums, vals),
        Event::ClientError {
            sid,
            id,
            code,
            reason,
            packet,
            at,
        } => cb::ClientError {
            sid,
            id: Id(id),
            code,
            reason,
            raw_packet: packet.map(b),
            bytes_parsed: at,
        }
        .encode(env, nums, vals),
        Event::Drain { id } => cb::Drain { id: Id(id) }.encode(env, nums, vals),
        Event::Close { id, errno } => cb::Close { id: Id(id), errno }.encode(env, nums, vals),
        Event::Reset { sid, id, errno } => cb::Reset {
            sid,
            id: Id(id),
            errno,
        }
        .encode(env, nums, vals),
        Event::End { id } => cb::End { id: Id(id) }.encode(env, nums, vals),
        Event::Shutdown { id } => cb::Shutdown { id: Id(id) }.encode(env, nums, vals),
        Event::Timeout { id, sid } => cb::Timeout { id: Id(id), sid }.encode(env, nums, vals),
        Event::ServerDrained { sid } => cb::ServerDrained { sid }.encode(env, nums, vals),
        Event::InternalError { sid, ref message } => cb::InternalError {
            sid: sid.map_or(-1, |s| s as i32),
            message,
        }
        .encode(env, nums, vals),
    }
}
