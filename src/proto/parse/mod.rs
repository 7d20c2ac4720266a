//! Request heads, parsed the way llhttp (node's parser) parses them: the same bytes are
//! accepted, the same bytes are rejected, with llhttp's error codes and reasons.
//!
//! [`HeadParser`] is a state machine over the bytes of one head. It resumes where the previous
//! call stopped, so a head that arrives in pieces costs the same per byte as one that
//! arrives at once, and its state does not depend on where reads split. Bytes llhttp skips
//! without counting toward `maxHeaderSize` (empty lines before the request line, spaces
//! around the request target, blanks before a header value) are dropped from the caller's
//! buffer by [`HeadParser::compact`], so what stays buffered is bounded by what node counts.
//!
//! The same field machine parses the trailer section of a chunked body (decode.rs), as
//! llhttp parses trailers with its header states.

mod facts;
mod fields;
mod machine;
mod methods;
mod request_line;
#[cfg(test)]
mod tests;

use super::errors::{self, ParseError};
use facts::{Special, M_CHUNKED, M_CONN_CLOSE, M_CONN_KEEP_ALIVE, M_TRANSFER_ENCODING};
use fields::Vm;
use machine::{Field, Line, St};
pub use methods::Methods;

pub const F_HTTP11: u32 = 1;
pub const F_KEEP_ALIVE: u32 = 1 << 1;
pub const F_UPGRADE: u32 = 1 << 2;
pub const F_EXPECT_CONTINUE: u32 = 1 << 3;
pub const F_EXPECT_OTHER: u32 = 1 << 4;
pub const F_HAS_BODY: u32 = 1 << 5;
pub const F_BODY_DONE: u32 = 1 << 6;
pub const F_HOST: u32 = 1 << 7;
pub const F_CONNECT: u32 = 1 << 8;
pub const F_CHUNKED: u32 = 1 << 9;
pub const F_CONTENT_LENGTH: u32 = 1 << 10;
pub const F_CONN_CLOSE: u32 = 1 << 11;
pub const F_HTTP10: u32 = 1 << 12;
/// The transfer coding of a request is not chunked: llhttp emits the request, then fails.
pub const F_INVALID_TE: u32 = 1 << 13;
/// `Connection: keep-alive` was sent (llhttp F_CONNECTION_KEEP_ALIVE).
pub const F_CONN_KEEP_ALIVE: u32 = 1 << 14;
/// Bits 16..20 carry the major version, 20..24 the minor version.
pub const VERSION_SHIFT: u32 = 16;

/// Header fields node 24 accepts per head (and per trailer section): its parser fails with
/// HPE_HEADER_OVERFLOW past `maxHeadersCount` fields (default 2000 entries, 1000 fields).
pub const DEFAULT_MAX_HEADER_FIELDS: usize = 1000;

/// How far request parsing departs from llhttp's strict grammar. node picks llhttp's lenient
/// flags from the server's httpValidation (Node 24+), else its insecureHTTPParser, else the
/// --insecure-http-parser flag (lib/_http_common.js calculateLenientFlags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Leniency {
    /// No lenient flag (httpValidation 'strict', or nothing asked).
    #[default]
    Strict,
    /// httpValidation 'relaxed': llhttp's LENIENT_HEADER_VALUE_RELAXED alone. Header values
    /// (and trailer values) may hold any byte but NUL, CR and LF.
    Relaxed,
    /// httpValidation 'insecure', insecureHTTPParser or --insecure-http-parser: node sets
    /// every llhttp lenient flag. Of those, only the header-value part of LENIENT_HEADERS
    /// (without NUL: values as with `Relaxed`) and chunked before the final coding are taken.
    /// What the other flags let through (folds, bare CR or LF line ends, Content-Length with
    /// Transfer-Encoding, a request body read to EOF after a final coding other than chunked,
    /// other versions, bytes after a closing message, the chunk leniencies) stays an error:
    /// stricter than node, never looser.
    Insecure,
}

impl Leniency {
    /// Header values may hold control characters other than NUL, CR and LF.
    pub fn relaxed_values(self) -> bool {
        self != Leniency::Strict
    }

    /// llhttp's LENIENT_TRANSFER_ENCODING, in part: chunked may come before the final coding
    /// (`chunked, chunked`, or a second Transfer-Encoding field), the final one decides.
    pub fn lenient_te(self) -> bool {
        self == Leniency::Insecure
    }
}

/// The limits of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// node's maxHeaderSize: the URL plus every field name and value (from its first non-blank
    /// byte) must stay below it, per head and per trailer section.
    pub max_header_size: usize,
    /// Header fields allowed per head and per trailer section.
    pub max_header_fields: usize,
    pub leniency: Leniency,
}

impl Limits {
    pub fn new(max_header_size: usize, leniency: Leniency) -> Self {
        Limits {
            max_header_size,
            max_header_fields: DEFAULT_MAX_HEADER_FIELDS,
            leniency,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::new(16 * 1024, Leniency::Strict)
    }
}

/// How the body of a request is delimited (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    None,
    Length(u64),
    Chunked,
}

/// A parsed request head. All positions are offsets into the buffer given to
/// [`HeadParser::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    /// Index of the method in the method table given to [`Methods::new`].
    pub method: u16,
    pub url: (usize, usize),
    pub major: u8,
    pub minor: u8,
    /// The header lines, each ending with CRLF, without the final empty line.
    pub headers: (usize, usize),
    pub head_len: usize,
    pub flags: u32,
    pub framing: Framing,
}

/// The resumable parser of one request head (or, inside decode.rs, one trailer section).
#[derive(Debug, Clone)]
pub struct HeadParser {
    st: St,
    /// Next byte to read.
    pos: usize,
    /// Start of the token being read (method, protocol, field name, value).
    mark: usize,
    /// Start of the current run of skipped bytes.
    skip_start: usize,
    /// Runs of skipped bytes (start, end) that `compact` drops.
    skips: Vec<(usize, usize)>,
    /// Index in `Methods::all`.
    method: usize,
    url: (usize, usize),
    major: u8,
    minor: u8,
    headers_start: usize,
    special: Special,
    vm: Vm,
    /// Where the current value ends (its CR).
    value_end: usize,
    /// Message facts (M_*).
    flags: u16,
    content_length: u64,
    /// Bytes node counts toward maxHeaderSize so far.
    counted: usize,
    fields: usize,
    /// Parses a trailer section (see `for_trailers`).
    trailers: bool,
}

impl Default for HeadParser {
    fn default() -> Self {
        HeadParser {
            st: St::Line(Line::Start),
            pos: 0,
            mark: 0,
            skip_start: 0,
            skips: Vec::new(),
            method: 0,
            url: (0, 0),
            major: 0,
            minor: 0,
            headers_start: 0,
            special: Special::None,
            vm: Vm::General,
            value_end: 0,
            flags: 0,
            content_length: 0,
            counted: 0,
            fields: 0,
            trailers: false,
        }
    }
}

/// What a trailer section said, for decode.rs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TrailerEnd {
    /// Offset after the section's final CRLF.
    pub len: usize,
    pub conn_close: bool,
    pub conn_keep_alive: bool,
}

impl HeadParser {
    /// Parses the head at the start of `buf`, resuming where the previous call stopped.
    /// `buf` must begin where the previous call's `buf` began (after [`compact`]), extended
    /// by new bytes. `Ok(None)`: more bytes are needed. After `Ok(Some(_))` or an error the
    /// parser is reset for the next message.
    ///
    /// [`compact`]: HeadParser::compact
    pub fn parse(
        &mut self,
        buf: &[u8],
        methods: &Methods,
        limits: &Limits,
    ) -> Result<Option<RequestHead>, ParseError> {
        match self.run(buf, methods, limits) {
            Ok(true) => {
                let head = self.finish(methods);
                self.reset();
                Ok(Some(head))
            }
            Ok(false) => Ok(None),
            Err(e) => {
                self.reset();
                Err(e)
            }
        }
    }

    /// After `parse` returned `Ok(None)`, with `buf` holding the bytes that call saw (and
    /// possibly more after them): drops the bytes llhttp skips without counting and rebases
    /// the state on what remains. Costs O(bytes parsed since the last call).
    pub fn compact(&mut self, buf: &mut bytes::BytesMut) {
        let len = self.compact_slice(buf);
        buf.truncate(len);
    }

    /// Forgets any partial head.
    pub fn reset(&mut self) {
        let mut skips = std::mem::take(&mut self.skips);
        skips.clear();
        *self = HeadParser {
            skips,
            ..HeadParser::default()
        };
    }

    /// A parser for the trailer section of a chunked message (llhttp parses it with its
    /// header states, the message's flags still set).
    pub(crate) fn for_trailers() -> Self {
        HeadParser {
            st: St::Field(Field::LineStart),
            flags: M_CHUNKED | M_TRANSFER_ENCODING,
            trailers: true,
            ..HeadParser::default()
        }
    }

    /// Parses a trailer section at the start of `buf` (same contract as `parse`).
    pub(crate) fn parse_trailers(
        &mut self,
        buf: &[u8],
        limits: &Limits,
    ) -> Result<Option<TrailerEnd>, ParseError> {
        let methods = Methods::default();
        if !self.run(buf, &methods, limits)? {
            return Ok(None);
        }
        Ok(Some(TrailerEnd {
            len: self.pos,
            conn_close: self.flags & M_CONN_CLOSE != 0,
            conn_keep_alive: self.flags & M_CONN_KEEP_ALIVE != 0,
        }))
    }

    /// Drops skipped runs from `data`; returns its new length.
    pub(crate) fn compact_slice(&mut self, data: &mut [u8]) -> usize {
        let mut ranges = std::mem::take(&mut self.skips);
        if self.skipping() && self.pos > self.skip_start {
            ranges.push((self.skip_start, self.pos));
        }
        let len = data.len();
        if ranges.is_empty() || ranges.iter().any(|&(_, e)| e > len) {
            // Nothing to drop (or `data` is not what was parsed: keep it whole).
            ranges.clear();
            self.skips = ranges;
            return len;
        }
        let mut w = ranges[0].0;
        let mut r = ranges[0].1;
        for &(s, e) in &ranges[1..] {
            data.copy_within(r..s, w);
            w += s - r;
            r = e;
        }
        data.copy_within(r..len, w);
        w += len - r;
        let rebase = |o: usize| -> usize {
            let mut d = 0;
            for &(s, e) in &ranges {
                if e <= o {
                    d += e - s;
                } else if s < o {
                    d += o - s;
                }
            }
            o - d
        };
        self.pos = rebase(self.pos);
        self.mark = rebase(self.mark);
        self.skip_start = rebase(self.skip_start);
        self.url = (rebase(self.url.0), rebase(self.url.1));
        self.headers_start = rebase(self.headers_start);
        self.value_end = rebase(self.value_end);
        ranges.clear();
        self.skips = ranges;
        w
    }
}

/// Bytes after a message that does not keep the connection (llhttp's `closed` state): CR and
/// LF are skipped, anything else fails.
pub fn after_close(buf: &[u8]) -> Result<(), ParseError> {
    match buf.iter().position(|&b| b != b'\r' && b != b'\n') {
        Some(i) => Err(errors::DATA_AFTER_CLOSE.at(i)),
        None => Ok(()),
    }
}

/// Parses one request head from the start of `buf` in one call (tests and tools).
pub fn parse_request(
    buf: &[u8],
    methods: &Methods,
    limits: &Limits,
) -> Result<Option<RequestHead>, ParseError> {
    HeadParser::default().parse(buf, methods, limits)
}
