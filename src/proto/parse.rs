//! Request heads: the request line, the header block, and the few facts the server needs
//! (framing, keep-alive, upgrade, expect, host). Pure functions over byte slices.
//!
//! The request line is parsed here, byte by byte, so that errors carry llhttp's codes; header
//! lines go through httparse after a strict CRLF scan (llhttp 9 rejects bare LF, httparse
//! accepts it).

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
/// Bits 16..20 carry the major version, 20..24 the minor version.
pub const VERSION_SHIFT: u32 = 16;

/// How the body of a request is delimited (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    None,
    Length(u64),
    Chunked,
}

/// A parsed request head. All positions are offsets into the parsed buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    /// Index of the method in the method table given to [`parse_request`].
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

/// Methods llhttp knows besides node's http.METHODS (RTSP, ICE, HTTP/2's preface).
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

/// Looks up request methods by name. Built from the method list of the running Node
/// (`http.METHODS`), so the accepted set follows the Node version.
#[derive(Debug, Default, Clone)]
pub struct Methods {
    names: Vec<Vec<u8>>,
    connect: Option<u16>,
}

impl Methods {
    pub fn new<I: IntoIterator<Item = Vec<u8>>>(names: I) -> Self {
        let names: Vec<Vec<u8>> = names.into_iter().collect();
        let connect = names.iter().position(|n| n == b"CONNECT").map(|i| i as u16);
        Methods { names, connect }
    }

    fn find(&self, m: &[u8]) -> Option<u16> {
        self.names.iter().position(|n| n == m).map(|i| i as u16)
    }

    /// How many leading bytes of `m` some method starts with (llhttp's error position);
    /// llhttp matches RTSP and ICE methods too before rejecting them for HTTP.
    fn prefix_len(&self, m: &[u8]) -> usize {
        let common = |n: &[u8]| n.iter().zip(m).take_while(|(a, b)| a == b).count();
        let ours = self.names.iter().map(|n| common(n)).max().unwrap_or(0);
        let theirs = LLHTTP_OTHER_METHODS
            .iter()
            .map(|n| common(n))
            .max()
            .unwrap_or(0);
        ours.max(theirs)
    }

    /// Fails early when `m` cannot be the start of any method.
    fn check_prefix(&self, m: &[u8]) -> Result<(), ParseError> {
        let n = self.prefix_len(m);
        if n < m.len() {
            return Err(errors::INVALID_METHOD.at(n));
        }
        Ok(())
    }
}

const fn token_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        i += 1;
    }
    t
}

static TOKEN: [bool; 256] = token_table();

fn is_url_byte(b: u8) -> bool {
    // llhttp (strict) accepts visible ASCII in the request target; controls, space and
    // non-ASCII end or break it.
    (0x21..=0x7e).contains(&b)
}

/// Parses one request head from the start of `buf`.
///
/// Returns `Ok(None)` when more bytes are needed, `Err` with an llhttp-style error when the
/// bytes cannot be a valid request head. `max_head` bounds the head size (node's
/// `maxHeaderSize`, counted over the request line and header lines).
pub fn parse_request(
    buf: &[u8],
    methods: &Methods,
    max_head: usize,
    lenient: bool,
) -> Result<Option<RequestHead>, ParseError> {
    // llhttp skips empty lines between pipelined messages.
    let mut start = 0;
    while start + 1 < buf.len() && buf[start] == b'\r' && buf[start + 1] == b'\n' {
        start += 2;
    }
    let line = &buf[start..];

    // Method.
    let sp = match line.iter().position(|&b| !TOKEN[b as usize]) {
        Some(i) => i,
        None => {
            methods.check_prefix(line)?;
            return Ok(None);
        }
    };
    if sp == 0 || line[sp] != b' ' {
        methods.check_prefix(&line[..sp])?;
        return Err(errors::INVALID_METHOD.at(start + methods.prefix_len(&line[..sp])));
    }
    let method = methods
        .find(&line[..sp])
        .ok_or_else(|| errors::INVALID_METHOD.at(start + methods.prefix_len(&line[..sp])))?;

    // Request target.
    let url_start = sp + 1;
    let mut i = url_start;
    while i < line.len() && is_url_byte(line[i]) {
        i += 1;
    }
    if i == line.len() {
        return incomplete(i - url_start, max_head);
    }
    let url = (start + url_start, start + i);
    // node's TrackHeader counts the URL and every header name and value (not the method,
    // version, separators or line ends) and fails when the count reaches maxHeaderSize.
    let mut counted = i - url_start;
    if counted >= max_head {
        return Err(errors::HEADER_OVERFLOW);
    }
    let (major, minor, headers_start) = if line[i] == b'\r' && i > url_start {
        // `GET /` CRLF: an HTTP/0.9 request line, which llhttp accepts.
        match line.get(i + 1) {
            None => return Ok(None),
            Some(b'\n') => (0, 9, start + i + 2),
            Some(_) => return Err(errors::LF_EXPECTED),
        }
    } else {
        if i == url_start || line[i] != b' ' {
            let in_query = line[url_start..i].contains(&b'?');
            return Err(if i == url_start {
                ParseError::new("HPE_INVALID_URL", "Unexpected start char in url")
            } else if in_query {
                ParseError::new("HPE_INVALID_URL", "Invalid char in url query")
            } else {
                ParseError::new("HPE_INVALID_URL", "Invalid char in url path")
            });
        }
        let (major, minor, end) = match parse_version(line, i + 1) {
            Err(e) if e == NEED_MORE => return Ok(None),
            r => r?,
        };
        (major, minor, start + end)
    };

    // A header line may not start with whitespace (llhttp: no obs-fold, RFC 9112 §5.2).
    if matches!(buf.get(headers_start), Some(b' ' | b'\t')) {
        return Err(errors::UNEXPECTED_SPACE);
    }
    // Header lines: every LF must follow a CR; the head ends at an empty line.
    let mut pos = headers_start;
    let head_end;
    loop {
        match memchr::memchr(b'\n', &buf[pos..]) {
            None => {
                counted += header_line_size(&buf[pos..]);
                return incomplete(counted, max_head);
            }
            Some(off) => {
                let lf = pos + off;
                if lf == pos || buf[lf - 1] != b'\r' {
                    return Err(errors::CR_EXPECTED);
                }
                if lf == pos + 1 {
                    head_end = lf + 1;
                    break;
                }
                counted += header_line_size(&buf[pos..lf - 1]);
                if counted >= max_head {
                    return Err(errors::HEADER_OVERFLOW);
                }
                pos = lf + 1;
            }
        }
    }
    let headers = (headers_start, head_end - 2);
    // A CR must be followed by LF.
    for cr in memchr::memchr_iter(b'\r', &buf[headers_start..head_end]).filter(|_| !lenient) {
        if buf.get(headers_start + cr + 1) != Some(&b'\n') {
            return Err(ParseError::new(
                "HPE_LF_EXPECTED",
                "Missing expected LF after header value",
            ));
        }
    }

    let http11 = major == 1 && minor == 1;
    let mut flags = if http11 { F_HTTP11 } else { F_HTTP10 };
    flags |= ((major as u32) << VERSION_SHIFT) | ((minor as u32) << (VERSION_SHIFT + 4));
    let mut facts = HeaderFacts::default();
    scan_headers(&buf[headers_start..head_end], &mut facts, lenient)?;

    let is_connect = methods.connect == Some(method);
    let framing = if facts.te_seen {
        if facts.cl.is_some() {
            return Err(if facts.te_after_cl {
                errors::TE_WITH_CL
            } else {
                errors::CL_WITH_TE
            });
        }
        // Chunked must be the last coding, and applied only once (RFC 9112 §6.1).
        if (facts.te_chunked_any && !facts.te_chunked_last) || facts.te_chunked_count > 1 {
            return Err(errors::INVALID_TE_VALUE);
        }
        flags |= F_HAS_BODY
            | if facts.te_chunked_last {
                F_CHUNKED
            } else {
                F_INVALID_TE
            };
        Framing::Chunked
    } else if let Some(n) = facts.cl {
        flags |= F_CONTENT_LENGTH;
        if n > 0 {
            flags |= F_HAS_BODY;
        }
        Framing::Length(n)
    } else {
        Framing::None
    };

    // llhttp_should_keep_alive: HTTP/1.1 and later minor versions persist by default.
    let keep_alive = if major > 0 && minor > 0 {
        !facts.conn_close
    } else if major == 0 {
        false
    } else {
        facts.conn_keep_alive && !facts.conn_close
    };
    if keep_alive {
        flags |= F_KEEP_ALIVE;
    }
    if facts.conn_close {
        flags |= F_CONN_CLOSE;
    }
    if is_connect {
        flags |= F_CONNECT | F_UPGRADE;
    } else if facts.conn_upgrade && facts.upgrade {
        flags |= F_UPGRADE;
    }
    if facts.expect_continue {
        flags |= F_EXPECT_CONTINUE;
    } else if facts.expect_other {
        flags |= F_EXPECT_OTHER;
    }
    if facts.host {
        flags |= F_HOST;
    }
    if flags & F_HAS_BODY == 0 {
        flags |= F_BODY_DONE;
    }
    Ok(Some(RequestHead {
        method,
        url,
        major,
        minor,
        headers,
        head_len: head_end,
        flags,
        framing,
    }))
}

/// `HTTP/` DIGIT `.` DIGIT CRLF at `v`; llhttp accepts 0.9, 1.0, 1.1 and 2.0. Returns the
/// version and the offset after the CRLF.
fn parse_version(line: &[u8], v: usize) -> Result<(u8, u8, usize), ParseError> {
    for (k, &want) in b"HTTP/".iter().enumerate() {
        match line.get(v + k) {
            None => return Err(NEED_MORE),
            Some(&b) if b != want => return Err(errors::INVALID_CONSTANT),
            _ => {}
        }
    }
    let at = |k: usize| line.get(v + k).copied();
    let Some(major) = at(5) else {
        return Err(NEED_MORE);
    };
    if !major.is_ascii_digit() {
        return Err(ParseError::new(
            "HPE_INVALID_VERSION",
            "Invalid major version",
        ));
    }
    let Some(dot) = at(6) else {
        return Err(NEED_MORE);
    };
    if dot != b'.' {
        return Err(ParseError::new("HPE_INVALID_VERSION", "Expected dot"));
    }
    let Some(minor) = at(7) else {
        return Err(NEED_MORE);
    };
    if !minor.is_ascii_digit() {
        return Err(ParseError::new(
            "HPE_INVALID_VERSION",
            "Invalid minor version",
        ));
    }
    let (major, minor) = (major - b'0', minor - b'0');
    if !matches!((major, minor), (0, 9) | (1, 0) | (1, 1) | (2, 0)) {
        return Err(errors::INVALID_VERSION);
    }
    let Some(cr) = at(8) else {
        return Err(NEED_MORE);
    };
    if cr != b'\r' {
        return Err(ParseError::new(
            "HPE_INVALID_VERSION",
            "Expected CRLF after version",
        ));
    }
    let Some(lf) = at(9) else {
        return Err(NEED_MORE);
    };
    if lf != b'\n' {
        return Err(errors::LF_EXPECTED);
    }
    Ok((major, minor, v + 10))
}

/// "Need more bytes" inside the version parser (mapped back to `Ok(None)`).
const NEED_MORE: ParseError = ParseError::new("", "");

/// Bytes of one header line node counts: the name and the value after leading whitespace.
fn header_line_size(line: &[u8]) -> usize {
    match memchr::memchr(b':', line) {
        Some(colon) => colon + trim_start(&line[colon + 1..]).len(),
        None => line.len(),
    }
}

fn trim_start(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    v
}

fn incomplete(counted: usize, max_head: usize) -> Result<Option<RequestHead>, ParseError> {
    if counted >= max_head {
        Err(errors::HEADER_OVERFLOW)
    } else {
        Ok(None)
    }
}

#[derive(Default, Debug)]
struct HeaderFacts {
    cl: Option<u64>,
    te_seen: bool,
    te_after_cl: bool,
    te_chunked_last: bool,
    te_chunked_any: bool,
    te_chunked_count: usize,
    conn_close: bool,
    conn_keep_alive: bool,
    conn_upgrade: bool,
    upgrade: bool,
    expect_continue: bool,
    expect_other: bool,
    host: bool,
}

/// Validates the header lines (`block` ends with the empty line) and records the facts the
/// server needs.
fn scan_headers(block: &[u8], facts: &mut HeaderFacts, lenient: bool) -> Result<(), ParseError> {
    if lenient {
        // --insecure-http-parser / insecureHTTPParser: llhttp's lenient mode accepts any
        // byte but CR, LF and NUL in values; names still need a colon.
        for line in block.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            let colon = memchr::memchr(b':', line).ok_or(errors::INVALID_HEADER_TOKEN)?;
            if colon == 0 || line[..colon].iter().any(|&b| !TOKEN[b as usize]) {
                return Err(errors::INVALID_HEADER_TOKEN);
            }
            if line[colon + 1..].contains(&0) {
                return Err(errors::INVALID_HEADER_VALUE);
            }
            header_fact(&line[..colon], trim(&line[colon + 1..]), facts)?;
        }
        return Ok(());
    }
    // Most requests carry a handful of headers; initializing room for 64 on every request
    // showed in profiles. More than 16 take the counted allocation below.
    let mut storage = [httparse::EMPTY_HEADER; 16];
    let mut heap: Vec<httparse::Header<'_>>;
    let headers: &[httparse::Header<'_>] = match httparse::parse_headers(block, &mut storage) {
        Ok(httparse::Status::Complete((_, h))) => h,
        Ok(httparse::Status::Partial) => return Err(errors::INVALID_HEADER_TOKEN),
        Err(httparse::Error::TooManyHeaders) => {
            let n = memchr::memchr_iter(b'\n', block).count();
            heap = vec![httparse::EMPTY_HEADER; n];
            match httparse::parse_headers(block, &mut heap) {
                Ok(httparse::Status::Complete((_, h))) => h,
                Ok(httparse::Status::Partial) => return Err(errors::INVALID_HEADER_TOKEN),
                Err(e) => return Err(map_httparse(e)),
            }
        }
        Err(e) => return Err(map_httparse(e)),
    };
    for h in headers {
        header_fact(h.name.as_bytes(), h.value, facts)?;
    }
    Ok(())
}

/// Records what one header says about framing, keep-alive, upgrade, expect and host. Only
/// names of those fields' lengths are compared.
fn header_fact(name: &[u8], value: &[u8], facts: &mut HeaderFacts) -> Result<(), ParseError> {
    match name.len() {
        4 if name.eq_ignore_ascii_case(b"host") => facts.host = true,
        6 if name.eq_ignore_ascii_case(b"expect") => {
            if trim(value).eq_ignore_ascii_case(b"100-continue") {
                facts.expect_continue = true;
            } else {
                facts.expect_other = true;
            }
        }
        7 if name.eq_ignore_ascii_case(b"upgrade") => facts.upgrade = true,
        10 if name.eq_ignore_ascii_case(b"connection") => {
            for tok in value.split(|&b| b == b',') {
                let tok = trim(tok);
                if tok.eq_ignore_ascii_case(b"close") {
                    facts.conn_close = true;
                } else if tok.eq_ignore_ascii_case(b"keep-alive") {
                    facts.conn_keep_alive = true;
                } else if tok.eq_ignore_ascii_case(b"upgrade") {
                    facts.conn_upgrade = true;
                }
            }
        }
        14 if name.eq_ignore_ascii_case(b"content-length") => {
            if facts.cl.is_some() {
                return Err(errors::DUPLICATE_CONTENT_LENGTH);
            }
            facts.cl = Some(parse_content_length(value)?);
        }
        17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
            if facts.cl.is_some() && !facts.te_seen {
                facts.te_after_cl = true;
            }
            facts.te_seen = true;
            // The last coding of the combined field value decides (RFC 9112 §6.3).
            if let Some(last) = value.rsplit(|&b| b == b',').next() {
                facts.te_chunked_last = trim(last).eq_ignore_ascii_case(b"chunked");
            }
            let chunked = value
                .split(|&b| b == b',')
                .filter(|t| trim(t).eq_ignore_ascii_case(b"chunked"))
                .count();
            facts.te_chunked_any |= chunked > 0;
            facts.te_chunked_count += chunked;
        }
        _ => {}
    }
    Ok(())
}

fn map_httparse(e: httparse::Error) -> ParseError {
    match e {
        httparse::Error::HeaderName => errors::INVALID_HEADER_TOKEN,
        httparse::Error::HeaderValue => errors::INVALID_HEADER_VALUE,
        httparse::Error::NewLine => errors::LF_EXPECTED,
        _ => errors::INVALID_HEADER_TOKEN,
    }
}

/// Trims optional whitespace (SP / HTAB, RFC 9110 §5.6.3) from both ends.
pub fn trim(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

/// Content-Length is 1*DIGIT (RFC 9110 §8.6); llhttp rejects anything else, lists included.
pub fn parse_content_length(v: &[u8]) -> Result<u64, ParseError> {
    let v = trim(v);
    if v.is_empty() {
        return Err(errors::EMPTY_CONTENT_LENGTH);
    }
    let mut n: u64 = 0;
    for &b in v {
        if !b.is_ascii_digit() {
            return Err(errors::INVALID_CONTENT_LENGTH);
        }
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add((b - b'0') as u64))
            .ok_or(errors::CONTENT_LENGTH_OVERFLOW)?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn methods() -> Methods {
        Methods::new(
            ["DELETE", "GET", "HEAD", "POST", "PUT", "CONNECT", "OPTIONS"]
                .iter()
                .map(|s| s.as_bytes().to_vec()),
        )
    }

    fn parse(b: &[u8]) -> Result<Option<RequestHead>, ParseError> {
        parse_request(b, &methods(), 16 * 1024, false)
    }

    #[test]
    fn simple_get() {
        let b = b"GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\nrest";
        let h = parse(b).unwrap().unwrap();
        assert_eq!(h.method, 1);
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
    fn keep_alive_rules() {
        let h = parse(b"GET / HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert_eq!(h.flags & F_KEEP_ALIVE, 0);
        let h = parse(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_ne!(h.flags & F_KEEP_ALIVE, 0);
        let h = parse(b"GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(h.flags & F_KEEP_ALIVE, 0);
    }

    #[test]
    fn upgrade_and_connect() {
        let h = parse(b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_ne!(h.flags & F_UPGRADE, 0);
        let h = parse(b"CONNECT example.com:443 HTTP/1.1\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_ne!(h.flags & F_CONNECT, 0);
    }

    #[test]
    fn framing_errors() {
        let e = |b: &[u8]| parse(b).unwrap_err().code;
        assert_eq!(
            e(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n"),
            "HPE_UNEXPECTED_CONTENT_LENGTH"
        );
        assert_eq!(
            e(b"POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n"),
            "HPE_INVALID_CONTENT_LENGTH"
        );
        assert_eq!(
            e(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"),
            "HPE_INVALID_TRANSFER_ENCODING"
        );
        assert_eq!(
            e(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "HPE_INVALID_TRANSFER_ENCODING"
        );
        let h = parse(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_ne!(h.flags & F_INVALID_TE, 0);
        assert_eq!(
            e(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "HPE_INVALID_TRANSFER_ENCODING"
        );
        let h = parse(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(h.framing, Framing::Chunked);
    }

    #[test]
    fn request_line_errors() {
        let e = |b: &[u8]| parse(b).unwrap_err().code;
        assert_eq!(e(b"FOO / HTTP/1.1\r\n\r\n"), "HPE_INVALID_METHOD");
        assert_eq!(e(b"GET /\x01 HTTP/1.1\r\n\r\n"), "HPE_INVALID_URL");
        assert_eq!(e(b"GET / XTTP/1.1\r\n\r\n"), "HPE_INVALID_CONSTANT");
        assert_eq!(e(b"GET / HTTP/1.9\r\n\r\n"), "HPE_INVALID_VERSION");
        assert_eq!(e(b"GET / HTTP/1.1\nHost: x\r\n\r\n"), "HPE_INVALID_VERSION");
        assert_eq!(
            e(b"GET / HTTP/1.1\r\n Host: x\r\n\r\n"),
            "HPE_UNEXPECTED_SPACE"
        );
        assert_eq!(e(b"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n"), "HPE_LF_EXPECTED");
        assert_eq!(e(b"GET / HTTP/1.1\r\nHost: x\n\r\n"), "HPE_CR_EXPECTED");
        assert_eq!(
            e(b"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n"),
            "HPE_INVALID_HEADER_TOKEN"
        );
        assert_eq!(
            e(b"GET / HTTP/1.1\r\nA: \x01\r\n\r\n"),
            "HPE_INVALID_HEADER_TOKEN"
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
        assert!(parse_request(&head(max - base - 1), &methods(), max, false)
            .unwrap()
            .is_some());
        assert_eq!(
            parse_request(&head(max - base), &methods(), max, false)
                .unwrap_err()
                .code,
            "HPE_HEADER_OVERFLOW"
        );
        // Without the end of the head yet, too.
        let partial = &head(max - base)[..];
        assert_eq!(
            parse_request(&partial[..partial.len() - 4], &methods(), max, false)
                .unwrap_err()
                .code,
            "HPE_HEADER_OVERFLOW"
        );
    }

    #[test]
    fn lenient_accepts_control_chars_in_values() {
        let b = b"GET / HTTP/1.1\r\nContent-Type: text/te\x08t\r\n\r\n";
        assert!(parse(b).is_err());
        assert!(parse_request(b, &methods(), 16 * 1024, true)
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
        for i in 0..200 {
            b.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        b.extend_from_slice(b"\r\n");
        assert!(parse(&b).unwrap().is_some());
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
    }

    #[test]
    fn leading_empty_lines_are_skipped() {
        let b = b"\r\n\r\nGET / HTTP/1.1\r\n\r\n";
        let h = parse(b).unwrap().unwrap();
        assert_eq!(&b[h.url.0..h.url.1], b"/");
        assert_eq!(h.head_len, b.len());
    }
}
