//! The request line (RFC 9112 §3), as llhttp reads it: the method, the request target
//! (llhttp url.ts), the protocol and version, and HTTP/2's preface.

use super::machine::{Field, Line, St, UrlSt};
use super::methods::{MethodMatch, P_HTTP, P_ICE, P_RTSP};
use super::{HeadParser, Limits, Methods};
use crate::proto::chars::{self, FRAGMENT, PATH, QUERY, SERVER};
use crate::proto::errors::{self, ParseError};

const PROTOCOLS: [(&[u8], u8, ParseError); 3] = [
    (b"HTTP", P_HTTP, errors::HTTP_METHOD),
    (b"RTSP", P_RTSP, errors::RTSP_METHOD),
    (b"ICE", P_ICE, errors::ICE_METHOD),
];

const H2_PREFACE_REST: &[u8] = b"\r\n\r\nSM\r\n\r\n";

impl HeadParser {
    /// Runs the request-line states over `buf`. Ok(true): the line is complete and a field
    /// state is next; Ok(false): more bytes are needed.
    pub(super) fn request_line(
        &mut self,
        buf: &[u8],
        methods: &Methods,
        limits: &Limits,
    ) -> Result<bool, ParseError> {
        loop {
            let St::Line(line) = self.st else {
                return Ok(true);
            };
            self.line_run(line, buf, limits)?;
            let Some(&b) = buf.get(self.pos) else {
                return Ok(false);
            };
            match line {
                Line::Start => {
                    if b == b'\r' || b == b'\n' {
                        self.pos += 1;
                    } else {
                        self.end_skip();
                        self.mark = self.pos;
                        self.st = St::Line(Line::Method);
                    }
                }
                Line::Method => {
                    if !self.method(buf, methods)? {
                        return Ok(false);
                    }
                }
                Line::SpacesBeforeUrl => self.target_start(b, methods),
                Line::Url(u) => self.url_byte(u, b, limits)?,
                Line::UrlCr => {
                    if b != b'\n' {
                        return Err(self.err(errors::URL_CRLF));
                    }
                    self.pos += 1;
                    self.http09();
                }
                Line::AfterUrl { http09 } => {
                    if b == b'\t' || b == 0x0c {
                        return Err(self.err(errors::INVALID_URL));
                    }
                    self.st = if http09 {
                        St::Field(Field::HeadersStart)
                    } else {
                        St::Line(Line::SpacesBeforeProtocol)
                    };
                }
                Line::SpacesBeforeProtocol => {
                    if b == b' ' {
                        self.pos += 1;
                    } else {
                        self.end_skip();
                        self.st = St::Line(Line::Protocol { p: 0, i: 0 });
                    }
                }
                Line::Protocol { i: 0, .. } => self.protocol_start(b, buf, methods)?,
                Line::Protocol { p, i } => self.protocol_byte(p, i, b, methods)?,
                Line::Major | Line::Dot | Line::Minor => self.version(line, b, methods)?,
                Line::VersionEnd | Line::VersionCr | Line::Pri(_) => self.line_end(line, b)?,
            }
        }
    }

    /// The states that read runs of bytes: the request target's, and the skipped bytes
    /// before the method, the target and the protocol.
    #[inline(always)]
    fn line_run(&mut self, line: Line, buf: &[u8], limits: &Limits) -> Result<(), ParseError> {
        match line {
            Line::Url(u @ (UrlSt::Path | UrlSt::Query | UrlSt::Fragment | UrlSt::Server)) => {
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
            Line::Start | Line::SpacesBeforeUrl | Line::SpacesBeforeProtocol => {
                let rest = &buf[self.pos.min(buf.len())..];
                self.pos += rest
                    .iter()
                    .position(|&b| match line {
                        Line::Start => b != b'\r' && b != b'\n',
                        _ => b != b' ',
                    })
                    .unwrap_or(rest.len());
            }
            _ => {}
        }
        Ok(())
    }

    /// The method, from `mark`, and its SP. Ok(false): more bytes are needed.
    #[inline(always)]
    fn method(&mut self, buf: &[u8], methods: &Methods) -> Result<bool, ParseError> {
        match methods.matches(&buf[self.mark..]) {
            MethodMatch::NeedMore => Ok(false),
            MethodMatch::Invalid(k) => Err(errors::INVALID_METHOD.at(self.mark + k)),
            MethodMatch::Found(i, k) => {
                self.method = i;
                self.pos = self.mark + k;
                match buf.get(self.pos) {
                    None => Ok(false),
                    Some(b' ') => {
                        self.pos += 1;
                        self.skip_start = self.pos;
                        self.st = St::Line(Line::SpacesBeforeUrl);
                        Ok(true)
                    }
                    Some(_) => Err(self.err(errors::METHOD_SPACE)),
                }
            }
        }
    }

    /// A byte after the method's SP: more spaces, or the request target's first byte (an
    /// authority for CONNECT).
    #[inline(always)]
    fn target_start(&mut self, b: u8, methods: &Methods) {
        if b == b' ' {
            self.pos += 1;
        } else {
            self.end_skip();
            self.url.0 = self.pos;
            let connect = methods.all.get(self.method).and_then(|m| m.index);
            self.st = if connect.is_some() && connect == methods.connect {
                St::Line(Line::Url(UrlSt::Server))
            } else {
                St::Line(Line::Url(UrlSt::Start))
            };
        }
    }

    /// The protocol's first byte; the common request lines (`HTTP/1.1` or `HTTP/1.0`, CRLF)
    /// are taken whole.
    #[inline(always)]
    fn protocol_start(&mut self, b: u8, buf: &[u8], methods: &Methods) -> Result<(), ParseError> {
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
            self.st = St::Field(Field::HeadersStart);
            return Ok(());
        }
        let Some(p) = PROTOCOLS.iter().position(|(w, _, _)| w[0] == b) else {
            return Err(self.err(errors::INVALID_CONSTANT));
        };
        self.pos += 1;
        self.st = St::Line(Line::Protocol { p: p as u8, i: 1 });
        Ok(())
    }

    /// Byte `i` (> 0) of protocol `p`'s name, or the `/` after it. The name's last byte
    /// checks that the method may use the protocol.
    #[inline(always)]
    fn protocol_byte(&mut self, p: u8, i: u8, b: u8, methods: &Methods) -> Result<(), ParseError> {
        let (word, allowed, wrong_method) = PROTOCOLS[p as usize];
        if (i as usize) < word.len() {
            if b != word[i as usize] {
                return Err(self.err(errors::INVALID_CONSTANT));
            }
            self.pos += 1;
            self.st = St::Line(Line::Protocol { p, i: i + 1 });
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
            return Ok(());
        }
        if b != b'/' {
            return Err(self.err(errors::INVALID_CONSTANT));
        }
        self.pos += 1;
        self.st = St::Line(Line::Major);
        Ok(())
    }

    /// The version digits and their dot.
    #[inline(always)]
    fn version(&mut self, line: Line, b: u8, methods: &Methods) -> Result<(), ParseError> {
        debug_assert!(matches!(line, Line::Major | Line::Dot | Line::Minor));
        match line {
            Line::Major => {
                if !b.is_ascii_digit() {
                    return Err(self.err(errors::MAJOR_VERSION));
                }
                self.major = b - b'0';
                self.pos += 1;
                self.st = St::Line(Line::Dot);
            }
            Line::Dot => {
                if b != b'.' {
                    return Err(self.err(errors::VERSION_DOT));
                }
                self.pos += 1;
                self.st = St::Line(Line::Minor);
            }
            Line::Minor => {
                if !b.is_ascii_digit() {
                    return Err(self.err(errors::MINOR_VERSION));
                }
                self.minor = b - b'0';
                if !matches!((self.major, self.minor), (0, 9) | (1, 0) | (1, 1) | (2, 0)) {
                    return Err(self.err(errors::INVALID_VERSION));
                }
                self.pos += 1;
                self.st = if Some(self.method) == methods.pri {
                    St::Line(Line::Pri(0))
                } else {
                    St::Line(Line::VersionEnd)
                };
            }
            _ => {}
        }
        Ok(())
    }

    /// The CRLF after the version, or after `PRI * HTTP/2.0` the rest of HTTP/2's preface
    /// (which fails as llhttp fails it: node:http does not speak HTTP/2).
    #[inline(always)]
    fn line_end(&mut self, line: Line, b: u8) -> Result<(), ParseError> {
        debug_assert!(matches!(
            line,
            Line::VersionEnd | Line::VersionCr | Line::Pri(_)
        ));
        match line {
            Line::VersionEnd => {
                if b != b'\r' {
                    return Err(self.err(errors::VERSION_CRLF));
                }
                self.pos += 1;
                self.st = St::Line(Line::VersionCr);
            }
            Line::VersionCr => {
                if b != b'\n' {
                    return Err(self.err(errors::VERSION_LF));
                }
                self.pos += 1;
                self.headers_start = self.pos;
                self.st = St::Field(Field::HeadersStart);
            }
            Line::Pri(i) => {
                if H2_PREFACE_REST.get(i as usize) != Some(&b) {
                    return Err(self.err(errors::H2_PREFACE));
                }
                self.pos += 1;
                if i as usize + 1 == H2_PREFACE_REST.len() {
                    return Err(self.err(errors::H2_UPGRADE));
                }
                self.st = St::Line(Line::Pri(i + 1));
            }
            _ => {}
        }
        Ok(())
    }

    fn http09(&mut self) {
        self.major = 0;
        self.minor = 9;
        self.headers_start = self.pos;
        self.st = St::Line(Line::AfterUrl { http09: true });
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
                        self.st = St::Line(Line::AfterUrl { http09: false });
                        return Ok(());
                    }
                    (_, b'\r') => {
                        self.url.1 = self.pos;
                        self.pos += 1;
                        self.st = St::Line(Line::UrlCr);
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
        self.st = St::Line(Line::Url(next));
        Ok(())
    }
}
