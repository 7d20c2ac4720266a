//! A connection's use of the head parser and the body decoder, as plain functions over
//! byte pieces: parse; on "need more" keep the rest and compact; append the next read;
//! parse again. The corpus tests and the fuzz targets (fuzz/) compare what it gives for the
//! same bytes read in different pieces.

use super::decode::{Decoder, Event};
use super::parse::{
    Framing, HeadParser, Limits, Methods, RequestHead, F_CONNECT, F_INVALID_TE, F_KEEP_ALIVE,
    F_UPGRADE,
};
use bytes::BytesMut;

/// The header lines of a block as node:http sees them (lib/http/incoming.js parseHeaderBlock):
/// names, and values without surrounding blanks.
pub fn pairs(block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
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
pub enum Ev {
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
pub fn simulate<'a>(
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
                if let Err(e) = super::parse::after_close(&rbuf) {
                    evs.push(Ev::Error(e.code, e.reason));
                    return evs;
                }
                rbuf.clear();
                break;
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
                    evs.push(head_event(&h, &rbuf));
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
                    body = body_of(&h);
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

fn head_event(h: &RequestHead, rbuf: &[u8]) -> Ev {
    Ev::Head {
        method: h.method,
        url: rbuf[h.url.0..h.url.1].to_vec(),
        version: (h.major, h.minor),
        headers: pairs(&rbuf[h.headers.0..h.headers.1]),
        flags: h.flags,
    }
}

/// The decoder of the head's body, if it has one.
fn body_of(h: &RequestHead) -> Option<Decoder> {
    let body = match h.framing {
        Framing::None => None,
        Framing::Length(n) => Some(Decoder::for_length(n)),
        Framing::Chunked => Some(Decoder::chunked(h.flags)),
    };
    body.filter(|d| !d.is_done())
}

pub fn test_methods() -> Methods {
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
