//! Response serialization: status lines, chunk framing, decimals. Which headers a response
//! gets is the connection's decision (`crate::conn::head`); the user's header lines arrive
//! already validated and formatted from JS and are copied in between.

/// Status lines are always `HTTP/1.1`, whatever the request's version, as node:http does.
pub fn status_line(out: &mut Vec<u8>, code: u16, reason: &[u8]) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_decimal(out, code as u64);
    out.push(b' ');
    out.extend_from_slice(reason);
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
    fn chunks_and_last_chunk() {
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
