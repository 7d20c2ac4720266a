//! Per-connection state: input buffer, body decoder, and the output queue that keeps
//! pipelined responses in request order (RFC 9112 §9.3.2) while each response writes as
//! soon as it likes.

use crate::net::Stream;
use crate::proto::decode::Decoder;
use crate::proto::errors::ParseError;
use bytes::BytesMut;
use std::collections::VecDeque;

/// JS paused the request (`req.pause()`): stop reading the socket.
pub const C_READ_PAUSED: u32 = 1;
/// The peer sent FIN.
pub const C_PEER_EOF: u32 = 1 << 1;
/// The output buffer is being written and the socket wants WRITABLE.
pub const C_WAIT_WRITABLE: u32 = 1 << 2;
/// The connection is in the reactor's dirty list.
pub const C_DIRTY: u32 = 1 << 3;
/// JS holds a socket object for this connection: tell it about close, end, timeout.
pub const C_JS_WATCH: u32 = 1 << 4;
/// A write returned "buffer full" to JS: call onDrain when the buffer empties.
pub const C_WANT_DRAIN: u32 = 1 << 5;
/// The connection keeps the event loop alive (net.Socket#ref).
pub const C_REF: u32 = 1 << 6;
/// Stop parsing: too much output queued (node pauses the socket the same way).
pub const C_THROTTLED: u32 = 1 << 7;
/// `end()`: send FIN once the output is written.
pub const C_END_AFTER_FLUSH: u32 = 1 << 8;
/// FIN has been sent.
pub const C_WRITE_SHUT: u32 = 1 << 9;
/// Reading would block until the next readiness edge... unless paused while data was left:
/// then a resume must read again.
pub const C_READ_PENDING: u32 = 1 << 10;
/// No more requests are parsed (after `Connection: close`, a parse error, or end()).
pub const C_NO_MORE_REQUESTS: u32 = 1 << 11;
/// Bytes that arrive are dropped (no more requests will be served on this connection).
pub const C_DISCARD_INPUT: u32 = 1 << 12;
/// The idle timer is the keep-alive timer (set after the last response).
pub const C_KEEP_ALIVE_IDLE: u32 = 1 << 13;
/// Reads are delivered raw to JS (after 'upgrade' / 'connect').
pub const C_UPGRADED: u32 = 1 << 14;
/// The last request asked to close the connection (Connection: close, HTTP/1.0).
pub const C_CLOSE_REQUESTED: u32 = 1 << 16;
/// The connection currently counts in the reactor's loop references.
pub const C_HOLDS_REF: u32 = 1 << 17;
/// The app listens for 'data' on the socket while it speaks HTTP: raw bytes go to JS too.
pub const C_TAP: u32 = 1 << 18;

/// A response that is not yet allowed on the wire because an earlier one is unfinished.
#[derive(Debug)]
struct Later {
    seq: u32,
    bytes: Vec<u8>,
    done: bool,
    close: bool,
}

/// The rest of a large body the kernel did not take at once, written later from the memory
/// of the JS Buffer that holds it (node's writev keeps the Buffer the same way), then the
/// chunk framing that follows it. Goes out before `buf`.
pub struct Pinned {
    body: *const u8,
    len: usize,
    pos: usize,
    tail: Vec<u8>,
    tail_pos: usize,
    /// Keeps the Buffer (and so `body`) alive until the bytes are written or dropped.
    _keep: Box<dyn std::any::Any>,
}

impl Pinned {
    /// # Safety
    /// `body..body+len` must stay valid and unmoved for as long as `keep` lives (an
    /// off-heap Buffer backing store held by a strong reference).
    pub unsafe fn new(
        body: *const u8,
        len: usize,
        pos: usize,
        tail: Vec<u8>,
        keep: Box<dyn std::any::Any>,
    ) -> Pinned {
        Pinned {
            body,
            len,
            pos,
            tail,
            tail_pos: 0,
            _keep: keep,
        }
    }

    fn rest(&self) -> usize {
        self.len - self.pos + self.tail.len() - self.tail_pos
    }

    fn body_rest(&self) -> &[u8] {
        // SAFETY: Pinned::new's contract keeps body..body+len valid while self lives.
        unsafe { std::slice::from_raw_parts(self.body.add(self.pos), self.len - self.pos) }
    }
}

impl std::fmt::Debug for Pinned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pinned({} bytes left)", self.rest())
    }
}

/// Output in request order: the active response writes straight into `buf`; later ones wait
/// in `later` until every earlier response has finished.
#[derive(Debug, Default)]
pub struct OutQueue {
    /// Bytes that go out before `buf` (see Pinned).
    pub pinned: Option<Pinned>,
    pub buf: Vec<u8>,
    pub pos: usize,
    pub active: u32,
    /// The active response has put bytes on the wire (so an error can't get a 400 anymore).
    pub started: bool,
    /// A finished response asked for the connection to close after it.
    pub close_after: bool,
    /// Where bytes of responses that waited behind an earlier one begin, until the batch
    /// that released them ends: node writes such responses only on the earlier one's
    /// 'finish' (a tick later), so a destroy in the same batch must not send them.
    pub tentative: Option<usize>,
    later: VecDeque<Later>,
}

impl OutQueue {
    /// Where bytes of response `seq` go, or None if that response already finished (or the
    /// connection closes before it).
    pub fn target(&mut self, seq: u32) -> Option<&mut Vec<u8>> {
        if self.close_after || seq < self.active {
            return None;
        }
        if seq == self.active {
            self.started = true;
            return Some(&mut self.buf);
        }
        let i = match self.later.binary_search_by_key(&seq, |l| l.seq) {
            Ok(i) => i,
            Err(i) => {
                self.later.insert(
                    i,
                    Later {
                        seq,
                        bytes: Vec::new(),
                        done: false,
                        close: false,
                    },
                );
                i
            }
        };
        let l = &mut self.later[i];
        if l.done {
            None
        } else {
            Some(&mut l.bytes)
        }
    }

    /// Response `seq` is complete. Returns how many responses completed in order (0 when
    /// `seq` still waits behind an earlier one).
    pub fn finish(&mut self, seq: u32, close: bool) -> u32 {
        if self.close_after || seq < self.active {
            return 0;
        }
        if seq > self.active {
            let _ = self.target(seq);
            if let Ok(i) = self.later.binary_search_by_key(&seq, |l| l.seq) {
                self.later[i].done = true;
                self.later[i].close = close;
            }
            return 0;
        }
        let mut completed = 1;
        self.started = false;
        if close {
            self.close_after = true;
            self.later.clear();
            return completed;
        }
        self.active += 1;
        while let Some(front) = self.later.front() {
            if front.seq != self.active {
                break;
            }
            let l = self.later.pop_front().unwrap_or_else(|| unreachable!());
            if self.tentative.is_none() && !l.bytes.is_empty() {
                self.tentative = Some(self.buf.len());
            }
            self.buf.extend_from_slice(&l.bytes);
            if !l.done {
                self.started = !l.bytes.is_empty();
                break;
            }
            completed += 1;
            if l.close {
                self.close_after = true;
                self.later.clear();
                break;
            }
            self.active += 1;
        }
        completed
    }

    /// Bytes not yet accepted by the kernel, including responses waiting their turn.
    pub fn queued(&self) -> usize {
        self.pinned.as_ref().map_or(0, |p| p.rest()) + self.buf.len() - self.pos
            + self.later.iter().map(|l| l.bytes.len()).sum::<usize>()
    }

    /// The bytes of `buf` not yet written (pinned bytes go first: see `slices`).
    pub fn unsent(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Everything to write, in order, for one writev.
    pub fn slices(&self) -> [std::io::IoSlice<'_>; 3] {
        let (body, tail): (&[u8], &[u8]) = match &self.pinned {
            Some(p) => (p.body_rest(), &p.tail[p.tail_pos..]),
            None => (&[], &[]),
        };
        [
            std::io::IoSlice::new(body),
            std::io::IoSlice::new(tail),
            std::io::IoSlice::new(self.unsent()),
        ]
    }

    pub fn is_flushed(&self) -> bool {
        self.pinned.is_none() && self.pos >= self.buf.len()
    }

    /// `n` bytes of `slices()` were written.
    pub fn consume(&mut self, mut n: usize) {
        if let Some(p) = &mut self.pinned {
            let a = (p.len - p.pos).min(n);
            p.pos += a;
            n -= a;
            let b = (p.tail.len() - p.tail_pos).min(n);
            p.tail_pos += b;
            n -= b;
            if p.rest() > 0 {
                return;
            }
            self.pinned = None;
        }
        self.pos += n;
        if self.pos >= self.buf.len() {
            self.pos = 0;
            self.buf.clear();
            self.tentative = None;
        }
    }
}

pub struct Conn {
    pub gen: u32,
    pub server: u32,
    pub stream: Stream,
    /// Unparsed input (a partial head, chunk line, ...). Empty between requests.
    pub rbuf: BytesMut,
    /// The decoder of the request body being read, if any.
    pub body: Option<Decoder>,
    pub body_seq: u32,
    pub next_seq: u32,
    pub out: OutQueue,
    pub flags: u32,
    /// Requests dispatched whose responses have not finished.
    pub inflight: u32,
    /// Idle timeout (socket.setTimeout), ms; 0 = none.
    pub timeout_ms: u64,
    pub last_active: u64,
    /// Deadline of this connection's live timer-heap entry (0 = none).
    pub timer_at: u64,
    /// Loop time the current request started arriving (0 = between requests).
    pub req_start: u64,
    pub headers_done: bool,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub requests: u32,
    /// The parser failed: like llhttp, every later chunk fails again with the same error
    /// (a 'clientError' listener may keep the socket open).
    pub error: Option<ParseError>,
}

impl Conn {
    pub fn new(gen: u32, server: u32, stream: Stream, now: u64) -> Conn {
        Conn {
            gen,
            server,
            stream,
            rbuf: BytesMut::new(),
            body: None,
            body_seq: 0,
            next_seq: 0,
            out: OutQueue::default(),
            flags: C_REF | C_HOLDS_REF,
            inflight: 0,
            timeout_ms: 0,
            last_active: now,
            timer_at: 0,
            // Like node's parser, a new connection counts as a request starting now, so a
            // client that sends nothing meets headersTimeout.
            req_start: now.max(1),
            headers_done: false,
            bytes_read: 0,
            bytes_written: 0,
            requests: 0,
            error: None,
        }
    }

    pub fn has(&self, f: u32) -> bool {
        self.flags & f != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_responses_go_straight_out() {
        let mut q = OutQueue::default();
        q.target(0).unwrap().extend_from_slice(b"A");
        assert_eq!(q.finish(0, false), 1);
        q.target(1).unwrap().extend_from_slice(b"B");
        assert_eq!(q.finish(1, false), 1);
        assert_eq!(q.unsent(), b"AB");
    }

    #[test]
    fn later_responses_wait_for_earlier_ones() {
        let mut q = OutQueue::default();
        q.target(2).unwrap().extend_from_slice(b"C");
        assert_eq!(q.finish(2, false), 0);
        q.target(1).unwrap().extend_from_slice(b"B1");
        assert_eq!(q.unsent(), b"");
        q.target(0).unwrap().extend_from_slice(b"A");
        assert_eq!(q.unsent(), b"A");
        assert_eq!(q.finish(0, false), 1);
        // Response 1 is now active but unfinished: its early bytes move out, 2 still waits.
        assert_eq!(q.unsent(), b"AB1");
        q.target(1).unwrap().extend_from_slice(b"B2");
        assert_eq!(q.finish(1, false), 2);
        assert_eq!(q.unsent(), b"AB1B2C");
        assert_eq!(q.active, 3);
    }

    #[test]
    fn close_drops_later_responses() {
        let mut q = OutQueue::default();
        q.target(1).unwrap().extend_from_slice(b"B");
        q.finish(1, false);
        q.target(0).unwrap().extend_from_slice(b"A");
        q.finish(0, true);
        assert_eq!(q.unsent(), b"A");
        assert!(q.close_after);
        assert!(q.target(1).is_none());
    }

    #[test]
    fn pinned_bytes_go_before_the_buffer() {
        let body = b"BODY".to_vec();
        let mut q = OutQueue {
            // SAFETY: `body` outlives the queue's use of it (the queue is drained below).
            pinned: Some(unsafe {
                Pinned::new(body.as_ptr(), body.len(), 1, b"\r\n".to_vec(), Box::new(()))
            }),
            ..OutQueue::default()
        };
        q.target(1).unwrap().extend_from_slice(b"next");
        q.finish(0, false);
        assert!(!q.is_flushed());
        assert_eq!(q.queued(), 3 + 2 + 4);
        let all: Vec<u8> = q.slices().iter().flat_map(|s| s.to_vec()).collect();
        assert_eq!(all, b"ODY\r\nnext");
        q.consume(4);
        let all: Vec<u8> = q.slices().iter().flat_map(|s| s.to_vec()).collect();
        assert_eq!(all, b"\nnext");
        q.consume(3);
        assert!(q.pinned.is_none());
        assert_eq!(q.unsent(), b"xt");
        q.consume(2);
        assert!(q.is_flushed());
    }

    #[test]
    fn consume_tracks_what_is_left() {
        let mut q = OutQueue::default();
        q.target(0).unwrap().extend_from_slice(&vec![1u8; 100_000]);
        q.consume(50_000);
        assert_eq!(q.queued(), 50_000);
        q.consume(50_000);
        assert!(q.is_flushed());
        assert_eq!(q.pos, 0);
    }
}
