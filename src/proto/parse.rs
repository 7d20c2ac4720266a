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

use super::chars::{self, FRAGMENT, PATH, QUERY, SERVER, TOKEN};
use super::errors::{self, ParseError};

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

/// The limits of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// node's maxHeaderSize: the URL plus every field name and value (from its first non-blank
    /// byte) must stay below it, per head and per trailer section.
    pub max_header_size: usize,
    /// Header fields allowed per head and per trailer section.
    pub max_header_fields: usize,
    /// insecureHTTPParser: header values may hold any byte but CR, LF and NUL.
    pub lenient: bool,
}

impl Limits {
    pub fn new(max_header_size: usize, lenient: bool) -> Self {
        Limits {
            max_header_size,
            max_header_fields: DEFAULT_MAX_HEADER_FIELDS,
            lenient,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::new(16 * 1024, false)
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

/// Methods llhttp knows besides node's http.METHODS (RTSP, ICE, HTTP/2's preface). llhttp
/// reads them as methods, then rejects them for HTTP/x.x.
const LLHTTP_OTHER_METHODS: [&[u8]; 13] = [
    b"DESCRIBE",
    b"ANNOUNCE",
    b"SETUP",
    b"PLAY",
    b"PAUSE",
    b"TEARDOWN",
    b"GET_PARAMETER",
    b"SET_PARAMETER",
    b"REDIRECT",
    b"RECORD",
    b"FLUSH",
    b"PRI",
    b"SOURCE",
];

/// llhttp METHODS_RTSP: the methods an `RTSP/x.x` request line may carry.
const RTSP_METHODS: [&[u8]; 14] = [
    b"OPTIONS",
    b"DESCRIBE",
    b"ANNOUNCE",
    b"SETUP",
    b"PLAY",
    b"PAUSE",
    b"TEARDOWN",
    b"GET_PARAMETER",
    b"SET_PARAMETER",
    b"REDIRECT",
    b"RECORD",
    b"FLUSH",
    b"GET",
    b"POST",
];

const P_HTTP: u8 = 1;
const P_RTSP: u8 = 2;
const P_ICE: u8 = 4;

#[derive(Debug, Clone)]
struct MethodName {
    name: Vec<u8>,
    /// Index in node's table, if node knows the method.
    index: Option<u16>,
    /// Protocols (P_*) the method may be used with.
    protocols: u8,
}

/// Looks up request methods by name. Built from the method list of the running Node
/// (`http.METHODS`), so the accepted set follows the Node version.
#[derive(Debug, Default, Clone)]
pub struct Methods {
    /// Node's methods first (by index), then llhttp's others.
    all: Vec<MethodName>,
    /// Indexes into `all` by name length (the lookup of every request).
    by_len: Vec<Vec<usize>>,
    connect: Option<u16>,
    pri: Option<usize>,
}

impl Methods {
    pub fn new<I: IntoIterator<Item = Vec<u8>>>(names: I) -> Self {
        let mut all: Vec<MethodName> = names
            .into_iter()
            .enumerate()
            .map(|(i, name)| MethodName {
                index: u16::try_from(i).ok(),
                protocols: P_HTTP,
                name,
            })
            .collect();
        for other in LLHTTP_OTHER_METHODS {
            if !all.iter().any(|m| m.name == other) {
                all.push(MethodName {
                    name: other.to_vec(),
                    index: None,
                    protocols: 0,
                });
            }
        }
        for m in &mut all {
            if RTSP_METHODS.contains(&m.name.as_slice()) {
                m.protocols |= P_RTSP;
            }
            match m.name.as_slice() {
                b"SOURCE" => m.protocols |= P_ICE,
                b"PRI" => m.protocols |= P_HTTP,
                _ => {}
            }
        }
        let connect = all
            .iter()
            .find(|m| m.name == b"CONNECT")
            .and_then(|m| m.index);
        let pri = all.iter().position(|m| m.name == b"PRI");
        let mut by_len: Vec<Vec<usize>> = Vec::new();
        for (i, m) in all.iter().enumerate() {
            if by_len.len() <= m.name.len() {
                by_len.resize(m.name.len() + 1, Vec::new());
            }
            by_len[m.name.len()].push(i);
        }
        Methods {
            all,
            by_len,
            connect,
            pri,
        }
    }

    fn exact(&self, m: &[u8]) -> Option<usize> {
        self.by_len
            .get(m.len())?
            .iter()
            .copied()
            .find(|&i| self.all[i].name == m)
    }

    /// Matches a method at the start of `b` the way llhttp's method trie does: bytes are
    /// taken while some method continues with them; then the bytes taken must be a whole
    /// method, followed by SP.
    fn matches(&self, b: &[u8]) -> MethodMatch {
        // Fast path: a known method followed by SP.
        if let Some(sp) = b.iter().take(16).position(|&c| c == b' ') {
            if let Some(i) = self.exact(&b[..sp]) {
                return MethodMatch::Found(i, sp);
            }
        }
        let mut k = 0;
        loop {
            let Some(&c) = b.get(k) else {
                return MethodMatch::NeedMore;
            };
            let continues = self
                .all
                .iter()
                .any(|n| n.name.len() > k && n.name[..k] == b[..k] && n.name[k] == c);
            if continues {
                k += 1;
                continue;
            }
            return match self.exact(&b[..k]) {
                Some(i) if k > 0 => MethodMatch::Found(i, k),
                _ => MethodMatch::Invalid(k),
            };
        }
    }
}

enum MethodMatch {
    NeedMore,
    /// The method (index in `Methods::all`) and its length.
    Found(usize, usize),
    /// No method; the offset of the byte that does not fit.
    Invalid(usize),
}

// Facts of one message, as llhttp's `flags` (plus what node:http reads from the headers).
const M_CONN_KEEP_ALIVE: u16 = 1;
const M_CONN_CLOSE: u16 = 1 << 1;
const M_CONN_UPGRADE: u16 = 1 << 2;
const M_CHUNKED: u16 = 1 << 3;
const M_UPGRADE: u16 = 1 << 4;
const M_CONTENT_LENGTH: u16 = 1 << 5;
const M_TRANSFER_ENCODING: u16 = 1 << 6;
const M_HOST: u16 = 1 << 7;
const M_EXPECT: u16 = 1 << 8;
const M_EXPECT_CONTINUE: u16 = 1 << 9;

/// Header fields whose values the parser reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
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
    fn of(name: &[u8]) -> Special {
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
    fn llhttp(self) -> bool {
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
fn conn_flags(v: &[u8]) -> u16 {
    let mut flags = 0;
    for tok in v.split(|&b| b == b',') {
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

/// The machine reading a special field's value (llhttp's header_value_* states). A
/// Connection value is read as a general one: llhttp's connection states accept the same
/// bytes and fail at the same ones, so its tokens are read when the value is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vm {
    General,
    /// Content-Length: digits, then SP until the line ends.
    Length {
        n: u64,
        blank: bool,
    },
    /// Transfer-Encoding, matching "chunked" (byte `i` next).
    TeChunked(u8),
    /// "chunked" matched: SP may follow; CR makes the coding chunked, `,` fails.
    TeChunkedLast,
    /// Inside another coding.
    TeToken,
    /// Blanks after a `,`.
    TeTokenOws,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UrlSt {
    Start,
    Schema,
    /// After `scheme:`, `n` slashes seen.
    Slashes(u8),
    Server,
    Path,
    Query,
    Fragment,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// CR and LF before the method (llhttp `start`).
    Start,
    Method,
    /// Spaces after the method's mandatory one.
    SpacesBeforeUrl,
    Url(UrlSt),
    /// CR right after the request target: LF makes an HTTP/0.9 request line.
    UrlCr,
    /// The byte after the request target's SP (or after an HTTP/0.9 line's end): llhttp
    /// reads it in a URL state, where HTAB and FF fail as invalid URL characters. Then
    /// `next`.
    AfterUrl {
        http09: bool,
    },
    /// Spaces after the request target's mandatory one.
    SpacesBeforeProtocol,
    /// `HTTP`, `RTSP` or `ICE` (index in PROTOCOLS), `i` bytes matched, then `/`.
    Protocol {
        p: u8,
        i: u8,
    },
    Major,
    Dot,
    Minor,
    VersionEnd,
    VersionCr,
    /// After `PRI * HTTP/2.0`: the rest of the HTTP/2 preface (`i` bytes matched).
    Pri(u8),
    /// The first byte after the request line.
    HeadersStart,
    FieldStart,
    Name,
    /// Blanks before a value.
    DiscardWs,
    DiscardWsCr,
    /// CRLF before any value byte: the value is empty unless a fold follows.
    DiscardLws,
    Value,
    ValueCr,
    /// After a value's CRLF: SP or HTAB here is a fold.
    ValueLws,
    /// CR of the empty line that ends the section.
    EndCr,
    Done,
}

const PROTOCOLS: [(&[u8], u8, ParseError); 3] = [
    (b"HTTP", P_HTTP, errors::HTTP_METHOD),
    (b"RTSP", P_RTSP, errors::RTSP_METHOD),
    (b"ICE", P_ICE, errors::ICE_METHOD),
];

const H2_PREFACE_REST: &[u8] = b"\r\n\r\nSM\r\n\r\n";

/// Uncounted runs shorter than this stay in the buffer (one blank after a colon is the
/// common case; recording it would cost every header line).
const MIN_DROP: usize = 2;

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
            st: St::Start,
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
            st: St::FieldStart,
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

    fn skipping(&self) -> bool {
        matches!(
            self.st,
            St::Start | St::SpacesBeforeUrl | St::SpacesBeforeProtocol | St::DiscardWs
        )
    }

    /// Ends a run of skipped bytes at `pos`.
    fn end_skip(&mut self) {
        if self.pos - self.skip_start >= MIN_DROP {
            self.skips.push((self.skip_start, self.pos));
        }
    }

    /// Counts `n` bytes toward maxHeaderSize (node's TrackHeader: fails when the count
    /// reaches the limit). Counting as bytes are read, not when a token ends, keeps the
    /// outcome independent of how reads split.
    #[inline]
    fn count(&mut self, n: usize, limits: &Limits) -> Result<(), ParseError> {
        self.counted += n;
        if self.counted >= limits.max_header_size {
            return Err(errors::HEADER_OVERFLOW.at(self.pos));
        }
        Ok(())
    }

    fn err(&self, e: ParseError) -> ParseError {
        e.at(self.pos)
    }

    /// Runs the machine over `buf`. Ok(true): the head (or trailer section) is complete.
    fn run(&mut self, buf: &[u8], methods: &Methods, limits: &Limits) -> Result<bool, ParseError> {
        if self.pos > buf.len() {
            // Fewer bytes than the last call saw: not the contract, but what is there is
            // still a message start (compaction drops only skippable bytes), so read it anew.
            *self = if self.trailers {
                HeadParser::for_trailers()
            } else {
                HeadParser::default()
            };
        }
        loop {
            // States that read runs of bytes.
            match self.st {
                St::Url(u @ (UrlSt::Path | UrlSt::Query | UrlSt::Fragment | UrlSt::Server)) => {
                    let class = match u {
                        UrlSt::Path => PATH,
                        UrlSt::Query => QUERY,
                        UrlSt::Fragment => FRAGMENT,
                        _ => SERVER,
                    };
                    let n = chars::run(&buf[self.pos.min(buf.len())..], class);
                    self.pos += n;
                    self.count(n, limits)?;
                }
                St::Name => {
                    let n = chars::run(&buf[self.pos.min(buf.len())..], TOKEN);
                    self.pos += n;
                    self.count(n, limits)?;
                }
                St::Value if self.vm == Vm::General => {
                    let rest = &buf[self.pos.min(buf.len())..];
                    let n = if limits.lenient {
                        rest.iter()
                            .position(|&b| matches!(b, b'\r' | b'\n' | 0))
                            .unwrap_or(rest.len())
                    } else {
                        chars::value_run(rest)
                    };
                    self.pos += n;
                    self.count(n, limits)?;
                }
                // Runs of skipped bytes.
                St::Start | St::SpacesBeforeUrl | St::SpacesBeforeProtocol | St::DiscardWs => {
                    let rest = &buf[self.pos.min(buf.len())..];
                    self.pos += rest
                        .iter()
                        .position(|&b| match self.st {
                            St::Start => b != b'\r' && b != b'\n',
                            St::DiscardWs => b != b' ' && b != b'\t',
                            _ => b != b' ',
                        })
                        .unwrap_or(rest.len());
                }
                St::Done => return Ok(true),
                _ => {}
            }
            let Some(&b) = buf.get(self.pos) else {
                return Ok(false);
            };
            match self.st {
                St::Start => {
                    if b == b'\r' || b == b'\n' {
                        self.pos += 1;
                    } else {
                        self.end_skip();
                        self.mark = self.pos;
                        self.st = St::Method;
                    }
                }
                St::Method => match methods.matches(&buf[self.mark..]) {
                    MethodMatch::NeedMore => return Ok(false),
                    MethodMatch::Invalid(k) => {
                        return Err(errors::INVALID_METHOD.at(self.mark + k));
                    }
                    MethodMatch::Found(i, k) => {
                        self.method = i;
                        self.pos = self.mark + k;
                        match buf.get(self.pos) {
                            None => return Ok(false),
                            Some(b' ') => {
                                self.pos += 1;
                                self.skip_start = self.pos;
                                self.st = St::SpacesBeforeUrl;
                            }
                            Some(_) => return Err(self.err(errors::METHOD_SPACE)),
                        }
                    }
                },
                St::SpacesBeforeUrl => {
                    if b == b' ' {
                        self.pos += 1;
                    } else {
                        self.end_skip();
                        self.url.0 = self.pos;
                        let connect = methods.all.get(self.method).and_then(|m| m.index);
                        self.st = if connect.is_some() && connect == methods.connect {
                            St::Url(UrlSt::Server)
                        } else {
                            St::Url(UrlSt::Start)
                        };
                    }
                }
                St::Url(u) => self.url_byte(u, b, limits)?,
                St::UrlCr => {
                    if b != b'\n' {
                        return Err(self.err(errors::URL_CRLF));
                    }
                    self.pos += 1;
                    self.http09();
                }
                St::AfterUrl { http09 } => {
                    if b == b'\t' || b == 0x0c {
                        return Err(self.err(errors::INVALID_URL));
                    }
                    self.st = if http09 {
                        St::HeadersStart
                    } else {
                        St::SpacesBeforeProtocol
                    };
                }
                St::SpacesBeforeProtocol => {
                    if b == b' ' {
                        self.pos += 1;
                    } else {
                        self.end_skip();
                        self.st = St::Protocol { p: 0, i: 0 };
                    }
                }
                St::Protocol { p, i } => {
                    if i == 0 {
                        // The common request lines, whole.
                        let rest = &buf[self.pos..];
                        let v11 = rest.starts_with(b"HTTP/1.1\r\n");
                        if (v11 || rest.starts_with(b"HTTP/1.0\r\n"))
                            && Some(self.method) != methods.pri
                            && methods
                                .all
                                .get(self.method)
                                .is_some_and(|m| m.protocols & P_HTTP != 0)
                        {
                            self.major = 1;
                            self.minor = v11 as u8;
                            self.pos += 10;
                            self.headers_start = self.pos;
                            self.st = St::HeadersStart;
                            continue;
                        }
                        let Some(p) = PROTOCOLS.iter().position(|(w, _, _)| w[0] == b) else {
                            return Err(self.err(errors::INVALID_CONSTANT));
                        };
                        self.pos += 1;
                        self.st = St::Protocol { p: p as u8, i: 1 };
                        continue;
                    }
                    let (word, allowed, wrong_method) = PROTOCOLS[p as usize];
                    if (i as usize) < word.len() {
                        if b != word[i as usize] {
                            return Err(self.err(errors::INVALID_CONSTANT));
                        }
                        self.pos += 1;
                        self.st = St::Protocol { p, i: i + 1 };
                        if i as usize + 1 == word.len() {
                            let m = methods.all.get(self.method);
                            if m.is_none_or(|m| m.protocols & allowed == 0) {
                                return Err(self.err(wrong_method));
                            }
                            // An RTSP method node:http does not list (DESCRIBE, ...): llhttp
                            // accepts it with RTSP/x.x, but http.METHODS has no name for it.
                            if m.is_some_and(|m| m.index.is_none() && m.name != b"PRI") {
                                return Err(self.err(errors::INVALID_METHOD));
                            }
                        }
                        continue;
                    }
                    if b != b'/' {
                        return Err(self.err(errors::INVALID_CONSTANT));
                    }
                    self.pos += 1;
                    self.st = St::Major;
                }
                St::Major => {
                    if !b.is_ascii_digit() {
                        return Err(self.err(errors::MAJOR_VERSION));
                    }
                    self.major = b - b'0';
                    self.pos += 1;
                    self.st = St::Dot;
                }
                St::Dot => {
                    if b != b'.' {
                        return Err(self.err(errors::VERSION_DOT));
                    }
                    self.pos += 1;
                    self.st = St::Minor;
                }
                St::Minor => {
                    if !b.is_ascii_digit() {
                        return Err(self.err(errors::MINOR_VERSION));
                    }
                    self.minor = b - b'0';
                    if !matches!((self.major, self.minor), (0, 9) | (1, 0) | (1, 1) | (2, 0)) {
                        return Err(self.err(errors::INVALID_VERSION));
                    }
                    self.pos += 1;
                    self.st = if Some(self.method) == methods.pri {
                        St::Pri(0)
                    } else {
                        St::VersionEnd
                    };
                }
                St::VersionEnd => {
                    if b != b'\r' {
                        return Err(self.err(errors::VERSION_CRLF));
                    }
                    self.pos += 1;
                    self.st = St::VersionCr;
                }
                St::VersionCr => {
                    if b != b'\n' {
                        return Err(self.err(errors::VERSION_LF));
                    }
                    self.pos += 1;
                    self.headers_start = self.pos;
                    self.st = St::HeadersStart;
                }
                St::Pri(i) => {
                    if H2_PREFACE_REST.get(i as usize) != Some(&b) {
                        return Err(self.err(errors::H2_PREFACE));
                    }
                    self.pos += 1;
                    if i as usize + 1 == H2_PREFACE_REST.len() {
                        return Err(self.err(errors::H2_UPGRADE));
                    }
                    self.st = St::Pri(i + 1);
                }
                St::HeadersStart => {
                    if b == b' ' {
                        return Err(self.err(errors::UNEXPECTED_SPACE));
                    }
                    self.st = St::FieldStart;
                }
                St::FieldStart => match b {
                    b'\r' => {
                        self.pos += 1;
                        self.st = St::EndCr;
                    }
                    b'\n' => return Err(self.err(errors::HEADER_FIELD_CHAR)),
                    b':' => return Err(self.err(errors::INVALID_HEADER_TOKEN)),
                    _ => {
                        self.fields += 1;
                        if self.fields > limits.max_header_fields {
                            return Err(self.err(errors::HEADER_OVERFLOW));
                        }
                        if !self.whole_line(buf, limits) {
                            self.mark = self.pos;
                            self.st = St::Name;
                        }
                    }
                },
                St::Name => self.name_end(buf, b)?,
                St::DiscardWs => match b {
                    b' ' | b'\t' => self.pos += 1,
                    b'\r' => {
                        self.pos += 1;
                        self.st = St::DiscardWsCr;
                    }
                    b'\n' => return Err(self.err(errors::INVALID_HEADER_VALUE)),
                    _ => {
                        self.end_skip();
                        self.value_start()?;
                    }
                },
                St::DiscardWsCr => {
                    if b != b'\n' {
                        return Err(self.err(errors::VALUE_CR_LF));
                    }
                    self.pos += 1;
                    self.st = St::DiscardLws;
                }
                St::DiscardLws => {
                    if b == b' ' || b == b'\t' {
                        return Err(self.err(errors::INVALID_HEADER_VALUE));
                    }
                    // An empty value.
                    match self.special {
                        Special::ContentLength => {
                            return Err(self.err(errors::EMPTY_CONTENT_LENGTH));
                        }
                        // llhttp 9.4 (node 24) rejects an empty Transfer-Encoding; 9.3
                        // (node 20) ignores it. The stricter answer serves both.
                        Special::TransferEncoding => return Err(self.err(errors::EMPTY_TE)),
                        Special::Expect => self.flags |= M_EXPECT,
                        Special::Host => self.flags |= M_HOST,
                        _ => {}
                    }
                    self.st = St::FieldStart;
                }
                St::Value => self.value_byte(b, limits)?,
                St::ValueCr => {
                    if b != b'\n' {
                        return Err(self.err(errors::LF_EXPECTED));
                    }
                    self.pos += 1;
                    self.st = St::ValueLws;
                }
                St::ValueLws => {
                    if b == b' ' || b == b'\t' {
                        return Err(self.err(errors::HEADER_FOLD));
                    }
                    self.value_complete(buf);
                    self.st = St::FieldStart;
                }
                St::EndCr => {
                    if b != b'\n' {
                        return Err(self.err(errors::HEADERS_LF));
                    }
                    self.pos += 1;
                    self.st = St::Done;
                }
                St::Done => return Ok(true),
            }
        }
    }

    fn http09(&mut self) {
        self.major = 0;
        self.minor = 9;
        self.headers_start = self.pos;
        self.st = St::AfterUrl { http09: true };
    }

    /// One byte of the request target that ends a run (llhttp url.ts).
    fn url_byte(&mut self, u: UrlSt, b: u8, limits: &Limits) -> Result<(), ParseError> {
        // Tab and form feed fail anywhere in the target, with their own reason.
        if b == b'\t' || b == 0x0c {
            return Err(self.err(errors::INVALID_URL));
        }
        let next = match u {
            UrlSt::Start => match b {
                b'/' | b'*' => UrlSt::Path,
                _ if b.is_ascii_alphabetic() => UrlSt::Schema,
                b' ' | b'\r' | b'\n' => return Err(self.err(errors::INVALID_URL)),
                _ => return Err(self.err(errors::URL_START)),
            },
            UrlSt::Schema => match b {
                _ if b.is_ascii_alphabetic() => UrlSt::Schema,
                b':' => UrlSt::Slashes(0),
                b' ' | b'\r' | b'\n' => return Err(self.err(errors::INVALID_URL)),
                _ => return Err(self.err(errors::URL_SCHEMA)),
            },
            UrlSt::Slashes(n) => match b {
                b'/' if n == 1 => UrlSt::Server,
                b'/' => UrlSt::Slashes(1),
                // llhttp matches `//` as one token: only its first byte has the
                // whitespace check.
                b' ' | b'\r' | b'\n' if n == 0 => return Err(self.err(errors::INVALID_URL)),
                _ => return Err(self.err(errors::URL_SCHEMA)),
            },
            UrlSt::Server | UrlSt::Path | UrlSt::Query | UrlSt::Fragment => {
                match (u, b) {
                    (UrlSt::Server, b'/') => UrlSt::Path,
                    (UrlSt::Server | UrlSt::Path, b'?') => UrlSt::Query,
                    (UrlSt::Path | UrlSt::Query, b'#') => UrlSt::Fragment,
                    (_, b' ') => {
                        self.url.1 = self.pos;
                        self.pos += 1;
                        self.skip_start = self.pos;
                        self.st = St::AfterUrl { http09: false };
                        return Ok(());
                    }
                    (_, b'\r') => {
                        self.url.1 = self.pos;
                        self.pos += 1;
                        self.st = St::UrlCr;
                        return Ok(());
                    }
                    // A bare LF after the target: llhttp 9.3 and 9.4 take it as an
                    // HTTP/0.9 request line.
                    (_, b'\n') => {
                        self.url.1 = self.pos;
                        self.pos += 1;
                        self.http09();
                        return Ok(());
                    }
                    (UrlSt::Server, _) => return Err(self.err(errors::URL_SERVER)),
                    (UrlSt::Path, _) => return Err(self.err(errors::URL_PATH)),
                    (UrlSt::Query, _) => return Err(self.err(errors::URL_QUERY)),
                    _ => return Err(self.err(errors::URL_FRAGMENT)),
                }
            }
        };
        self.pos += 1;
        self.count(1, limits)?;
        self.st = St::Url(next);
        Ok(())
    }

    /// A whole `name: value CRLF` line of a field whose value needs no special machine,
    /// followed by a byte that is not a fold, taken in one go (the common case). Returns
    /// false, having changed nothing, for anything else: the state machine takes it.
    fn whole_line(&mut self, buf: &[u8], limits: &Limits) -> bool {
        let start = self.pos;
        let Some(line) = buf.get(start..) else {
            return false;
        };
        let n = chars::run(line, TOKEN);
        if n == 0 || line.get(n) != Some(&b':') {
            return false;
        }
        let special = Special::of(&line[..n]);
        match special {
            Special::TransferEncoding => return false,
            // Plain digits only; anything else, and the framing checks, the machine takes.
            Special::ContentLength
                if self.flags & (M_CONTENT_LENGTH | M_TRANSFER_ENCODING) != 0 =>
            {
                return false;
            }
            _ => {}
        }
        let v = n
            + 1
            + line[n + 1..]
                .iter()
                .position(|&b| b != b' ' && b != b'\t')
                .unwrap_or(line.len() - n - 1);
        let m = if limits.lenient {
            line[v..]
                .iter()
                .position(|&b| matches!(b, b'\r' | b'\n' | 0))
                .unwrap_or(line.len() - v)
        } else {
            chars::value_run(&line[v..])
        };
        let e = v + m;
        if m == 0
            || line.get(e) != Some(&b'\r')
            || line.get(e + 1) != Some(&b'\n')
            || !matches!(line.get(e + 2), Some(&b) if b != b' ' && b != b'\t')
            || self.counted + n + m >= limits.max_header_size
        {
            return false;
        }
        if special == Special::ContentLength {
            let digits = &line[v..e];
            if digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
                return false;
            }
            self.content_length = digits.iter().fold(0, |n, &d| n * 10 + (d - b'0') as u64);
            self.flags |= M_CONTENT_LENGTH;
        }
        self.counted += n + m;
        if v - (n + 1) >= MIN_DROP {
            self.skips.push((start + n + 1, start + v));
        }
        self.special = special;
        if special == Special::Upgrade {
            self.flags |= M_UPGRADE;
        }
        self.vm = Vm::General;
        self.mark = start + v;
        self.value_end = start + e;
        self.value_complete(buf);
        self.pos = start + e + 2;
        true
    }

    /// The byte after a field name's token run.
    fn name_end(&mut self, buf: &[u8], b: u8) -> Result<(), ParseError> {
        let name = &buf[self.mark..self.pos];
        match b {
            b':' if !name.is_empty() => {
                self.special = Special::of(name);
                // RFC 9112 §6.3: both framings in one message is an error; llhttp checks
                // when the second field's name ends.
                match self.special {
                    Special::TransferEncoding if self.flags & M_CONTENT_LENGTH != 0 => {
                        return Err(self.err(errors::TE_WITH_CL));
                    }
                    Special::ContentLength if self.flags & M_TRANSFER_ENCODING != 0 => {
                        return Err(self.err(errors::CL_WITH_TE));
                    }
                    _ => {}
                }
                self.pos += 1;
                self.skip_start = self.pos;
                self.st = St::DiscardWs;
                Ok(())
            }
            // No whitespace before the colon (RFC 9112 §5.1); llhttp words it by whether
            // the name is one it knows.
            b' ' if Special::of(name).llhttp() => Err(self.err(errors::HEADER_FIELD_CHAR)),
            _ => Err(self.err(errors::INVALID_HEADER_TOKEN)),
        }
    }

    /// The first value byte (llhttp header_value_start).
    fn value_start(&mut self) -> Result<(), ParseError> {
        self.mark = self.pos;
        self.vm = match self.special {
            Special::Upgrade => {
                self.flags |= M_UPGRADE;
                Vm::General
            }
            Special::TransferEncoding => {
                // Chunked must be the final coding, applied once (RFC 9112 §6.1): a
                // Transfer-Encoding field after one ending in chunked fails.
                if self.flags & M_CHUNKED != 0 {
                    return Err(self.err(errors::INVALID_TE_VALUE));
                }
                self.flags |= M_TRANSFER_ENCODING;
                Vm::TeChunked(0)
            }
            Special::ContentLength => {
                if self.flags & M_CONTENT_LENGTH != 0 {
                    return Err(self.err(errors::DUPLICATE_CONTENT_LENGTH));
                }
                Vm::Length { n: 0, blank: false }
            }
            _ => Vm::General,
        };
        self.st = St::Value;
        Ok(())
    }

    /// One value byte the general run stopped at, or any byte of a special value.
    fn value_byte(&mut self, b: u8, limits: &Limits) -> Result<(), ParseError> {
        let mut vm = self.vm;
        // A special machine may hand the byte on (llhttp's transitions without consuming).
        loop {
            let next = match vm {
                Vm::General => break,
                Vm::Length { n, blank } => match b {
                    b'0'..=b'9' if !blank => Vm::Length {
                        n: n.checked_mul(10)
                            .and_then(|n| n.checked_add((b - b'0') as u64))
                            .ok_or_else(|| self.err(errors::CONTENT_LENGTH_OVERFLOW))?,
                        blank,
                    },
                    // llhttp 9.3 (node 20) allows only SP after the digits, 9.4 (node 24)
                    // HTAB too; SP only serves both.
                    b' ' => Vm::Length { n, blank: true },
                    b'\r' | b'\n' => {
                        self.flags |= M_CONTENT_LENGTH;
                        self.content_length = n;
                        break;
                    }
                    _ => return Err(self.err(errors::INVALID_CONTENT_LENGTH)),
                },
                Vm::TeChunked(i) => {
                    if b.to_ascii_lowercase() == b"chunked"[i as usize] {
                        if i == 6 {
                            Vm::TeChunkedLast
                        } else {
                            Vm::TeChunked(i + 1)
                        }
                    } else {
                        vm = Vm::TeToken;
                        continue;
                    }
                }
                Vm::TeChunkedLast => match b {
                    b' ' => Vm::TeChunkedLast,
                    b'\r' | b'\n' => break,
                    b',' => return Err(self.err(errors::INVALID_TE_VALUE)),
                    _ => {
                        vm = Vm::TeToken;
                        continue;
                    }
                },
                Vm::TeToken => match b {
                    b',' => Vm::TeTokenOws,
                    _ if chars::is(b, chars::VALUE) => Vm::TeToken,
                    _ => {
                        vm = Vm::General;
                        break;
                    }
                },
                Vm::TeTokenOws => match b {
                    b' ' | b'\t' => Vm::TeTokenOws,
                    _ => {
                        vm = Vm::TeChunked(0);
                        continue;
                    }
                },
            };
            self.vm = next;
            self.pos += 1;
            return self.count(1, limits);
        }
        // `b` ends the value (or, in a general value, is not a value byte).
        self.vm = vm;
        match b {
            b'\r' => {
                self.value_end = self.pos;
                self.pos += 1;
                self.st = St::ValueCr;
                Ok(())
            }
            b'\n' => Err(self.err(errors::CR_EXPECTED)),
            _ => Err(self.err(errors::INVALID_HEADER_VALUE)),
        }
    }

    /// A value and its CRLF are complete and no fold follows (llhttp setHeaderFlags).
    fn value_complete(&mut self, buf: &[u8]) {
        match (self.special, self.vm) {
            (Special::TransferEncoding, Vm::TeChunkedLast) => self.flags |= M_CHUNKED,
            (Special::Connection, _) => {
                self.flags |= conn_flags(buf.get(self.mark..self.value_end).unwrap_or(&[]));
            }
            (Special::Expect, _) => {
                self.flags |= M_EXPECT;
                if expects_continue(buf.get(self.mark..self.value_end).unwrap_or(&[])) {
                    self.flags |= M_EXPECT_CONTINUE;
                }
            }
            (Special::Host, _) => self.flags |= M_HOST,
            _ => {}
        }
        self.vm = Vm::General;
    }

    /// The request head's facts, as llhttp and node:http's parserOnIncoming derive them.
    fn finish(&self, methods: &Methods) -> RequestHead {
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

/// node:http's `/(?:^|\W)100-continue(?:$|\W)/i` over one Expect value (node joins repeated
/// fields with ", ", which cannot create or break a match).
fn expects_continue(v: &[u8]) -> bool {
    const PAT: &[u8] = b"100-continue";
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    (0..v.len().saturating_sub(PAT.len() - 1)).any(|i| {
        v[i..i + PAT.len()].eq_ignore_ascii_case(PAT)
            && (i == 0 || !word(v[i - 1]))
            && v.get(i + PAT.len()).is_none_or(|&b| !word(b))
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn methods() -> Methods {
        Methods::new(
            [
                "ACL",
                "BIND",
                "CHECKOUT",
                "CONNECT",
                "COPY",
                "DELETE",
                "GET",
                "HEAD",
                "LINK",
                "LOCK",
                "M-SEARCH",
                "MERGE",
                "MKACTIVITY",
                "MKCALENDAR",
                "MKCOL",
                "MOVE",
                "NOTIFY",
                "OPTIONS",
                "PATCH",
                "POST",
                "PROPFIND",
                "PROPPATCH",
                "PURGE",
                "PUT",
                "QUERY",
                "REBIND",
                "REPORT",
                "SEARCH",
                "SOURCE",
                "SUBSCRIBE",
                "TRACE",
                "UNBIND",
                "UNLINK",
                "UNLOCK",
                "UNSUBSCRIBE",
            ]
            .iter()
            .map(|s| s.as_bytes().to_vec()),
        )
    }

    fn parse(b: &[u8]) -> Result<Option<RequestHead>, ParseError> {
        parse_request(b, &methods(), &Limits::default())
    }

    fn err(b: &[u8]) -> (&'static str, &'static str) {
        let e = parse(b).unwrap_err();
        (e.code, e.reason)
    }

    fn method_name(h: &RequestHead) -> &'static str {
        ["CONNECT", "GET", "POST", "OPTIONS", "SOURCE", "M-SEARCH"]
            .into_iter()
            .find(|m| methods().exact(m.as_bytes()).map(|i| i as u16) == Some(h.method))
            .unwrap_or("?")
    }

    #[test]
    fn simple_get() {
        let b = b"GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\nrest";
        let h = parse(b).unwrap().unwrap();
        assert_eq!(method_name(&h), "GET");
        assert_eq!(&b[h.url.0..h.url.1], b"/a?b=1");
        assert_eq!(&b[h.headers.0..h.headers.1], b"Host: x\r\n");
        assert_eq!(h.head_len, b.len() - 4);
        assert_eq!(h.framing, Framing::None);
        assert!(h.flags & F_KEEP_ALIVE != 0 && h.flags & F_HOST != 0);
        assert!(h.flags & F_BODY_DONE != 0);
    }

    #[test]
    fn partial_heads_need_more() {
        let full = b"POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\n";
        for n in 0..full.len() {
            assert_eq!(parse(&full[..n]), Ok(None), "prefix {n}");
        }
        let h = parse(full).unwrap().unwrap();
        assert_eq!(h.framing, Framing::Length(3));
    }

    #[test]
    fn keep_alive_follows_llhttp() {
        let ka = |b: &[u8]| parse(b).unwrap().unwrap().flags & F_KEEP_ALIVE != 0;
        assert!(!ka(b"GET / HTTP/1.0\r\n\r\n"));
        assert!(ka(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        // HTTP/1.0 persists with keep-alive even when close is there too.
        assert!(ka(
            b"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"
        ));
        assert!(!ka(b"GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n"));
        assert!(!ka(b"GET / HTTP/1.1\r\nProxy-Connection: close\r\n\r\n"));
        assert!(ka(b"GET / HTTP/1.1\r\nConnection: closex\r\n\r\n"));
        assert!(ka(b"GET /\r\nConnection: keep-alive\r\n\r\n"));
        assert!(!ka(b"GET / HTTP/2.0\r\n\r\n"));
    }

    #[test]
    fn upgrade_and_connect() {
        let h = parse(b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_ne!(h.flags & F_UPGRADE, 0);
        // llhttp sets its upgrade flag only for a non-empty Upgrade value.
        let h = parse(b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade:\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(h.flags & F_UPGRADE, 0);
        let b = b"CONNECT example.com:443 HTTP/1.1\r\n\r\n";
        let h = parse(b).unwrap().unwrap();
        assert_ne!(h.flags & F_CONNECT, 0);
        assert_eq!(&b[h.url.0..h.url.1], b"example.com:443");
    }

    #[test]
    fn framing() {
        assert_eq!(
            err(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n").0,
            "HPE_UNEXPECTED_CONTENT_LENGTH"
        );
        assert_eq!(
            err(b"POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n").0,
            "HPE_INVALID_CONTENT_LENGTH"
        );
        assert_eq!(
            err(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n").1,
            "Invalid `Transfer-Encoding` header value"
        );
        let f = |b: &[u8]| parse(b).unwrap().unwrap();
        assert_ne!(
            f(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n").flags & F_INVALID_TE,
            0
        );
        assert_ne!(
            f(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\t\r\n\r\n").flags & F_INVALID_TE,
            0
        );
        assert_eq!(
            f(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked  \r\n\r\n").framing,
            Framing::Chunked
        );
        assert_eq!(
            f(b"POST / HTTP/1.1\r\nContent-Length: 007 \r\n\r\n").framing,
            Framing::Length(7)
        );
        assert_eq!(
            f(b"POST / HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n").framing,
            Framing::Length(u64::MAX)
        );
        assert_eq!(
            err(b"POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n").1,
            "Content-Length overflow"
        );
    }

    #[test]
    fn request_line_errors() {
        assert_eq!(
            err(b"FOO / HTTP/1.1\r\n\r\n").1,
            "Invalid method encountered"
        );
        assert_eq!(
            err(b"GETX / HTTP/1.1\r\n\r\n").1,
            "Expected space after method"
        );
        assert_eq!(
            err(b"GET /\x01 HTTP/1.1\r\n\r\n").1,
            "Invalid char in url path"
        );
        assert_eq!(
            err(b"GET foo HTTP/1.1\r\n\r\n").1,
            "Invalid characters in url"
        );
        assert_eq!(err(b"GET / XTTP/1.1\r\n\r\n").0, "HPE_INVALID_CONSTANT");
        assert_eq!(err(b"GET / HTTP/1.9\r\n\r\n").0, "HPE_INVALID_VERSION");
        assert_eq!(
            err(b"GET / HTTP/1.1\nHost: x\r\n\r\n").0,
            "HPE_INVALID_VERSION"
        );
        assert_eq!(err(b"GET / HTTP/1.1\rHost: x\r\n\r\n").0, "HPE_STRICT");
        assert_eq!(
            err(b"DESCRIBE / HTTP/1.1\r\n\r\n").1,
            "Invalid method for HTTP/x.x request"
        );
        assert_eq!(
            err(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").0,
            "HPE_PAUSED_H2_UPGRADE"
        );
    }

    #[test]
    fn field_errors() {
        assert_eq!(
            err(b"GET / HTTP/1.1\r\n Host: x\r\n\r\n").0,
            "HPE_UNEXPECTED_SPACE"
        );
        assert_eq!(
            err(b"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n").0,
            "HPE_LF_EXPECTED"
        );
        assert_eq!(err(b"GET / HTTP/1.1\r\nHost: x\n\r\n").0, "HPE_CR_EXPECTED");
        assert_eq!(
            err(b"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n").1,
            "Invalid header token"
        );
        assert_eq!(
            err(b"GET / HTTP/1.1\r\nContent-Length : 1\r\n\r\n").1,
            "Invalid header field char"
        );
        assert_eq!(
            err(b"GET / HTTP/1.1\r\nA: \x01\r\n\r\n").1,
            "Invalid header value char"
        );
        assert_eq!(
            err(b"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n").1,
            "Unexpected whitespace after header value"
        );
        assert_eq!(
            err(b"GET / HTTP/1.1\r\nA:\r\n c\r\n\r\n").1,
            "Invalid header value char"
        );
        assert_eq!(
            err(b"GET / HTTP/1.1\r\nA: b\r\n\n").1,
            "Invalid header field char"
        );
    }

    #[test]
    fn header_overflow() {
        let mut b = b"GET / HTTP/1.1\r\nX: ".to_vec();
        b.extend(std::iter::repeat_n(b'a', 20_000));
        assert_eq!(parse(&b).unwrap_err().code, "HPE_HEADER_OVERFLOW");
    }

    #[test]
    fn header_size_counts_url_names_and_values() {
        // node's test-http-max-http-headers: "/" + "Host" + "localhost" + "Agent" + "nod3"
        // + "X-CRASH" + value; a total of max - 1 passes, max fails.
        let max = 16 * 1024;
        let head = |fill: usize| {
            let mut b = b"GET / HTTP/1.1\r\nHost: localhost\r\nAgent: nod3\r\nX-CRASH: ".to_vec();
            b.extend(std::iter::repeat_n(b'a', fill));
            b.extend_from_slice(b"\r\n\r\n");
            b
        };
        let base = 1 + 4 + 9 + 5 + 4 + 7;
        let limits = Limits::new(max, false);
        assert!(parse_request(&head(max - base - 1), &methods(), &limits)
            .unwrap()
            .is_some());
        assert_eq!(
            parse_request(&head(max - base), &methods(), &limits)
                .unwrap_err()
                .code,
            "HPE_HEADER_OVERFLOW"
        );
        // Without the end of the head yet, too; a CR at the end counts nothing.
        let partial = &head(max - base)[..];
        assert_eq!(
            parse_request(&partial[..partial.len() - 4], &methods(), &limits)
                .unwrap_err()
                .code,
            "HPE_HEADER_OVERFLOW"
        );
        let partial = &head(max - base - 1)[..];
        assert_eq!(
            parse_request(&partial[..partial.len() - 3], &methods(), &limits),
            Ok(None)
        );
    }

    #[test]
    fn blanks_before_values_are_not_counted() {
        let mut b = b"GET / HTTP/1.1\r\nX:".to_vec();
        b.extend(std::iter::repeat_n(b' ', 100_000));
        b.extend_from_slice(b"v\r\n\r\n");
        assert!(parse(&b).unwrap().is_some());
    }

    #[test]
    fn lenient_accepts_control_chars_in_values() {
        let b = b"GET / HTTP/1.1\r\nContent-Type: text/te\x08t\r\n\r\n";
        assert!(parse(b).is_err());
        assert!(parse_request(b, &methods(), &Limits::new(16 * 1024, true))
            .unwrap()
            .is_some());
    }

    #[test]
    fn invalid_method_position() {
        let e = parse(b"Oopsie-doopsie\r\n").unwrap_err();
        assert_eq!((e.code, e.at), ("HPE_INVALID_METHOD", 1));
    }

    #[test]
    fn many_headers() {
        let mut b = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..1000 {
            b.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        b.extend_from_slice(b"\r\n");
        assert!(parse(&b).unwrap().is_some());
        b.splice(16..16, b"Y: 1\r\n".iter().copied());
        assert_eq!(parse(&b).unwrap_err().code, "HPE_HEADER_OVERFLOW");
    }

    #[test]
    fn other_versions() {
        let h = parse(b"GET /\r\n\r\n").unwrap().unwrap();
        assert_eq!((h.major, h.minor), (0, 9));
        assert_eq!(h.flags & F_KEEP_ALIVE, 0);
        let h = parse(b"GET / HTTP/2.0\r\nHost: x\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!((h.major, h.minor), (2, 0));
        assert_eq!((h.flags >> VERSION_SHIFT) & 0xff, 2);
        let h = parse(b"GET / RTSP/1.0\r\n\r\n").unwrap().unwrap();
        assert_eq!((h.major, h.minor), (1, 0));
        let h = parse(b"SOURCE / ICE/1.0\r\n\r\n").unwrap().unwrap();
        assert_eq!(method_name(&h), "SOURCE");
    }

    #[test]
    fn leading_empty_lines_are_skipped() {
        let b = b"\r\n\n\rGET / HTTP/1.1\r\n\r\n";
        let h = parse(b).unwrap().unwrap();
        assert_eq!(&b[h.url.0..h.url.1], b"/");
        assert_eq!(h.head_len, b.len());
    }

    #[test]
    fn expect() {
        let f = |v: &str| {
            let b = format!("POST / HTTP/1.1\r\nExpect: {v}\r\n\r\n");
            parse(b.as_bytes()).unwrap().unwrap().flags & (F_EXPECT_CONTINUE | F_EXPECT_OTHER)
        };
        assert_eq!(f("100-continue"), F_EXPECT_CONTINUE);
        assert_eq!(f("100-Continue, foo"), F_EXPECT_CONTINUE);
        assert_eq!(f("foo,100-continue"), F_EXPECT_CONTINUE);
        assert_eq!(f("-100-continue;"), F_EXPECT_CONTINUE);
        assert_eq!(f("x100-continue"), F_EXPECT_OTHER);
        assert_eq!(f("100-continue_"), F_EXPECT_OTHER);
        assert_eq!(f(""), F_EXPECT_OTHER);
    }

    #[test]
    fn fewer_bytes_than_last_time_start_over() {
        let m = methods();
        let l = Limits::default();
        let mut p = HeadParser::default();
        assert_eq!(p.parse(b"GET /abc HTTP/1.1\r\nHo", &m, &l), Ok(None));
        let h = p.parse(b"GET / HTTP/1.1\r\n\r\n", &m, &l).unwrap().unwrap();
        assert_eq!(h.head_len, 18);
    }

    #[test]
    fn compact_drops_skipped_bytes() {
        let m = methods();
        let l = Limits::default();
        let mut p = HeadParser::default();
        let mut buf = bytes::BytesMut::from(&b"\r\n\r\nGET   /x   HTTP/1.1\r\nX-A:     "[..]);
        assert_eq!(p.parse(&buf, &m, &l), Ok(None));
        p.compact(&mut buf);
        assert_eq!(&buf[..], b"GET /x HTTP/1.1\r\nX-A:");
        buf.extend_from_slice(b"   v  \r\nHost:  h\r\n\r\n");
        let h = p.parse(&buf, &m, &l).unwrap().unwrap();
        assert_eq!(&buf[h.url.0..h.url.1], b"/x");
        assert_eq!(
            &buf[h.headers.0..h.headers.1],
            b"X-A:   v  \r\nHost:  h\r\n"
        );
        assert_eq!(h.head_len, buf.len());
    }
}
