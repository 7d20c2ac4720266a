//! A response head as the connection writes it: the flags JS sends with each response
//! (`R_*`, which headers node:http adds itself and how the response ends) and the header
//! lines they stand for.

use crate::proto::encode::push_decimal;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::encode::status_line;

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
    fn close_and_chunked() {
        let mut out = Vec::new();
        auto_headers(&mut out, R_CONN_CLOSE | R_CHUNKED, 0, b"", b"");
        assert_eq!(
            out,
            b"Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
        );
    }
}
