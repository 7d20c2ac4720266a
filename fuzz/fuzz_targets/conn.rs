//! The connection state machine (src/conn) driven as the reactor drives it: bytes in random
//! reads, kept in the connection's buffer between reads. Nothing may panic, loop without
//! progress, or hand out a range outside the input; a failed connection dispatches nothing
//! more; and where no upgrade makes the rest of a read matter, reads split anywhere give
//! the same requests, bodies and errors. The first two bytes choose the pieces and the server.
#![no_main]

use fast_http_fuzz::conn::{Action, Http1, Limits, F_ASK_UPGRADE};
use fast_http_fuzz::pieces;
use fast_http_fuzz::proto::parse::{self, Methods};
use fast_http_fuzz::proto::sim::test_methods;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static METHODS: OnceLock<Methods> = OnceLock::new();

#[derive(Debug, PartialEq, Eq)]
enum Ev {
    Request(u32, Vec<u8>, u32),
    Body(u32, Vec<u8>),
    End(u32, Option<Vec<(Vec<u8>, Vec<u8>)>>),
    Upgraded(Vec<u8>),
    Error(&'static str),
    CloseNow,
}

/// A trailer block as JS reads it (lib/http/incoming.js parseHeaderBlock): names and values
/// without the blanks around them, which the decoder may or may not have kept.
fn fields(block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    block
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let colon = line.iter().position(|&b| b == b':')?;
            let v = &line[colon + 1..];
            let s = v.iter().position(|b| !blank(b)).unwrap_or(v.len());
            let e = v.iter().rposition(|b| !blank(b)).map_or(s, |e| e + 1);
            Some((line[..colon].to_vec(), v[s..e].to_vec()))
        })
        .collect()
}

/// Runs `next` over `input` until it stops; returns how many bytes were used.
fn process(
    http: &mut Http1,
    input: &[u8],
    lim: &Limits<'_>,
    answer: bool,
    evs: &mut Vec<Ev>,
) -> usize {
    let mut off = 0;
    let mut failed = false;
    for _ in 0..2 * input.len() + 16 {
        let rest = &input[off..];
        let action = http.next(rest, lim, 1);
        let used = match &action {
            Action::Stop => return off,
            Action::Consume(n) | Action::Raw(n) | Action::Upgrade(n, _, _) => *n,
            Action::Dispatch(n, _) | Action::Body(n, _, _) | Action::BodyEnd(n, _, _) => *n,
            Action::Error(_) | Action::CloseNow => rest.len(),
        };
        assert!(
            used <= rest.len(),
            "{action:?} uses more than {}",
            rest.len()
        );
        let r = |(a, b): (usize, usize)| {
            assert!(
                a <= b && b <= rest.len(),
                "range {a}..{b} of {}",
                rest.len()
            );
            rest[a..b].to_vec()
        };
        match action {
            Action::Dispatch(_, d) => {
                assert!(!failed, "a request after the connection failed");
                let (url, _) = (r(d.url), r(d.headers));
                let upgrade = d.flags & parse::F_UPGRADE != 0;
                // A body that came whole with the head is told as one that came later.
                evs.push(Ev::Request(
                    d.seq,
                    url,
                    d.flags & !(F_ASK_UPGRADE | parse::F_BODY_DONE),
                ));
                if let Some(b) = d.body {
                    let b = r(b);
                    if upgrade && d.flags & F_ASK_UPGRADE == 0 {
                        evs.push(Ev::Upgraded(b));
                    } else if !upgrade {
                        evs.push(Ev::Body(d.seq, b));
                        evs.push(Ev::End(d.seq, None));
                    }
                }
                if d.flags & F_ASK_UPGRADE != 0 {
                    assert!(http.decide_upgrade(answer, lim.upgrade_body));
                }
                http.dispatched();
            }
            Action::Body(_, seq, b) => evs.push(Ev::Body(seq, r(b))),
            Action::BodyEnd(_, seq, t) => evs.push(Ev::End(seq, t.map(|t| fields(&t)))),
            Action::Raw(n) | Action::Upgrade(n, _, true) => {
                evs.push(Ev::Upgraded(rest[..n].to_vec()))
            }
            Action::Upgrade(_, _, false) | Action::Consume(_) | Action::Stop => {}
            Action::Error(e) => {
                failed = true;
                evs.push(Ev::Error(e.code));
            }
            Action::CloseNow => {
                evs.push(Ev::CloseNow);
                return input.len();
            }
        }
        off += used;
    }
    panic!("no progress over {} bytes", input.len());
}

/// The reactor's read loop: a read goes straight to the machine when nothing is buffered,
/// else after what is; what is left waits in `rbuf`.
fn run(reads: &[&[u8]], lim: &Limits<'_>, answer: bool) -> Vec<Ev> {
    let mut http = Http1::new(1);
    let mut evs = Vec::new();
    for read in reads {
        // A failed connection fails every later read again (as llhttp): one error is enough.
        if evs.iter().any(|e| matches!(e, Ev::Error(_) | Ev::CloseNow)) {
            break;
        }
        if http.rbuf.is_empty() {
            let used = process(&mut http, read, lim, answer, &mut evs);
            http.rbuf.extend_from_slice(&read[used..]);
        } else {
            http.rbuf.extend_from_slice(read);
            let mut input = std::mem::take(&mut http.rbuf);
            let used = process(&mut http, &input, lim, answer, &mut evs);
            let _ = input.split_to(used);
            input.extend_from_slice(&http.rbuf);
            http.rbuf = input;
        }
        http.compact_input();
    }
    let _ = http.eof(false);
    evs
}

/// Consecutive body pieces and upgraded bytes as one, so reads split anywhere compare equal.
fn merged(evs: Vec<Ev>) -> Vec<Ev> {
    let mut out: Vec<Ev> = Vec::new();
    for e in evs {
        match (out.last_mut(), e) {
            (Some(Ev::Body(s, b)), Ev::Body(t, c)) if *s == t => b.extend_from_slice(&c),
            (Some(Ev::Upgraded(b)), Ev::Upgraded(c)) => b.extend_from_slice(&c),
            (_, Ev::Body(_, c)) | (_, Ev::Upgraded(c)) if c.is_empty() => {}
            (_, e) => out.push(e),
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((ctl, input)) = data.split_first_chunk::<2>() else {
        return;
    };
    let mut parse = parse::Limits::new(
        if ctl[1] & 1 == 0 { 16 * 1024 } else { 64 },
        Default::default(),
    );
    if ctl[1] & 2 != 0 {
        parse.max_header_fields = 3;
    }
    let lim = Limits {
        methods: METHODS.get_or_init(test_methods),
        parse,
        upgrade: ctl[1] & 4 != 0,
        connect: ctl[1] & 8 != 0,
        ask_upgrade: ctl[1] & 16 != 0,
        upgrade_body: ctl[1] & 32 != 0,
    };
    let answer = ctl[1] & 64 != 0;
    let whole = run(&[input], &lim, answer);
    let split = run(&pieces(input, ctl), &lim, answer);
    // An upgrade (taken, refused or asked about) drops or hands over the rest of a read, and
    // a CONNECT ends the connection: there the split matters, as it does for llhttp and node.
    let lower = input.to_ascii_lowercase();
    let split_free =
        !lower.windows(6).any(|w| w == b"pgrade") && !lower.windows(7).any(|w| w == b"connect");
    if split_free {
        assert_eq!(merged(whole), merged(split));
    }
});
