//! Chunked and Content-Length bodies decoded whole and in random pieces must give the same
//! data, trailers and verdict (or the same error), and nothing may panic. The first two
//! bytes choose the framing, the limits and the pieces.
#![no_main]

use fast_http_fuzz::pieces;
use fast_http_fuzz::proto::decode::{Decoder, Event};
use fast_http_fuzz::proto::parse::{Leniency, Limits, F_HTTP11, F_KEEP_ALIVE, VERSION_SHIFT};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, PartialEq, Eq)]
enum Out {
    Data(Vec<u8>),
    Done(Option<Vec<(Vec<u8>, Vec<u8>)>>, bool),
    Error(&'static str, &'static str),
    NeedMore,
}

fn decode<'a>(d: Decoder, reads: impl IntoIterator<Item = &'a [u8]>, limits: &Limits) -> Vec<Out> {
    let mut d = d;
    let mut out = vec![Out::Data(Vec::new())];
    for read in reads {
        let mut off = 0;
        loop {
            match d.step(&read[off..], limits) {
                Err(e) => {
                    out.push(Out::Error(e.code, e.reason));
                    return out;
                }
                Ok((n, Event::Data(a, b))) => {
                    assert!(a <= b && b <= n && off + n <= read.len());
                    if let Some(Out::Data(v)) = out.first_mut() {
                        v.extend_from_slice(&read[off + a..off + b]);
                    }
                    off += n;
                }
                Ok((n, Event::Done(done))) => {
                    assert!(off + n <= read.len());
                    let t = done
                        .trailers
                        .as_deref()
                        .map(fast_http_fuzz::proto::sim::pairs);
                    out.push(Out::Done(t, done.close));
                    return out;
                }
                Ok((n, Event::NeedMore)) => {
                    assert_eq!(off + n, read.len(), "NeedMore uses every byte");
                    break;
                }
            }
        }
    }
    out.push(Out::NeedMore);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((ctl, input)) = data.split_first_chunk::<2>() else {
        return;
    };
    let leniency = if ctl[1] & 0x80 == 0 {
        Leniency::Strict
    } else {
        Leniency::Relaxed
    };
    let limits = Limits::new(if ctl[1] & 1 == 0 { 16 * 1024 } else { 48 }, leniency);
    let head = F_HTTP11 | F_KEEP_ALIVE | (1 << VERSION_SHIFT) | (1 << (VERSION_SHIFT + 4));
    let make = || {
        if ctl[1] & 2 == 0 {
            Decoder::chunked(head)
        } else {
            Decoder::for_length((ctl[1] >> 2) as u64 * 7 + 1)
        }
    };
    let whole = decode(make(), [input], &limits);
    let split = decode(make(), pieces(input, ctl), &limits);
    assert_eq!(whole, split);
});
