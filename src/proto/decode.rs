//! Request body framing: Content-Length and chunked (RFC 9112 §7.1), byte by byte as llhttp
//! reads it. The decoder keeps its own state (sizes, extension states, trailer lines), so it
//! consumes every byte it is given and its result does not depend on how reads split. Pure;
//! the caller owns the buffer.

use super::chars::{self, QDTEXT, QUOTED_PAIR, TOKEN};
use super::errors::{self, ParseError};
use super::parse::{HeadParser, Limits, F_CONN_CLOSE, F_CONN_KEEP_ALIVE, F_KEEP_ALIVE};

/// node's kMaxChunkExtensionsSize: chunk extension names and values (not `;`, `=`) of one
/// chunk-size line beyond this fail with 413.
const MAX_CHUNK_EXTENSIONS: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Length(u64),
    /// The first hex digit of a chunk size.
    SizeStart,
    Size,
    /// After `;`: an extension name starts (llhttp chunk_extensions).
    ExtStart,
    ExtName,
    ExtValue,
    Quoted,
    QuotedPair,
    QuotedDone,
    /// CR after the chunk-size line: LF next.
    SizeLf,
    Data(u64),
    DataCr,
    DataLf,
    Trailers,
    Done,
}

/// The body decoder of one request.
#[derive(Debug, Clone)]
pub struct Decoder {
    st: St,
    size: u64,
    /// Extension bytes node counts on the current chunk-size line.
    ext: usize,
    /// The head's flags (keep-alive facts) for the trailers' verdict.
    head_flags: u32,
    /// llhttp stops after this message (see `Done::upgrade`).
    upgrade: bool,
    trailers: Option<Box<Trailers>>,
}

#[derive(Debug, Clone)]
struct Trailers {
    parser: HeadParser,
    /// The trailer section so far (bytes that did not complete it in one step).
    buf: Vec<u8>,
}

/// The end of a body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Done {
    /// The trailer lines, each ending in CRLF, without the final empty line.
    pub trailers: Option<Vec<u8>>,
    /// The trailers ended the connection: llhttp_should_keep_alive, taken when the message
    /// ends, turned false (`Connection: close` in the trailers of a persistent request). No
    /// bytes after this message are read as HTTP; llhttp fails them with
    /// HPE_CLOSED_CONNECTION.
    pub close: bool,
    /// The trailers kept the connection: llhttp_should_keep_alive, taken when the message
    /// ends, turned true (`Connection: keep-alive` in the trailers of an HTTP/1.0 request
    /// that had not asked for it): the next request is read after all.
    pub keep: bool,
    /// The message was an upgrade request (Connection: upgrade + Upgrade) with a body:
    /// llhttp stops after it (message_done pauses on upgrade) even when nobody takes the
    /// upgrade; node:http then drops the rest of that read.
    pub upgrade: bool,
}

/// What one decoding step produced. Ranges are offsets into the slice given to `step`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Body bytes.
    Data(usize, usize),
    /// The body is complete.
    Done(Done),
    /// Every byte given was used; more are needed.
    NeedMore,
}

impl Decoder {
    pub fn for_length(n: u64) -> Self {
        Decoder {
            st: if n == 0 { St::Done } else { St::Length(n) },
            size: 0,
            ext: 0,
            head_flags: 0,
            upgrade: false,
            trailers: None,
        }
    }

    /// A chunked body of the request whose head had `head_flags` (RequestHead::flags).
    pub fn chunked(head_flags: u32) -> Self {
        Decoder {
            st: St::SizeStart,
            size: 0,
            ext: 0,
            head_flags,
            upgrade: false,
            trailers: None,
        }
    }

    /// Marks the body as that of an upgrade request (llhttp stops after it).
    pub fn of_upgrade(mut self) -> Self {
        self.upgrade = true;
        self
    }

    pub fn is_done(&self) -> bool {
        self.st == St::Done
    }

    /// Decodes from `buf`, returning how many bytes were used and what they produced. Call
    /// again with the unused rest until it returns `NeedMore` (all of `buf` used) or `Done`.
    pub fn step(&mut self, buf: &[u8], limits: &Limits) -> Result<(usize, Event), ParseError> {
        let mut i = 0;
        loop {
            match self.st {
                St::Done => {
                    let done = Done {
                        upgrade: self.upgrade,
                        ..Done::default()
                    };
                    return Ok((i, Event::Done(done)));
                }
                St::Length(rem) | St::Data(rem) => return Ok(self.data(buf, i, rem)),
                St::Trailers => return self.trailers(buf, i, limits),
                _ => {}
            }
            let Some(&b) = buf.get(i) else {
                return Ok((i, Event::NeedMore));
            };
            let at = |e: ParseError| e.at(i);
            self.st = match self.st {
                St::SizeStart | St::Size => self.size_byte(b, i)?,
                St::ExtStart
                | St::ExtName
                | St::ExtValue
                | St::Quoted
                | St::QuotedPair
                | St::QuotedDone => self.extension_byte(b, i)?,
                St::SizeLf => {
                    if b != b'\n' {
                        return Err(at(errors::CHUNK_SIZE_LF));
                    }
                    if self.size == 0 {
                        St::Trailers
                    } else {
                        St::Data(self.size)
                    }
                }
                St::DataCr => match b {
                    b'\r' => St::DataLf,
                    b'\n' => return Err(at(errors::CHUNK_DATA_CR)),
                    _ => return Err(at(errors::CHUNK_DATA_LF)),
                },
                St::DataLf => {
                    if b != b'\n' {
                        return Err(at(errors::CHUNK_DATA_LF));
                    }
                    St::SizeStart
                }
                St::Length(_) | St::Data(_) | St::Trailers | St::Done => continue,
            };
            i += 1;
        }
    }

    /// Body bytes of a Content-Length body or of a chunk, from `buf[i..]` (`rem` left).
    #[inline(always)]
    fn data(&mut self, buf: &[u8], i: usize, rem: u64) -> (usize, Event) {
        debug_assert!(matches!(self.st, St::Length(_) | St::Data(_)));
        let n = rem.min((buf.len() - i) as u64) as usize;
        if n == 0 {
            return (i, Event::NeedMore);
        }
        let rem = rem - n as u64;
        self.st = match (self.st, rem) {
            (St::Length(_), 0) => St::Done,
            (St::Length(_), _) => St::Length(rem),
            (_, 0) => St::DataCr,
            _ => St::Data(rem),
        };
        (i + n, Event::Data(i, i + n))
    }

    /// A byte of a chunk size (`buf[i]`); returns the next state.
    #[inline(always)]
    fn size_byte(&mut self, b: u8, i: usize) -> Result<St, ParseError> {
        debug_assert!(matches!(self.st, St::SizeStart | St::Size));
        let at = |e: ParseError| e.at(i);
        if self.st == St::SizeStart {
            self.size = chars::hex(b).ok_or(at(errors::INVALID_CHUNK_SIZE))?;
            self.ext = 0;
            return Ok(St::Size);
        }
        Ok(match (b, chars::hex(b)) {
            (_, Some(d)) => {
                self.size = self
                    .size
                    .checked_mul(16)
                    .and_then(|s| s.checked_add(d))
                    .ok_or(at(errors::CHUNK_SIZE_OVERFLOW))?;
                St::Size
            }
            (b'\r', _) => St::SizeLf,
            (b'\n', _) => return Err(at(errors::CHUNK_SIZE_CR)),
            (b';', _) => St::ExtStart,
            // Including SP and HTAB (llhttp without lenient spaces after chunk size).
            _ => return Err(at(errors::INVALID_CHUNK_SIZE)),
        })
    }

    /// A byte of a chunk extension (`buf[i]`, llhttp chunk_extensions); returns the next
    /// state.
    fn extension_byte(&mut self, b: u8, i: usize) -> Result<St, ParseError> {
        debug_assert!(matches!(
            self.st,
            St::ExtStart
                | St::ExtName
                | St::ExtValue
                | St::Quoted
                | St::QuotedPair
                | St::QuotedDone
        ));
        let at = |e: ParseError| e.at(i);
        let st = match self.st {
            St::ExtStart => match b {
                b' ' | b'\r' => return Err(at(errors::CHUNK_EXTENSIONS)),
                // The byte starts a name; read it there.
                _ => St::ExtName,
            },
            st => st,
        };
        Ok(match st {
            St::ExtName => match b {
                _ if chars::is(b, TOKEN) => {
                    self.ext_byte(i)?;
                    St::ExtName
                }
                b'=' => St::ExtValue,
                b';' => St::ExtStart,
                b'\r' => St::SizeLf,
                b'\n' => return Err(at(errors::CHUNK_EXT_NAME_CR)),
                _ => return Err(at(errors::CHUNK_EXT_NAME)),
            },
            St::ExtValue => match b {
                b'"' => {
                    self.ext_byte(i)?;
                    St::Quoted
                }
                _ if chars::is(b, TOKEN) => {
                    self.ext_byte(i)?;
                    St::ExtValue
                }
                b';' => St::ExtStart,
                b'\r' => St::SizeLf,
                b'\n' => return Err(at(errors::CHUNK_EXT_VALUE_CR)),
                _ => return Err(at(errors::CHUNK_EXT_VALUE)),
            },
            St::Quoted => match b {
                b'"' => {
                    self.ext_byte(i)?;
                    St::QuotedDone
                }
                b'\\' => {
                    self.ext_byte(i)?;
                    St::QuotedPair
                }
                _ if chars::is(b, QDTEXT) => {
                    self.ext_byte(i)?;
                    St::Quoted
                }
                _ => return Err(at(errors::CHUNK_EXT_QUOTED)),
            },
            St::QuotedPair => {
                if !chars::is(b, QUOTED_PAIR) {
                    return Err(at(errors::CHUNK_EXT_QUOTED_PAIR));
                }
                self.ext_byte(i)?;
                St::Quoted
            }
            St::QuotedDone => match b {
                b';' => St::ExtStart,
                b'\r' => St::SizeLf,
                b'\n' => return Err(at(errors::CHUNK_EXT_VALUE_CR)),
                _ => return Err(at(errors::CHUNK_EXT_AFTER_QUOTE)),
            },
            // Not an extension state: left as it is.
            st => st,
        })
    }

    /// Counts one extension byte (node's on_chunk_extension_name/value spans).
    fn ext_byte(&mut self, i: usize) -> Result<(), ParseError> {
        self.ext += 1;
        if self.ext > MAX_CHUNK_EXTENSIONS {
            return Err(errors::CHUNK_EXTENSIONS_OVERFLOW.at(i));
        }
        Ok(())
    }

    /// The trailer section, from `buf[i..]`.
    fn trailers(
        &mut self,
        buf: &[u8],
        i: usize,
        limits: &Limits,
    ) -> Result<(usize, Event), ParseError> {
        // No trailers (the common case): no parser to set up.
        if self.trailers.is_none() && buf[i..].starts_with(b"\r\n") {
            self.st = St::Done;
            let done = Done {
                upgrade: self.upgrade,
                ..Done::default()
            };
            return Ok((i + 2, Event::Done(done)));
        }
        let t = self.trailers.get_or_insert_with(|| {
            Box::new(Trailers {
                parser: HeadParser::for_trailers(),
                buf: Vec::new(),
            })
        });
        let input = &buf[i..];
        // Parse straight from the caller's bytes when nothing is held yet (the common case:
        // the whole section in one read).
        let held = t.buf.len();
        let end = if held == 0 {
            t.parser.parse_trailers(input, limits)?
        } else {
            t.buf.extend_from_slice(input);
            t.parser.parse_trailers(&t.buf, limits)?
        };
        let Some(end) = end else {
            if held == 0 {
                t.buf.extend_from_slice(input);
            }
            let len = t.parser.compact_slice(&mut t.buf);
            t.buf.truncate(len);
            return Ok((buf.len(), Event::NeedMore));
        };
        let section: &[u8] = if held == 0 { input } else { &t.buf };
        let lines = section.get(..end.len.saturating_sub(2)).unwrap_or(&[]);
        let trailers = (!lines.is_empty()).then(|| lines.to_vec());
        let used = i + end.len.saturating_sub(held);
        let close = self.closes(end.conn_close, end.conn_keep_alive);
        let keep = self.keeps(end.conn_close, end.conn_keep_alive);
        self.trailers = None;
        self.st = St::Done;
        let upgrade = self.upgrade;
        Ok((
            used,
            Event::Done(Done {
                trailers,
                close,
                keep,
                upgrade,
            }),
        ))
    }

    /// llhttp_should_keep_alive at the end of the message, with the trailers' Connection
    /// tokens added to the head's: whether it turned from close to keep-alive (only an
    /// HTTP/1.0 or 0.9 request can: on 1.1 a head that closes says `Connection: close`).
    fn keeps(&self, close: bool, keep_alive: bool) -> bool {
        let head = self.head_flags;
        if head & F_KEEP_ALIVE != 0 {
            return false;
        }
        let major = (head >> super::parse::VERSION_SHIFT) & 0xf;
        let minor = (head >> (super::parse::VERSION_SHIFT + 4)) & 0xf;
        let old = major == 0 || minor == 0;
        old && head & F_CONN_CLOSE == 0 && !close && (head & F_CONN_KEEP_ALIVE != 0 || keep_alive)
    }

    /// llhttp_should_keep_alive at the end of the message, with the trailers' Connection
    /// tokens added to the head's: whether it turned from keep-alive to close.
    fn closes(&self, close: bool, keep_alive: bool) -> bool {
        let head = self.head_flags;
        if head & F_KEEP_ALIVE == 0 {
            return false;
        }
        let major = (head >> super::parse::VERSION_SHIFT) & 0xf;
        let minor = (head >> (super::parse::VERSION_SHIFT + 4)) & 0xf;
        let now = if major > 0 && minor > 0 {
            head & F_CONN_CLOSE == 0 && !close
        } else {
            head & F_CONN_KEEP_ALIVE != 0 || keep_alive
        };
        !now
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::parse::F_HTTP11;
    use crate::proto::sim::pairs;

    const KA11: u32 = F_HTTP11 | F_KEEP_ALIVE | (1 << 16) | (1 << 20);

    /// Feeds `input` in pieces of `piece` bytes, as a connection would.
    fn decode_all(mut d: Decoder, input: &[u8], piece: usize) -> Result<(Vec<u8>, Done), String> {
        let limits = Limits::default();
        let mut body = Vec::new();
        for part in input.chunks(piece) {
            let mut off = 0;
            loop {
                let (used, ev) = d
                    .step(&part[off..], &limits)
                    .map_err(|e| e.code.to_string())?;
                match ev {
                    Event::Data(a, b) => body.extend_from_slice(&part[off + a..off + b]),
                    Event::Done(done) => return Ok((body, done)),
                    Event::NeedMore => {
                        assert_eq!(used, part.len() - off, "NeedMore uses every byte");
                        break;
                    }
                }
                off += used;
            }
        }
        Err("need-more".into())
    }

    #[test]
    fn chunked_in_every_split() {
        let input = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n";
        for piece in 1..input.len() {
            let (body, done) = decode_all(Decoder::chunked(KA11), input, piece).unwrap();
            assert_eq!(body, b"hello world");
            assert_eq!(pairs(&done.trailers.unwrap()), pairs(b"X-T: 1\r\n"));
            assert!(!done.close);
        }
    }

    #[test]
    fn length_body() {
        let (body, done) = decode_all(Decoder::for_length(5), b"hello", 2).unwrap();
        assert_eq!(body, b"hello");
        assert!(done.trailers.is_none());
    }

    #[test]
    fn empty_length_body_is_done_without_bytes() {
        // Found by the decoder fuzz target (its harness assumed a step per read).
        let mut d = Decoder::for_length(0);
        assert!(d.is_done());
        let (n, ev) = d.step(b"", &Limits::default()).unwrap();
        assert_eq!((n, ev), (0, Event::Done(Done::default())));
    }

    #[test]
    fn chunked_errors() {
        let err = |b: &[u8]| match decode_all(Decoder::chunked(KA11), b, b.len()) {
            Ok(_) => "done".to_string(),
            Err(e) => e,
        };
        assert_eq!(err(b"zz\r\n"), "HPE_INVALID_CHUNK_SIZE");
        assert_eq!(err(b"5\r\nhelloXX"), "HPE_STRICT");
        assert_eq!(err(b"5\nhello"), "HPE_CR_EXPECTED");
        assert_eq!(err(b"10000000000000000\r\n"), "HPE_INVALID_CHUNK_SIZE");
        assert_eq!(err(b"000000000000000000000001\r\na\r\n0\r\n\r\n"), "done");
        assert_eq!(err(b"5 \r\n"), "HPE_INVALID_CHUNK_SIZE");
        assert_eq!(err(b"5;\r\n"), "HPE_STRICT");
        assert_eq!(err(b"5;;a\r\nhello\r\n0\r\n\r\n"), "done");
        assert_eq!(err(b"5;a=\"b\r\n"), "HPE_STRICT");
        assert_eq!(err(b"0\r\n\r\n"), "done");
        assert_eq!(
            err(b"0\r\nContent-Length: 1\r\n\r\n"),
            "HPE_INVALID_CONTENT_LENGTH"
        );
        assert_eq!(
            err(b"0\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "HPE_INVALID_TRANSFER_ENCODING"
        );
        assert_eq!(err(b"0\r\nX: a\r\n b\r\n\r\n"), "HPE_INVALID_HEADER_TOKEN");
        let mut big = b"0\r\nX: ".to_vec();
        big.extend(std::iter::repeat_n(b'a', 17_000));
        assert_eq!(err(&big), "HPE_HEADER_OVERFLOW");
    }

    #[test]
    fn extensions_are_counted_per_line() {
        let mut line = b"1".to_vec();
        for _ in 0..6000 {
            line.extend_from_slice(b";ab");
        }
        line.extend_from_slice(b"\r\na\r\n0\r\n\r\n");
        assert!(decode_all(Decoder::chunked(KA11), &line, 7).is_ok());
        let mut line = b"1;a=".to_vec();
        line.extend(std::iter::repeat_n(b'x', 16_384));
        line.extend_from_slice(b"\r\na\r\n0\r\n\r\n");
        assert_eq!(
            decode_all(Decoder::chunked(KA11), &line, 100).unwrap_err(),
            "HPE_CHUNK_EXTENSIONS_OVERFLOW"
        );
    }

    #[test]
    fn connection_close_in_trailers() {
        let input = b"0\r\nConnection: close\r\n\r\n";
        let (_, done) = decode_all(Decoder::chunked(KA11), input, 3).unwrap();
        assert!(done.close);
        assert_eq!(
            pairs(&done.trailers.unwrap()),
            pairs(b"Connection: close\r\n")
        );
    }

    #[test]
    fn trailer_blanks_are_not_held() {
        let mut d = Decoder::chunked(KA11);
        let limits = Limits::default();
        d.step(b"0\r\nX:", &limits).unwrap();
        for _ in 0..1000 {
            assert_eq!(
                d.step(&[b' '; 1024], &limits).unwrap(),
                (1024, Event::NeedMore)
            );
        }
        assert!(d.trailers.as_ref().unwrap().buf.len() < 16);
        let (_, ev) = d.step(b"v\r\n\r\n", &limits).unwrap();
        assert_eq!(
            ev,
            Event::Done(Done {
                trailers: Some(b"X:v\r\n".to_vec()),
                ..Done::default()
            })
        );
    }
}
