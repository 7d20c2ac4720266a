//! What a head says: the header fields whose values the parser reads, and the facts about
//! the request that llhttp and node:http's parserOnIncoming derive from them.

use super::{
    Framing, HeadParser, Methods, RequestHead, F_BODY_DONE, F_CHUNKED, F_CONNECT, F_CONN_CLOSE,
    F_CONN_KEEP_ALIVE, F_CONTENT_LENGTH, F_EXPECT_CONTINUE, F_EXPECT_OTHER, F_HAS_BODY, F_HOST,
    F_HTTP10, F_HTTP11, F_INVALID_TE, F_KEEP_ALIVE, F_UPGRADE, VERSION_SHIFT,
};
use crate::proto::chars::{self, VALUE};

// Facts of one message, as llhttp's `flags` (plus what node:http reads from the headers).
pub(super) const M_CONN_KEEP_ALIVE: u16 = 1;
pub(super) const M_CONN_CLOSE: u16 = 1 << 1;
pub(super) const M_CONN_UPGRADE: u16 = 1 << 2;
pub(super) const M_CHUNKED: u16 = 1 << 3;
pub(super) const M_UPGRADE: u16 = 1 << 4;
pub(super) const M_CONTENT_LENGTH: u16 = 1 << 5;
pub(super) const M_TRANSFER_ENCODING: u16 = 1 << 6;
pub(super) const M_HOST: u16 = 1 << 7;
pub(super) const M_EXPECT: u16 = 1 << 8;
pub(super) const M_EXPECT_CONTINUE: u16 = 1 << 9;

/// Header fields whose values the parser reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Special {
    None,
    /// `Connection` or `Proxy-Connection` (llhttp treats both alike).
    Connection,
    ContentLength,
    TransferEncoding,
    Upgrade,
    Expect,
    Host,
}

impl Special {
    pub(super) fn of(name: &[u8]) -> Special {
        let is = |s: &[u8]| name.eq_ignore_ascii_case(s);
        match name.len() {
            4 if is(b"host") => Special::Host,
            6 if is(b"expect") => Special::Expect,
            7 if is(b"upgrade") => Special::Upgrade,
            10 if is(b"connection") => Special::Connection,
            14 if is(b"content-length") => Special::ContentLength,
            16 if is(b"proxy-connection") => Special::Connection,
            17 if is(b"transfer-encoding") => Special::TransferEncoding,
            _ => Special::None,
        }
    }

    /// The fields llhttp recognizes by name (its SPECIAL_HEADERS).
    pub(super) fn llhttp(self) -> bool {
        matches!(
            self,
            Special::Connection
                | Special::ContentLength
                | Special::TransferEncoding
                | Special::Upgrade
        )
    }
}

/// The Connection tokens llhttp acts on in one value (its header_value_connection states:
/// comma-separated, blanks around a token ignored, case-insensitive).
pub(super) fn conn_flags(v: &[u8]) -> u16 {
    let mut flags = 0;
    for tok in v.split(|&b| b == b',') {
        // A control character (in a value a lenient parser let through) sends llhttp from
        // its connection states to its general value states for the rest of the value: no
        // token from there on counts.
        if tok.iter().any(|&b| !chars::is(b, VALUE)) {
            break;
        }
        let start = tok.iter().position(|&b| b != b' ' && b != b'\t');
        let end = tok.iter().rposition(|&b| b != b' ' && b != b'\t');
        let (Some(s), Some(e)) = (start, end) else {
            continue;
        };
        let tok = &tok[s..=e];
        if tok.eq_ignore_ascii_case(b"close") {
            flags |= M_CONN_CLOSE;
        } else if tok.eq_ignore_ascii_case(b"keep-alive") {
            flags |= M_CONN_KEEP_ALIVE;
        } else if tok.eq_ignore_ascii_case(b"upgrade") {
            flags |= M_CONN_UPGRADE;
        }
    }
    flags
}

/// node:http's `/(?:^|\W)100-continue(?:$|\W)/i` over one Expect value (node joins repeated
/// fields with ", ", which cannot create or break a match).
pub(super) fn expects_continue(v: &[u8]) -> bool {
    const PAT: &[u8] = b"100-continue";
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    (0..v.len().saturating_sub(PAT.len() - 1)).any(|i| {
        v[i..i + PAT.len()].eq_ignore_ascii_case(PAT)
            && (i == 0 || !word(v[i - 1]))
            && v.get(i + PAT.len()).is_none_or(|&b| !word(b))
    })
}

impl HeadParser {
    /// The request head's facts, as llhttp and node:http's parserOnIncoming derive them.
    pub(super) fn finish(&self, methods: &Methods) -> RequestHead {
        let (major, minor) = (self.major, self.minor);
        let f = self.flags;
        let mut flags = if (major, minor) == (1, 1) {
            F_HTTP11
        } else {
            F_HTTP10
        };
        flags |= ((major as u32) << VERSION_SHIFT) | ((minor as u32) << (VERSION_SHIFT + 4));
        // llhttp_should_keep_alive: HTTP/1.1 (and later minors) persist unless closed;
        // HTTP/1.0, 2.0 and 0.9 only with `Connection: keep-alive`.
        let keep_alive = if major > 0 && minor > 0 {
            f & M_CONN_CLOSE == 0
        } else {
            f & M_CONN_KEEP_ALIVE != 0
        };
        if keep_alive {
            flags |= F_KEEP_ALIVE;
        }
        if f & M_CONN_CLOSE != 0 {
            flags |= F_CONN_CLOSE;
        }
        if f & M_CONN_KEEP_ALIVE != 0 {
            flags |= F_CONN_KEEP_ALIVE;
        }
        let index = methods.all.get(self.method).and_then(|m| m.index);
        let connect = index.is_some() && index == methods.connect;
        // llhttp__before_headers_complete.
        let upgrade = connect || (f & M_UPGRADE != 0 && f & M_CONN_UPGRADE != 0);
        if connect {
            flags |= F_CONNECT | F_UPGRADE;
        } else if upgrade {
            flags |= F_UPGRADE;
        }
        if f & M_EXPECT_CONTINUE != 0 {
            flags |= F_EXPECT_CONTINUE;
        } else if f & M_EXPECT != 0 {
            flags |= F_EXPECT_OTHER;
        }
        if f & M_HOST != 0 {
            flags |= F_HOST;
        }
        // llhttp__after_headers_complete: an upgrade without a body (or CONNECT) stops
        // parsing before the framing is checked.
        let has_body = f & M_CHUNKED != 0 || self.content_length > 0;
        let framing = if upgrade && (connect || !has_body) {
            Framing::None
        } else if f & M_CHUNKED != 0 {
            flags |= F_HAS_BODY | F_CHUNKED;
            Framing::Chunked
        } else if f & M_TRANSFER_ENCODING != 0 {
            // RFC 9112 §6.3: a request coding other than chunked leaves the length unknown.
            flags |= F_HAS_BODY | F_INVALID_TE;
            Framing::Chunked
        } else if f & M_CONTENT_LENGTH != 0 {
            flags |= F_CONTENT_LENGTH;
            if self.content_length > 0 {
                flags |= F_HAS_BODY;
            }
            Framing::Length(self.content_length)
        } else {
            Framing::None
        };
        if flags & F_HAS_BODY == 0 {
            flags |= F_BODY_DONE;
        }
        RequestHead {
            method: index.unwrap_or(u16::MAX),
            url: self.url,
            major,
            minor,
            headers: (self.headers_start, self.pos - 2),
            head_len: self.pos,
            flags,
            framing,
        }
    }
}
