//! Response serialization: status lines, the headers node:http adds itself (Date,
//! Connection, Keep-Alive, Content-Length, Transfer-Encoding) and chunk framing. The user's
//! header lines arrive already validated and formatted from JS and are copied in between.

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
/// Close the connection once this response is written.
pub const R_CLOSE_AFTER: u32 = 1 << 6;
/// Append the server's `Keep-Alive: timeout=N` line after `Connection: keep-alive`.
pub const R_KA_TIMEOUT: u32 = 1 << 7;
/// Frame the body as chunks and end it with the last chunk (and trailers).
pub const R_FRAME: u32 = 1 << 9;
/// The response waited behind an earlier one: node would write it a tick later, so until the
/// batch ends a destroy drops it (see `OutQueue::tentative`).
pub const R_TENTATIVE: u32 = 1 << 10;
/// The head text is written UTF-8 encoded instead of latin1 (node sends the head in the
/// first body chunk's encoding when that chunk is a string).
pub const R_UTF8_HEAD: u32 = 1 << 11;

/// Status lines are always `HTTP/1.1`, whatever the request's version, as node:http does.
pub fn status_line(out: &mut Vec<u8>, code: u16, reason: &[u8]) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_decimal(out, code as u64);
    out.push(b' ');
    out.extend_from_slice(reason);
    out.extend_from_slice(b"\r\n");
}

/// The headers node:http's `_storeHeader` appends after the user's, in its order, and the
/// empty line that ends the head.
pub fn auto_headers(
    out: &mut Vec<u8>,
    flags: u32,
    body_len: usize,
    date: &[u8],
    keep_alive: &[u8],
) {
    if flags & R_DATE != 0 {
        out.extend_from_slice(date);
    }
    if flags & R_CONN_KEEP_ALIVE != 0 {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
        if flags & R_KA_TIMEOUT != 0 {
            out.extend_from_slice(keep_alive);
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

/// One chunk (RFC 9112 §7.1): size in hex, CRLF, data, CRLF. Empty data writes nothing,
/// since a zero-size chunk would end the body.
pub fn chunk(out: &mut Vec<u8>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    chunk_header(out, data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

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

/// The last chunk and the trailer section (already formatted lines, possibly empty).
pub fn last_chunk(out: &mut Vec<u8>, trailers: &[u8]) {
    out.extend_from_slice(b"0\r\n");
    out.extend_from_slice(trailers);
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
    fn hello_head() {
        let mut out = Vec::new();
        status_line(&mut out, 200, b"OK");
        out.extend_from_slice(b"Content-Type: text/plain\r\n");
        auto_headers(
            &mut out,
            R_DATE | R_CONN_KEEP_ALIVE | R_KA_TIMEOUT | R_CONTENT_LENGTH,
            11,
            b"Date: X\r\n",
            b"Keep-Alive: timeout=5\r\n",
        );
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: X\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 11\r\n\r\n"
        );
    }

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

    #[test]
    fn close_and_chunked() {
        let mut out = Vec::new();
        auto_headers(&mut out, R_CONN_CLOSE | R_CHUNKED, 0, b"", b"");
        assert_eq!(
            out,
            b"Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
        );
        let mut c = Vec::new();
        chunk(&mut c, b"hello world, 26 bytes long");
        chunk(&mut c, b"");
        last_chunk(&mut c, b"X: y\r\n");
        assert_eq!(c, b"1a\r\nhello world, 26 bytes long\r\n0\r\nX: y\r\n\r\n");
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
