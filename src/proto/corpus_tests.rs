//! Split independence: every request of the strictness corpus (test/strictness/corpus.txt,
//! the file the wire-level comparison with node:http reads), followed by a pipelined
//! `GET /follow-up`, goes through the head parser and the body decoder the way the
//! connection drives them (parse; on "need more" keep the rest and compact; append the next
//! read; parse again). Whatever the reads are, in two pieces at every split point or one
//! byte at a time, the outcome (heads, bodies, trailers, or the error) must be the one the
//! whole input gives.

use super::decode::{Decoder, Event};
use super::parse::{
    Framing, HeadParser, Limits, Methods, F_CONNECT, F_INVALID_TE, F_KEEP_ALIVE, F_UPGRADE,
};
use bytes::BytesMut;

const CORPUS: &str = include_str!("../../test/strictness/corpus.txt");
const FOLLOW_UP: &[u8] = b"GET /follow-up HTTP/1.1\r\nHost: localhost\r\n\r\n";

pub(crate) struct Case {
    pub name: String,
    pub raw: Vec<u8>,
    pub split: bool,
    pub max_header_size: usize,
}

/// Decodes one escaped `raw:` value (the escapes of test/strictness/corpus.js).
fn unescape(s: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' {
            out.push(s[i]);
            i += 1;
            continue;
        }
        let e = s[i + 1];
        i += 2;
        match e {
            b'r' => out.push(b'\r'),
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'0' => out.push(0),
            b's' => out.push(b' '),
            b'\\' => out.push(b'\\'),
            b']' => out.push(b']'),
            b'x' => {
                let hex = std::str::from_utf8(&s[i..i + 2]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 2;
            }
            b'[' => {
                let colon = i + s[i..].iter().position(|&b| b == b':').unwrap();
                let n: usize = std::str::from_utf8(&s[i..colon]).unwrap().parse().unwrap();
                let mut j = colon + 1;
                while s[j] != b']' {
                    j += if s[j] == b'\\' { 2 } else { 1 };
                }
                let mut part = Vec::new();
                unescape(&s[colon + 1..j], &mut part);
                for _ in 0..n {
                    out.extend_from_slice(&part);
                }
                i = j + 1;
            }
            _ => panic!("unknown escape \\{}", e as char),
        }
    }
}

pub(crate) fn corpus() -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    // The file is latin1; `include_str!` needs UTF-8, so raw bytes >= 0x80 are written as
    // \xHH escapes there.
    for line in CORPUS.lines() {
        if let Some(name) = line.strip_prefix("=== ") {
            cases.push(Case {
                name: name.trim().to_string(),
                raw: Vec::new(),
                split: true,
                max_header_size: 16 * 1024,
            });
        } else if let (Some(c), Some(v)) = (cases.last_mut(), line.strip_prefix("raw: ")) {
            unescape(v.as_bytes(), &mut c.raw);
        } else if let (Some(c), Some(v)) = (cases.last_mut(), line.strip_prefix("split: ")) {
            c.split = v.trim() != "no";
        } else if let (Some(c), Some(v)) = (cases.last_mut(), line.strip_prefix("server: ")) {
            for kv in v.split_whitespace() {
                if let Some(n) = kv.strip_prefix("maxHeaderSize=") {
                    c.max_header_size = n.parse().unwrap();
                }
            }
        }
    }
    cases
}

/// The header lines of a block as node:http sees them (lib/incoming.js parseHeaderBlock):
/// names, and values without surrounding blanks.
pub(crate) fn pairs(block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    block
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            let colon = l.iter().position(|&b| b == b':').unwrap();
            let v = &l[colon + 1..];
            let s = v.iter().position(|&b| b != b' ' && b != b'\t');
            let e = v.iter().rposition(|&b| b != b' ' && b != b'\t');
            let v = match (s, e) {
                (Some(s), Some(e)) => &v[s..=e],
                _ => &[][..],
            };
            (l[..colon].to_vec(), v.to_vec())
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ev {
    Head {
        method: u16,
        url: Vec<u8>,
        version: (u8, u8),
        headers: Vec<(Vec<u8>, Vec<u8>)>,
        flags: u32,
    },
    Body(Vec<u8>),
    End {
        trailers: Vec<(Vec<u8>, Vec<u8>)>,
        close: bool,
    },
    /// Bytes after an upgrade or CONNECT head (another protocol).
    Tunnel(Vec<u8>),
    Error(&'static str, &'static str),
}

/// One connection's parse of `pieces`, read one after the other.
pub(crate) fn simulate<'a>(
    pieces: impl IntoIterator<Item = &'a [u8]>,
    methods: &Methods,
    limits: &Limits,
) -> Vec<Ev> {
    let mut evs: Vec<Ev> = Vec::new();
    let mut rbuf = BytesMut::new();
    let mut head = HeadParser::default();
    let mut body: Option<Decoder> = None;
    let mut tunnel = false;
    // llhttp's `closed` state: after a message that does not keep the connection.
    let mut closed = false;
    let push_body = |evs: &mut Vec<Ev>, data: &[u8]| match evs.last_mut() {
        Some(Ev::Body(b)) => b.extend_from_slice(data),
        _ => evs.push(Ev::Body(data.to_vec())),
    };
    for piece in pieces {
        rbuf.extend_from_slice(piece);
        loop {
            if tunnel {
                match evs.last_mut() {
                    Some(Ev::Tunnel(t)) => t.extend_from_slice(&rbuf),
                    _ => evs.push(Ev::Tunnel(rbuf.to_vec())),
                }
                rbuf.clear();
                break;
            }
            if let Some(d) = body.as_mut() {
                match d.step(&rbuf, limits) {
                    Err(e) => {
                        evs.push(Ev::Error(e.code, e.reason));
                        return evs;
                    }
                    Ok((n, Event::Data(a, b))) => {
                        push_body(&mut evs, &rbuf[a..b]);
                        let _ = rbuf.split_to(n);
                    }
                    Ok((n, Event::Done(done))) => {
                        evs.push(Ev::End {
                            trailers: done.trailers.as_deref().map(pairs).unwrap_or_default(),
                            close: done.close,
                        });
                        closed |= done.close;
                        body = None;
                        let _ = rbuf.split_to(n);
                    }
                    Ok((n, Event::NeedMore)) => {
                        assert_eq!(n, rbuf.len(), "NeedMore leaves nothing behind");
                        rbuf.clear();
                        break;
                    }
                }
                continue;
            }
            if closed {
                match rbuf.iter().position(|&b| b != b'\r' && b != b'\n') {
                    Some(_) => {
                        evs.push(Ev::Error(
                            "HPE_CLOSED_CONNECTION",
                            "Data after `Connection: close`",
                        ));
                        return evs;
                    }
                    None => {
                        rbuf.clear();
                        break;
                    }
                }
            }
            match head.parse(&rbuf, methods, limits) {
                Err(e) => {
                    evs.push(Ev::Error(e.code, e.reason));
                    return evs;
                }
                Ok(None) => {
                    head.compact(&mut rbuf);
                    break;
                }
                Ok(Some(h)) => {
                    let url = rbuf[h.url.0..h.url.1].to_vec();
                    let headers = pairs(&rbuf[h.headers.0..h.headers.1]);
                    evs.push(Ev::Head {
                        method: h.method,
                        url,
                        version: (h.major, h.minor),
                        headers,
                        flags: h.flags,
                    });
                    let _ = rbuf.split_to(h.head_len);
                    if h.flags & (F_UPGRADE | F_CONNECT) != 0 {
                        tunnel = true;
                        continue;
                    }
                    if h.flags & F_INVALID_TE != 0 {
                        let e = super::errors::INVALID_TE;
                        evs.push(Ev::Error(e.code, e.reason));
                        return evs;
                    }
                    closed = h.flags & F_KEEP_ALIVE == 0;
                    body = match h.framing {
                        Framing::None => None,
                        Framing::Length(n) => Some(Decoder::for_length(n)),
                        Framing::Chunked => Some(Decoder::chunked(h.flags)),
                    };
                    if body.as_ref().is_some_and(|d| d.is_done()) {
                        body = None;
                    }
                    if body.is_none() {
                        evs.push(Ev::End {
                            trailers: Vec::new(),
                            close: false,
                        });
                    }
                }
            }
        }
    }
    evs
}

pub(crate) fn test_methods() -> Methods {
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

/// Split points to try: all of them for small inputs; for big ones the first and last few
/// hundred and a stride in between.
fn split_points(len: usize) -> Vec<usize> {
    if len <= 1200 {
        return (1..len).collect();
    }
    let mut v: Vec<usize> = (1..300).chain(len - 300..len).collect();
    v.extend((300..len - 300).step_by(97));
    v
}

#[test]
fn corpus_parses_alike_at_every_split() {
    let methods = test_methods();
    let cases = corpus();
    assert!(cases.len() >= 150, "corpus has {} cases", cases.len());
    for c in cases.iter().filter(|c| c.split) {
        let limits = Limits::new(c.max_header_size, false);
        let mut input = c.raw.clone();
        input.extend_from_slice(FOLLOW_UP);
        let whole = simulate([&input[..]], &methods, &limits);
        for at in split_points(input.len()) {
            let got = simulate([&input[..at], &input[at..]], &methods, &limits);
            assert_eq!(got, whole, "{}: split at {at}", c.name);
        }
        let got = simulate(input.chunks(1), &methods, &limits);
        assert_eq!(got, whole, "{}: one byte at a time", c.name);
        for piece in [2, 3, 7, 64] {
            let got = simulate(input.chunks(piece), &methods, &limits);
            assert_eq!(got, whole, "{}: pieces of {piece}", c.name);
        }
    }
}

#[test]
fn crlf_after_a_body_split_before_the_lf() {
    // A read ending in the CR of the empty line between two requests once failed with
    // HPE_INVALID_METHOD: both requests must be served.
    let methods = test_methods();
    let limits = Limits::default();
    let a: &[u8] = b"POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello\r";
    let b: &[u8] = b"\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n";
    let evs = simulate([a, b], &methods, &limits);
    let urls: Vec<&[u8]> = evs
        .iter()
        .filter_map(|e| match e {
            Ev::Head { url, .. } => Some(&url[..]),
            _ => None,
        })
        .collect();
    assert_eq!(urls, [&b"/1"[..], b"/after"]);
    assert!(!evs.iter().any(|e| matches!(e, Ev::Error(..))));
}

#[test]
fn a_flood_of_blanks_stays_small() {
    // `X-A:` then blanks node does not count: the buffer keeps only what it counts, and
    // each read costs its own bytes (no re-scan of what came before).
    let methods = test_methods();
    let limits = Limits::default();
    let mut head = HeadParser::default();
    let mut rbuf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: x\r\nX-A:"[..]);
    assert_eq!(head.parse(&rbuf, &methods, &limits), Ok(None));
    head.compact(&mut rbuf);
    let spaces = [b' '; 65536];
    for _ in 0..256 {
        rbuf.extend_from_slice(&spaces);
        assert_eq!(head.parse(&rbuf, &methods, &limits), Ok(None));
        head.compact(&mut rbuf);
        assert!(rbuf.len() < 64, "{} bytes held", rbuf.len());
    }
    rbuf.extend_from_slice(b"v\r\n\r\n");
    assert!(head.parse(&rbuf, &methods, &limits).unwrap().is_some());
}
