//! A response as bytes, the one place they are encoded: the status line, the app's header
//! lines, the headers node:http adds itself (Date / Connection / Keep-Alive /
//! Content-Length / Transfer-Encoding, as the `R_*` flags JS decided say), and the body's
//! framing. The text parts come as `Source`s the embedder writes (a JS string in the right
//! encoding); everything else is here, tested with byte slices.

/// Append the `Date:` line.
pub const R_DATE: u32 = 1;
/// Append `Connection: keep-alive` (and the server's `Keep-Alive:` line when `R_KA_TIMEOUT`).
pub const R_CONN_KEEP_ALIVE: u32 = 1 << 1;
/// Append `Connection: close`.
pub const R_CONN_CLOSE: u32 = 1 << 2;
/// Append `Content-Length:` with the body's length.
pub const R_CONTENT_LENGTH: u32 = 1 << 3;
/// Append `Transfer-Encoding: chunked`.
pub const R_CHUNKED: u32 = 1 << 4;
/// The response has no body on the wire (HEAD, 204, 304).
pub const R_NO_BODY: u32 = 1 << 5;
/// Append the server's `Keep-Alive: timeout=N` line after `Connection: keep-alive`.
pub const R_KA_TIMEOUT: u32 = 1 << 7;
/// Frame the body as chunks and end it with the last chunk (and trailers).
pub const R_FRAME: u32 = 1 << 9;
/// The head text is written UTF-8 encoded instead of latin1 (node sends the head in the
/// first body chunk's encoding when that chunk is a string).
pub const R_UTF8_HEAD: u32 = 1 << 11;

/// Text the embedder writes into the response where it goes (a JS string, in the encoding
/// the flags say), so it is copied once.
pub trait Source {
    fn write_to(&self, out: &mut Vec<u8>);
}

/// Bytes as they are.
pub struct Raw<'a>(pub &'a [u8]);

impl Source for Raw<'_> {
    fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0);
    }
}

/// The head of a response.
pub enum Head<'a> {
    /// Decided by JS, serialized here: the status line (with `reason`, or the status code's
    /// standard one), the app's header lines, then node's automatic headers as the flags say.
    Parts {
        status: u16,
        reason: Option<&'a dyn Source>,
        lines: &'a dyn Source,
    },
    /// Serialized by node already (writeHead's text, automatic headers included).
    Text(&'a dyn Source),
}

/// What the server adds to heads: the current Date line, its Keep-Alive line, and node's
/// status lines by code (`STATUS_CODES`, made once).
pub struct Auto<'a> {
    pub date: &'a [u8],
    pub keep_alive: &'a [u8],
    pub status_lines: &'a [Option<Vec<u8>>],
}

/// A whole response: its head, `R_*` flags, and trailers (for a framed body).
pub struct Response<'a> {
    pub head: Head<'a>,
    pub flags: u32,
    pub trailers: Option<&'a dyn Source>,
}

impl Response<'_> {
    fn has_body(&self) -> bool {
        self.flags & R_NO_BODY == 0
    }

    fn framed(&self) -> bool {
        self.has_body() && self.flags & R_FRAME != 0
    }

    /// The head, and what goes before a body of `body_len` bytes (its chunk header).
    pub fn head(&self, out: &mut Vec<u8>, body_len: usize, auto: &Auto<'_>) {
        match &self.head {
            Head::Parts {
                status,
                reason,
                lines,
            } => {
                let known = auto
                    .status_lines
                    .get(*status as usize)
                    .and_then(|l| l.as_deref());
                match (reason, known) {
                    (Some(reason), _) => {
                        status_start(out, *status);
                        reason.write_to(out);
                        out.extend_from_slice(b"\r\n");
                    }
                    (None, Some(line)) => out.extend_from_slice(line),
                    (None, None) => status_line(out, *status, b"unknown"),
                }
                lines.write_to(out);
                auto_headers(out, self.flags, body_len, auto);
            }
            Head::Text(text) => text.write_to(out),
        }
        if self.framed() && body_len > 0 {
            chunk_header(out, body_len);
        }
    }

    /// What follows the body: the end of its chunk, the last chunk and the trailers.
    pub fn tail(&self, out: &mut Vec<u8>, body_len: usize) {
        if !self.framed() {
            return;
        }
        if body_len > 0 {
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n");
        if let Some(t) = self.trailers {
            t.write_to(out);
        }
        out.extend_from_slice(b"\r\n");
    }

    /// The whole response with `body` (nothing of it when the response has none).
    pub fn encode(&self, out: &mut Vec<u8>, body: &[u8], auto: &Auto<'_>) {
        let body = if self.has_body() { body } else { &[] };
        self.head(out, body.len(), auto);
        out.extend_from_slice(body);
        self.tail(out, body.len());
    }
}

/// The headers node:http's `_storeHeader` appends after the app's, in its order, and the
/// empty line that ends the head.
fn auto_headers(out: &mut Vec<u8>, flags: u32, body_len: usize, auto: &Auto<'_>) {
    if flags & R_DATE != 0 {
        out.extend_from_slice(auto.date);
    }
    if flags & R_CONN_KEEP_ALIVE != 0 {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
        if flags & R_KA_TIMEOUT != 0 {
            out.extend_from_slice(auto.keep_alive);
        }
    } else if flags & R_CONN_CLOSE != 0 {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    if flags & R_CONTENT_LENGTH != 0 {
        out.extend_from_slice(b"Content-Length: ");
        push_decimal(out, body_len as u64);
        out.extend_from_slice(b"\r\n");
    } else if flags & R_CHUNKED != 0 {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// Status lines are always `HTTP/1.1`, whatever the request's version, as node:http does.
pub fn status_line(out: &mut Vec<u8>, code: u16, reason: &[u8]) {
    status_start(out, code);
    out.extend_from_slice(reason);
    out.extend_from_slice(b"\r\n");
}

fn status_start(out: &mut Vec<u8>, code: u16) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_decimal(out, code as u64);
    out.push(b' ');
}

/// A chunk's size line (RFC 9112 §7.1): size in lowercase hex, CRLF.
pub fn chunk_header(out: &mut Vec<u8>, len: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut tmp = [0u8; 16];
    let mut i = tmp.len();
    let mut v = len;
    loop {
        i -= 1;
        tmp[i] = HEX[v & 15];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
    out.extend_from_slice(b"\r\n");
}

pub fn push_decimal(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_sizes_in_lowercase_hex() {
        for (len, hex) in [
            (1usize, "1"),
            (15, "f"),
            (16, "10"),
            (65536, "10000"),
            (0xabc, "abc"),
        ] {
            let mut out = Vec::new();
            chunk_header(&mut out, len);
            assert_eq!(out, format!("{hex}\r\n").into_bytes());
        }
    }

    fn lines() -> Vec<Option<Vec<u8>>> {
        let mut lines = vec![None; 1000];
        lines[200] = Some(b"HTTP/1.1 200 OK\r\n".to_vec());
        lines
    }

    fn auto(lines: &[Option<Vec<u8>>]) -> Auto<'_> {
        Auto {
            date: b"Date: X\r\n",
            keep_alive: b"Keep-Alive: timeout=5\r\n",
            status_lines: lines,
        }
    }

    fn parts<'a>(status: u16, reason: Option<&'a Raw<'a>>, lines: &'a Raw<'a>) -> Head<'a> {
        Head::Parts {
            status,
            reason: reason.map(|r| r as &dyn Source),
            lines,
        }
    }

    fn whole(r: &Response<'_>, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        r.encode(&mut out, body, &auto(&lines()));
        out
    }

    #[test]
    fn hello() {
        let r = Response {
            head: parts(200, None, &Raw(b"Content-Type: text/plain\r\n")),
            flags: R_DATE | R_CONN_KEEP_ALIVE | R_KA_TIMEOUT | R_CONTENT_LENGTH,
            trailers: None,
        };
        assert_eq!(
            whole(&r, b"Hello World"),
            &b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: X\r\nConnection: keep-alive\r\n\
              Keep-Alive: timeout=5\r\nContent-Length: 11\r\n\r\nHello World"[..]
        );
    }

    #[test]
    fn custom_reason_and_unknown_status() {
        let r = Response {
            head: parts(200, Some(&Raw(b"Fine")), &Raw(b"")),
            flags: R_CONN_CLOSE,
            trailers: None,
        };
        assert_eq!(
            whole(&r, b""),
            b"HTTP/1.1 200 Fine\r\nConnection: close\r\n\r\n"
        );
        let r = Response {
            head: parts(599, None, &Raw(b"")),
            flags: 0,
            trailers: None,
        };
        assert_eq!(whole(&r, b""), b"HTTP/1.1 599 unknown\r\n\r\n");
    }

    #[test]
    fn framed_body_with_trailers() {
        let trailers = Raw(b"X: y\r\n");
        let r = Response {
            head: parts(200, None, &Raw(b"")),
            flags: R_CHUNKED | R_FRAME,
            trailers: Some(&trailers),
        };
        assert_eq!(
            whole(&r, b"hello world, 26 bytes long"),
            &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
              1a\r\nhello world, 26 bytes long\r\n0\r\nX: y\r\n\r\n"[..]
        );
        // An empty body is only the last chunk (a zero-size chunk would end it early).
        assert_eq!(
            whole(&r, b""),
            &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n\r\n"[..]
        );
    }

    #[test]
    fn head_tail_and_whole_agree() {
        let r = Response {
            head: parts(200, None, &Raw(b"")),
            flags: R_CHUNKED | R_FRAME,
            trailers: None,
        };
        let body = b"0123456789";
        let mut split = Vec::new();
        r.head(&mut split, body.len(), &auto(&lines()));
        split.extend_from_slice(body);
        r.tail(&mut split, body.len());
        assert_eq!(split, whole(&r, body));
    }

    #[test]
    fn no_body_on_the_wire() {
        let r = Response {
            head: parts(200, None, &Raw(b"")),
            flags: R_NO_BODY | R_CONN_CLOSE | R_FRAME,
            trailers: None,
        };
        // HEAD, 204, 304: no body and no chunks, whatever the app wrote.
        assert_eq!(
            whole(&r, b"ignored"),
            &b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"[..]
        );
    }

    #[test]
    fn serialized_head_text() {
        let text = Raw(b"HTTP/1.1 404 Not Found\r\nA: b\r\n\r\n");
        let r = Response {
            head: Head::Text(&text),
            flags: R_DATE | R_CONTENT_LENGTH,
            trailers: None,
        };
        // node wrote the automatic headers into its text already.
        assert_eq!(whole(&r, b"x"), b"HTTP/1.1 404 Not Found\r\nA: b\r\n\r\nx");
    }

    #[test]
    fn decimals() {
        for v in [0u64, 7, 10, 99, 12345, u64::MAX] {
            let mut o = Vec::new();
            push_decimal(&mut o, v);
            assert_eq!(o, v.to_string().as_bytes());
        }
    }
}
