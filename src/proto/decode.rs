//! Request body framing: Content-Length and chunked (RFC 9112 §7.1), incremental over
//! whatever bytes have arrived. Pure; the caller owns the buffer and feeds it back with more
//! bytes appended when a step needs more.

use super::errors::{self, ParseError};

/// Longest chunk-size line (size plus extensions) accepted; node limits chunk extensions to
/// 16 KiB and answers 413 past that.
const MAX_CHUNK_LINE: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoder {
    Length(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkDataEnd,
    Trailers,
    Done,
}

/// What one decoding step produced. Ranges are offsets into the slice given to `step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Body bytes.
    Data(usize, usize),
    /// The body is complete; the trailer lines (each ending in CRLF), if any.
    Done(Option<(usize, usize)>),
    /// Nothing more can be decoded from these bytes.
    NeedMore,
}

impl Decoder {
    pub fn for_length(n: u64) -> Self {
        if n == 0 {
            Decoder::Done
        } else {
            Decoder::Length(n)
        }
    }

    pub fn chunked() -> Self {
        Decoder::ChunkSize
    }

    pub fn is_done(&self) -> bool {
        matches!(self, Decoder::Done)
    }

    /// Decodes from `buf`, returning how many bytes were consumed and what they produced.
    /// Call again with the unconsumed rest until it returns `NeedMore` or `Done`.
    pub fn step(&mut self, buf: &[u8], max_trailers: usize) -> Result<(usize, Event), ParseError> {
        let mut consumed = 0;
        loop {
            let b = &buf[consumed..];
            match *self {
                Decoder::Done => return Ok((consumed, Event::Done(None))),
                Decoder::Length(rem) => {
                    if b.is_empty() {
                        return Ok((consumed, Event::NeedMore));
                    }
                    let n = (rem.min(b.len() as u64)) as usize;
                    *self = if rem == n as u64 {
                        Decoder::Done
                    } else {
                        Decoder::Length(rem - n as u64)
                    };
                    return Ok((consumed + n, Event::Data(consumed, consumed + n)));
                }
                Decoder::ChunkData(rem) => {
                    if b.is_empty() {
                        return Ok((consumed, Event::NeedMore));
                    }
                    let n = (rem.min(b.len() as u64)) as usize;
                    *self = if rem == n as u64 {
                        Decoder::ChunkDataEnd
                    } else {
                        Decoder::ChunkData(rem - n as u64)
                    };
                    return Ok((consumed + n, Event::Data(consumed, consumed + n)));
                }
                Decoder::ChunkDataEnd => {
                    match b {
                        [] | [b'\r'] => return Ok((consumed, Event::NeedMore)),
                        [b'\r', b'\n', ..] => {}
                        _ => return Err(errors::CHUNK_DATA_LF),
                    }
                    consumed += 2;
                    *self = Decoder::ChunkSize;
                }
                Decoder::ChunkSize => {
                    let lf = match memchr::memchr(b'\n', b) {
                        Some(i) => i,
                        None => {
                            check_chunk_line(b, false)?;
                            if b.len() > MAX_CHUNK_LINE {
                                return Err(errors::CHUNK_EXTENSIONS_OVERFLOW);
                            }
                            return Ok((consumed, Event::NeedMore));
                        }
                    };
                    if lf == 0 || b[lf - 1] != b'\r' {
                        return Err(errors::CHUNK_SIZE_CR);
                    }
                    if lf > MAX_CHUNK_LINE {
                        return Err(errors::CHUNK_EXTENSIONS_OVERFLOW);
                    }
                    let size = check_chunk_line(&b[..lf - 1], true)?;
                    consumed += lf + 1;
                    *self = if size == 0 {
                        Decoder::Trailers
                    } else {
                        Decoder::ChunkData(size)
                    };
                }
                Decoder::Trailers => {
                    if b.len() < 2 {
                        return Ok((consumed, Event::NeedMore));
                    }
                    if b.starts_with(b"\r\n") {
                        *self = Decoder::Done;
                        return Ok((consumed + 2, Event::Done(None)));
                    }
                    // Trailer lines end at an empty line; every LF must follow a CR.
                    let mut pos = 0;
                    loop {
                        match memchr::memchr(b'\n', &b[pos..]) {
                            None => {
                                if b.len() > max_trailers {
                                    return Err(errors::HEADER_OVERFLOW);
                                }
                                return Ok((consumed, Event::NeedMore));
                            }
                            Some(off) => {
                                let lf = pos + off;
                                if lf == 0 || b[lf - 1] != b'\r' {
                                    return Err(errors::CR_EXPECTED);
                                }
                                if lf == pos + 1 {
                                    let end = lf + 1;
                                    let mut hs = [httparse::EMPTY_HEADER; 32];
                                    match httparse::parse_headers(&b[..end], &mut hs) {
                                        Ok(httparse::Status::Complete(_))
                                        | Err(httparse::Error::TooManyHeaders) => {}
                                        Ok(httparse::Status::Partial) => {
                                            return Err(errors::INVALID_HEADER_TOKEN)
                                        }
                                        Err(httparse::Error::HeaderValue) => {
                                            return Err(errors::INVALID_HEADER_VALUE)
                                        }
                                        Err(_) => return Err(errors::INVALID_HEADER_TOKEN),
                                    }
                                    *self = Decoder::Done;
                                    let t = (consumed, consumed + end - 2);
                                    return Ok((consumed + end, Event::Done(Some(t))));
                                }
                                pos = lf + 1;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Validates a chunk-size line without its CRLF: 1*HEXDIG, then optional extensions
/// (`;name[=value]`, RFC 9112 §7.1.1). Returns the size when `complete`.
fn check_chunk_line(mut line: &[u8], complete: bool) -> Result<u64, ParseError> {
    if !complete {
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
    }
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits > 16 {
        return Err(errors::CHUNK_SIZE_OVERFLOW);
    }
    let rest = &line[digits..];
    if digits == 0 {
        if complete || !rest.is_empty() {
            return Err(errors::INVALID_CHUNK_SIZE);
        }
        return Ok(0);
    }
    match rest.first() {
        None => {}
        Some(b';')
            if rest[1..]
                .iter()
                .any(|&b| b != b'\t' && (b < 0x20 || b == 0x7f)) =>
        {
            return Err(errors::CHUNK_EXTENSIONS);
        }
        Some(b';') => {}
        Some(_) => return Err(errors::INVALID_CHUNK_SIZE),
    }
    let mut n: u64 = 0;
    for &b in &line[..digits] {
        let d = (b as char).to_digit(16).unwrap_or(0) as u64;
        n = n
            .checked_mul(16)
            .and_then(|n| n.checked_add(d))
            .ok_or(errors::CHUNK_SIZE_OVERFLOW)?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in pieces of `piece` bytes, as a connection would, collecting the body.
    fn decode_all(mut d: Decoder, input: &[u8], piece: usize) -> (Vec<u8>, Option<Vec<u8>>) {
        let mut pending: Vec<u8> = Vec::new();
        let mut body = Vec::new();
        for part in input.chunks(piece) {
            pending.extend_from_slice(part);
            loop {
                let (used, ev) = d.step(&pending, 16 * 1024).unwrap();
                let ev_copy = match ev {
                    Event::Data(a, b) => {
                        body.extend_from_slice(&pending[a..b]);
                        None
                    }
                    Event::Done(t) => Some(t.map(|(a, b)| pending[a..b].to_vec())),
                    Event::NeedMore => {
                        pending.drain(..used);
                        break;
                    }
                };
                pending.drain(..used);
                if let Some(t) = ev_copy {
                    return (body, t);
                }
            }
        }
        panic!("body not complete");
    }

    #[test]
    fn chunked_in_every_split() {
        let input = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n";
        for piece in 1..input.len() {
            let (body, trailers) = decode_all(Decoder::chunked(), input, piece);
            assert_eq!(body, b"hello world");
            assert_eq!(trailers.unwrap(), b"X-T: 1\r\n");
        }
    }

    #[test]
    fn length_body() {
        let (body, t) = decode_all(Decoder::for_length(5), b"hello", 2);
        assert_eq!(body, b"hello");
        assert!(t.is_none());
    }

    #[test]
    fn chunked_errors() {
        let err = |b: &[u8]| {
            let mut d = Decoder::chunked();
            let mut off = 0;
            loop {
                match d.step(&b[off..], 1024) {
                    Err(e) => return e.code,
                    Ok((_, Event::NeedMore)) => return "need-more",
                    Ok((_, Event::Done(_))) => return "done",
                    Ok((n, _)) => off += n,
                }
            }
        };
        assert_eq!(err(b"zz\r\n"), "HPE_INVALID_CHUNK_SIZE");
        assert_eq!(err(b"5\r\nhelloXX"), "HPE_STRICT");
        assert_eq!(err(b"5\nhello"), "HPE_CR_EXPECTED");
        assert_eq!(err(b"11111111111111111\r\n"), "HPE_INVALID_CHUNK_SIZE");
        assert_eq!(err(b"5 \r\n"), "HPE_INVALID_CHUNK_SIZE");
        assert_eq!(err(b"0\r\n\r\n"), "done");
    }
}
