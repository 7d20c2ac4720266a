//! What the reactor tells its embedder, as values: the events of a read (or of a timer, an
//! accept, a deferred close) gathered in a `Batch` and handed over in one delivery at each of
//! the read's boundaries (`Sink::deliver`). Bytes an event carries (a URL, a head, a body
//! piece) are copied into the batch, so an event never borrows the input it came from. The
//! reactor decides nothing about JS scheduling: the embedder runs each event now or from its
//! tick queue, and answers whether some wait there.

use std::net::SocketAddr;

/// Bytes of a batch (`Batch::bytes_of`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    start: u32,
    end: u32,
}

/// One event. `seq` is a request's number on its connection; `at` a position in the bytes
/// being parsed (node's `bytesParsed` / where its parser stopped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A connection JS wants to hear of ('connection').
    Connection {
        sid: u32,
        id: u64,
    },
    /// A connection closed at accept: the server is at maxConnections ('drop').
    Dropped {
        sid: u32,
        local: Option<SocketAddr>,
        peer: Option<SocketAddr>,
    },
    /// A request head. `head_end`: where the head ends in the bytes being parsed (where
    /// node's parser stops when the request's handler throws).
    Request {
        sid: u32,
        id: u64,
        seq: u32,
        method: u16,
        url: Span,
        headers: Span,
        flags: u32,
        body: Option<Span>,
        head_end: u32,
    },
    /// A piece of a body, ending at `at`.
    Body {
        id: u64,
        seq: u32,
        chunk: Span,
        at: u32,
    },
    BodyEnd {
        id: u64,
        seq: u32,
        trailers: Option<Span>,
    },
    /// Upgrade request `seq`, whose body went through the request, upgrades now: `head` is
    /// what followed its body in the read, or None when the body is still coming.
    Upgrade {
        id: u64,
        seq: u32,
        head: Option<Span>,
    },
    /// Bytes of an upgraded connection, or bytes an app listens for with 'data'.
    Data {
        id: u64,
        chunk: Span,
    },
    /// A parse error or a request timeout ('clientError'); `packet`: the bytes being parsed
    /// (node's `rawPacket`), None when the end of the input failed.
    ClientError {
        sid: u32,
        id: u64,
        code: &'static str,
        reason: &'static str,
        packet: Option<Span>,
        at: u32,
    },
    /// The output written after JS saw a full buffer is gone.
    Drain {
        id: u64,
    },
    Close {
        id: u64,
        errno: i32,
    },
    /// A connection JS holds nothing for failed (a reset before any request).
    Reset {
        sid: u32,
        id: u64,
        errno: i32,
    },
    /// The peer ended its side.
    End {
        id: u64,
    },
    /// FIN went out after JS ended the socket.
    Shutdown {
        id: u64,
    },
    Timeout {
        id: u64,
        sid: u32,
    },
    /// A closed server's last connection is gone.
    ServerDrained {
        sid: u32,
    },
    /// A bug: code of this crate panicked while serving `sid` (when known); the reactor
    /// closed what the panic concerned.
    InternalError {
        sid: Option<u32>,
        message: String,
    },
}

impl Event {
    /// The connection whose context the event runs in (None: a server's or the addon's).
    pub fn conn(&self) -> Option<u64> {
        match *self {
            Event::Connection { id, .. }
            | Event::Request { id, .. }
            | Event::Body { id, .. }
            | Event::BodyEnd { id, .. }
            | Event::Upgrade { id, .. }
            | Event::Data { id, .. }
            | Event::ClientError { id, .. }
            | Event::Drain { id }
            | Event::Close { id, .. }
            | Event::Reset { id, .. }
            | Event::End { id }
            | Event::Shutdown { id }
            | Event::Timeout { id, .. } => Some(id),
            Event::Dropped { .. } | Event::ServerDrained { .. } | Event::InternalError { .. } => {
                None
            }
        }
    }
}

/// Events to hand over together, with the bytes they carry.
#[derive(Debug, Default)]
pub struct Batch {
    pub events: Vec<Event>,
    bytes: Vec<u8>,
}

/// Batches keep this much byte room between deliveries; more is given back.
const KEEP_BYTES: usize = 64 * 1024;

impl Batch {
    /// Copies `b` into the batch.
    pub fn span(&mut self, b: &[u8]) -> Span {
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(b);
        Span {
            start,
            end: self.bytes.len() as u32,
        }
    }

    pub fn bytes_of(&self, s: Span) -> &[u8] {
        &self.bytes[s.start as usize..s.end as usize]
    }

    pub fn push(&mut self, e: Event) {
        self.events.push(e);
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Empties the batch (after a delivery), keeping its memory unless it grew large.
    pub fn clear(&mut self) {
        self.events.clear();
        if self.bytes.capacity() > KEEP_BYTES {
            self.bytes = Vec::new();
        } else {
            self.bytes.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_give_back_the_bytes_copied() {
        let mut b = Batch::default();
        let url = b.span(b"/a");
        let head = b.span(b"Host: x\r\n");
        let empty = b.span(b"");
        b.push(Event::Data { id: 1, chunk: url });
        assert_eq!(b.bytes_of(url), b"/a");
        assert_eq!(b.bytes_of(head), b"Host: x\r\n");
        assert_eq!(b.bytes_of(empty), b"");
        assert_eq!(b.events[0].conn(), Some(1));
        b.clear();
        assert!(b.is_empty());
        assert_eq!(b.span(b"z"), Span { start: 0, end: 1 });
    }
}
