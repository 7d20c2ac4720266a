//! Split independence: every request of the strictness corpus (test/strictness/corpus.txt,
//! the file the wire-level comparison with node:http reads), followed by a pipelined
//! `GET /follow-up`, goes through the head parser and the body decoder the way the
//! connection drives them (parse; on "need more" keep the rest and compact; append the next
//! read; parse again). Whatever the reads are, in two pieces at every split point or one
//! byte at a time, the outcome (heads, bodies, trailers, or the error) must be the one the
//! whole input gives.

use super::parse::{HeadParser, Leniency, Limits};
use super::sim::{simulate, test_methods, Ev};
use bytes::BytesMut;

const CORPUS: &str = include_str!("../../test/strictness/corpus.txt");
const FOLLOW_UP: &[u8] = b"GET /follow-up HTTP/1.1\r\nHost: localhost\r\n\r\n";

pub(crate) struct Case {
    pub name: String,
    pub raw: Vec<u8>,
    pub split: bool,
    pub max_header_size: usize,
    pub leniency: Leniency,
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
                leniency: Leniency::Strict,
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
                // The parser's leniency as node's calculateLenientFlags picks it (on Node 24+,
                // where httpValidation exists).
                c.leniency = match kv {
                    "insecureHTTPParser=true" | "httpValidation=insecure" => Leniency::Insecure,
                    "httpValidation=relaxed" => Leniency::Relaxed,
                    "httpValidation=strict" | "insecureHTTPParser=false" => Leniency::Strict,
                    _ => c.leniency,
                };
            }
        }
    }
    cases
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
        let limits = Limits::new(c.max_header_size, c.leniency);
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

#[test]
fn blanks_before_many_values_are_dropped_too() {
    // Each read ends a padded value and starts the next: the runs the parser has already
    // passed are dropped as well, not only the one it is in.
    let methods = test_methods();
    let limits = Limits::default();
    let mut head = HeadParser::default();
    let mut rbuf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: x\r\nX-0:"[..]);
    for i in 1..200 {
        rbuf.extend_from_slice(&[b' '; 65536]);
        rbuf.extend_from_slice(format!("v\r\nX-{i}:").as_bytes());
        assert_eq!(head.parse(&rbuf, &methods, &limits), Ok(None));
        head.compact(&mut rbuf);
        assert!(
            rbuf.len() < 16 * i + 64,
            "{} bytes held after {i} lines",
            rbuf.len()
        );
    }
    rbuf.extend_from_slice(b" v\r\n\r\n");
    let h = head.parse(&rbuf, &methods, &limits).unwrap().unwrap();
    assert_eq!(h.head_len, rbuf.len());
}
