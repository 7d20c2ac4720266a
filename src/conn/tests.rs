//! Every transition of the connection state machine, driven with byte slices.

use super::*;
use crate::proto::parse::{F_BODY_DONE, F_UPGRADE};

fn methods() -> &'static Methods {
    static METHODS: std::sync::OnceLock<Methods> = std::sync::OnceLock::new();
    METHODS.get_or_init(|| {
        Methods::new(
            ["DELETE", "GET", "HEAD", "POST", "PUT", "CONNECT", "OPTIONS"]
                .iter()
                .map(|s| s.as_bytes().to_vec()),
        )
    })
}

struct Harness {
    http: Http1,
    upgrade: bool,
    connect: bool,
    /// The server has its own shouldUpgradeCallback...
    ask: bool,
    /// ...which answers this while the request is dispatched (None: it threw).
    answer: Option<bool>,
    max_headers: usize,
    /// Node 26: an Upgrade request's body goes through the request first.
    upgrade_body: bool,
}

impl Harness {
    fn limits(&self) -> Limits<'static> {
        let mut parse = crate::proto::parse::Limits::default();
        if self.max_headers > 0 {
            parse.max_header_fields = self.max_headers;
        }
        Limits {
            methods: methods(),
            parse,
            upgrade: self.upgrade,
            connect: self.connect,
            ask_upgrade: self.ask,
            upgrade_body: self.upgrade_body,
        }
    }

    fn new() -> Harness {
        Harness {
            http: Http1::new(1),
            upgrade: false,
            connect: false,
            ask: false,
            answer: None,
            max_headers: 0,
            upgrade_body: false,
        }
    }

    /// Runs `next` over `input` until it stops, as the reactor does; returns the actions
    /// (with ranges resolved to bytes) and how many bytes were used.
    fn feed(&mut self, input: &[u8]) -> (Vec<String>, usize) {
        let lim = self.limits();
        let mut off = 0;
        let mut out = Vec::new();
        loop {
            let rest = &input[off..];
            let s = |r: (usize, usize)| String::from_utf8_lossy(&rest[r.0..r.1]).into_owned();
            match self.http.next(rest, &lim, 100) {
                Action::Stop => return (out, off),
                Action::Consume(n) => {
                    off += n;
                    out.push(format!("consume {n}"));
                }
                Action::Dispatch(n, d) => {
                    off += n;
                    out.push(format!(
                        "request {} {}{}{}{}",
                        d.seq,
                        s(d.url),
                        d.body
                            .map(|b| format!(" body={}", s(b)))
                            .unwrap_or_default(),
                        if d.after_idle { " after-idle" } else { "" },
                        if d.flags & F_ASK_UPGRADE != 0 {
                            " ask"
                        } else {
                            ""
                        }
                    ));
                    // JS answers inside its 'request' callback, before the reactor goes on.
                    if d.flags & F_ASK_UPGRADE != 0 {
                        if let Some(answer) = self.answer {
                            assert!(self.http.decide_upgrade(answer, self.upgrade_body));
                        }
                    }
                    self.http.dispatched();
                }
                Action::Body(n, seq, r) => {
                    off += n;
                    out.push(format!("body {seq} {}", s(r)));
                }
                Action::BodyEnd(n, seq, t) => {
                    off += n;
                    out.push(format!(
                        "end {seq}{}",
                        t.map(|t| format!(" trailers={:?}", String::from_utf8_lossy(&t)))
                            .unwrap_or_default()
                    ));
                }
                Action::Upgrade(n, seq, done) => {
                    out.push(if done {
                        format!("upgrade {seq} head={}", String::from_utf8_lossy(&rest[..n]))
                    } else {
                        format!("upgrade {seq} body still coming")
                    });
                    off += n;
                }
                Action::Raw(n) => {
                    out.push(format!("raw {}", String::from_utf8_lossy(&rest[..n])));
                    off += n;
                }
                Action::Error(e) => {
                    out.push(format!("error {}", e.code));
                    return (out, input.len());
                }
                Action::CloseNow => {
                    out.push("close-now".into());
                    return (out, input.len());
                }
            }
        }
    }

    fn actions(&mut self, input: &[u8]) -> Vec<String> {
        self.feed(input).0
    }
}

#[test]
fn a_request_without_body_completes_at_dispatch() {
    let mut h = Harness::new();
    assert!(
        h.http.request_clock().is_some(),
        "a new connection counts as a request"
    );
    assert_eq!(
        h.actions(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"),
        ["request 0 /a"]
    );
    assert!(matches!(h.http.reading, Reading::Head));
    assert_eq!(h.http.inflight, 1);
    assert!(h.http.request_clock().is_none());
    assert!(!h.http.mid_message(), "the request is complete");
    let done = h.http.response_done(0, false).unwrap();
    assert_eq!(
        done,
        Finished {
            idle: true,
            resume: false
        }
    );
    assert!(!h.http.mid_message());
}

#[test]
fn keep_alive_requests_follow_on_the_same_connection() {
    let mut h = Harness::new();
    h.actions(b"GET /1 HTTP/1.1\r\n\r\n");
    h.http.response_done(0, false);
    assert!(h.http.keep_alive_idle);
    assert_eq!(
        h.actions(b"GET /2 HTTP/1.1\r\n\r\n"),
        ["request 1 /2 after-idle"]
    );
    assert!(!h.http.keep_alive_idle);
}

#[test]
fn a_partial_head_waits_and_starts_the_request_clock() {
    let mut h = Harness::new();
    h.http.req_start = 0;
    let (acts, used) = h.feed(b"GET / HTTP/1.1\r\nHo");
    assert!(acts.is_empty());
    assert_eq!(used, 0);
    assert_eq!(h.http.request_clock(), Some((100, false)));
}

#[test]
fn only_a_head_cut_by_a_read_keeps_a_parser() {
    let mut h = Harness::new();
    assert_eq!(
        h.actions(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"),
        ["request 0 /a"]
    );
    assert!(h.http.head.is_none(), "an idle connection holds no parser");
    let (acts, used) = h.feed(b"GET /b HTTP/1.1\r\nHo");
    assert!(acts.is_empty());
    assert_eq!(used, 0);
    assert!(h.http.head.is_some(), "the cut head's state is kept");
    let (acts, _) = h.feed(b"GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(acts, ["request 1 /b"]);
    assert!(h.http.head.is_none());
    let (acts, _) = h.feed(b"GET /c HTTP/1.1\r\n\x01");
    assert_eq!(acts, ["error HPE_INVALID_HEADER_TOKEN"]);
    assert!(h.http.head.is_none(), "a failed head keeps no parser");
}

#[test]
fn a_body_that_came_with_its_head_is_dispatched_with_it() {
    let mut h = Harness::new();
    let mut input = b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello".to_vec();
    let lim = h.limits();
    match h.http.next(&input, &lim, 1) {
        Action::Dispatch(n, d) => {
            assert_eq!(n, input.len());
            assert_ne!(d.flags & F_BODY_DONE, 0);
        }
        a => panic!("{a:?}"),
    }
    input.clear();
    assert!(matches!(h.http.reading, Reading::Head));
}

#[test]
fn a_body_in_pieces_ends_with_body_end() {
    let mut h = Harness::new();
    assert_eq!(
        h.actions(b"POST / HTTP/1.1\r\nContent-Length: 6\r\n\r\nab"),
        ["request 0 /", "body 0 ab"]
    );
    assert!(matches!(h.http.reading, Reading::Body { seq: 0, .. }));
    assert!(
        h.http.request_clock().is_some(),
        "the request is still arriving"
    );
    assert_eq!(h.actions(b"cdef"), ["body 0 cdef", "end 0"]);
    assert!(matches!(h.http.reading, Reading::Head));
    assert!(h.http.request_clock().is_none());
}

#[test]
fn chunked_bodies_end_with_their_trailers() {
    let mut h = Harness::new();
    let acts = h.actions(
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n",
    );
    assert_eq!(
        acts,
        [
            "request 0 /",
            "body 0 abc",
            "end 0 trailers=\"X-T: 1\\r\\n\""
        ]
    );
}

#[test]
fn pipelined_requests_are_dispatched_in_order() {
    let mut h = Harness::new();
    assert_eq!(
        h.actions(b"GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n"),
        ["request 0 /1", "request 1 /2"]
    );
    assert_eq!(h.http.inflight, 2);
    // The second response finishes first: it waits, the connection is not idle.
    assert!(h.http.response_done(1, false).is_none());
    let done = h.http.response_done(0, false).unwrap();
    assert!(done.idle);
    assert_eq!(h.http.inflight, 0);
}

#[test]
fn a_request_that_closes_makes_later_bytes_an_error() {
    for head in [
        &b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n"[..],
        b"GET / HTTP/1.0\r\n\r\n",
    ] {
        let mut h = Harness::new();
        h.actions(head);
        assert_eq!(h.http.keep_alive, KeepAlive::Closing);
        assert_eq!(
            h.actions(b"GET / HTTP/1.1\r\n\r\n"),
            ["error HPE_CLOSED_CONNECTION"]
        );
        assert!(matches!(h.http.reading, Reading::Failed(_)));
    }
}

#[test]
fn a_closing_request_still_reads_its_body() {
    let mut h = Harness::new();
    assert_eq!(
        h.actions(b"POST / HTTP/1.1\r\nConnection: close\r\nContent-Length: 2\r\n\r\na"),
        ["request 0 /", "body 0 a"]
    );
    assert_eq!(h.actions(b"b"), ["body 0 b", "end 0"]);
}

#[test]
fn a_response_that_closes_keeps_parsing_and_drops_later_responses() {
    let mut h = Harness::new();
    h.actions(b"GET / HTTP/1.1\r\n\r\n");
    h.http.response_done(0, true);
    // As node's parser, the rest of what was read is still parsed (the requests are served,
    // their responses dropped) until the connection closes.
    assert_eq!(h.http.keep_alive, KeepAlive::Open);
    assert_eq!(
        h.actions(b"GET /x HTTP/1.1\r\n\r\n"),
        ["request 1 /x after-idle"]
    );
    assert!(h.http.out.push(1, b"dropped".to_vec()).is_none());
    let f = h.http.flushed();
    assert!(f.fin && f.close && !f.tell_js);
}

#[test]
fn upgrades_hand_the_rest_of_the_input_over() {
    let mut h = Harness::new();
    h.upgrade = true;
    let acts = h.actions(b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: ws\r\n\r\nhead");
    assert_eq!(acts, ["request 0 / body=head"]);
    assert!(h.http.is_upgraded());
    assert_eq!(h.actions(b"more"), ["raw more"]);
    assert_eq!(h.http.eof(false), Eof::Upgraded);
}

#[test]
fn an_upgrade_nobody_listens_for_is_a_plain_request() {
    let mut h = Harness::new();
    let lim = h.limits();
    let input = b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: ws\r\n\r\n";
    match h.http.next(input, &lim, 1) {
        Action::Dispatch(_, d) => assert_eq!(d.flags & F_UPGRADE, 0),
        a => panic!("{a:?}"),
    }
    assert!(!h.http.is_upgraded());
}

#[test]
fn connect_without_a_listener_closes() {
    let mut h = Harness::new();
    assert_eq!(h.actions(b"CONNECT a:443 HTTP/1.1\r\n\r\n"), ["close-now"]);
    let mut h = Harness::new();
    h.connect = true;
    assert_eq!(
        h.actions(b"CONNECT a:443 HTTP/1.1\r\n\r\nx"),
        ["request 0 a:443 body=x"]
    );
}

#[test]
fn a_parse_error_repeats_for_every_later_chunk() {
    let mut h = Harness::new();
    assert_eq!(
        h.actions(b"FOO / HTTP/1.1\r\n\r\n"),
        ["error HPE_INVALID_METHOD"]
    );
    assert!(h.http.request_clock().is_none());
    assert_eq!(h.actions(b"x"), ["error HPE_INVALID_METHOD"]);
    assert!(h.actions(b"").is_empty());
    assert_eq!(h.http.eof(false), Eof::End);
}

#[test]
fn queued_output_throttles_parsing_until_it_drains() {
    let mut h = Harness::new();
    h.actions(b"GET /1 HTTP/1.1\r\n\r\n");
    h.http.out.push(0, vec![0; OUTPUT_HIGH_WATER + 1]);
    let (acts, used) = h.feed(b"GET /2 HTTP/1.1\r\n\r\n");
    assert!(acts.is_empty() && used == 0);
    assert!(h.http.throttled);
    h.http.out.consume(OUTPUT_HIGH_WATER + 1);
    let done = h.http.response_done(0, false).unwrap();
    assert!(done.resume && !h.http.throttled);
    assert_eq!(
        h.actions(b"GET /2 HTTP/1.1\r\n\r\n"),
        ["request 1 /2 after-idle"]
    );
}

#[test]
fn end_of_input_between_requests_ends_our_side() {
    let mut h = Harness::new();
    h.actions(b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(h.http.eof(false), Eof::End);
    assert_eq!(h.http.writing, Writing::EndAfterFlush);
    assert_eq!(h.http.keep_alive, KeepAlive::Done);
    assert!(!h.http.is_active(true) || !h.http.out.is_flushed());
    let f = h.http.flushed();
    assert!(f.fin && f.close, "both sides ended: close");
    assert_eq!(h.http.writing, Writing::Shut);
}

#[test]
fn end_of_input_inside_a_message_is_an_error() {
    let mut h = Harness::new();
    h.actions(b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab");
    assert_eq!(h.http.eof(false), Eof::MidMessage);
    let mut h = Harness::new();
    h.http.rbuf.extend_from_slice(b"GET / HT");
    assert_eq!(h.http.eof(false), Eof::MidMessage);
    let mut h = Harness::new();
    h.http.rbuf.extend_from_slice(b"\r\n");
    assert_eq!(h.http.eof(false), Eof::End, "empty lines are no message");
}

#[test]
fn half_open_waits_for_pending_responses() {
    let mut h = Harness::new();
    h.actions(b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(h.http.eof(true), Eof::Wait);
    assert_eq!(h.http.writing, Writing::Open);
    let done = h.http.response_done(0, false).unwrap();
    assert!(done.idle);
    assert_eq!(h.http.writing, Writing::EndAfterFlush);
    assert!(h.http.flushed().close);
}

#[test]
fn shutdown_sends_fin_once_and_tells_js() {
    let mut h = Harness::new();
    assert_eq!(h.http.flushed(), Flushed::default());
    h.http.shutdown();
    let f = h.http.flushed();
    assert!(f.fin && f.tell_js && !f.close);
    assert_eq!(h.http.flushed(), Flushed::default(), "FIN goes out once");
    assert_eq!(
        h.actions(b"GET /after HTTP/1.1\r\n\r\n"),
        ["request 0 /after"],
        "still parsed"
    );
    h.http.response_done(0, false);
    assert_eq!(h.http.eof(false), Eof::End);
    assert!(
        h.http.flushed().close,
        "the peer's FIN closes a shut connection"
    );
}

#[test]
fn a_timed_out_request_is_reported_once_and_parsing_goes_on() {
    let mut h = Harness::new();
    h.actions(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\na");
    assert!(h.http.request_clock().is_some());
    h.http.timed_out();
    assert!(
        h.http.request_clock().is_none(),
        "the sweep reports it once"
    );
    assert_eq!(h.actions(b"bcdef"), ["body 0 bcdef"]);
    assert_eq!(h.http.eof(false), Eof::MidMessage);
}

#[test]
fn more_header_fields_than_allowed_fail() {
    let mut h = Harness::new();
    h.max_headers = 3;
    let input = b"GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    h.max_headers = 3;
    let lim = h.limits();
    match h.http.next(input, &lim, 1) {
        Action::Error(e) => assert_eq!(e.code, "HPE_HEADER_OVERFLOW"),
        a => panic!("{a:?}"),
    }
    let mut h = Harness::new();
    h.max_headers = 4;
    assert_eq!(h.actions(input), ["request 0 /"]);
}

const UPGRADE: &[u8] = b"GET /u HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: ws\r\n\r\n";

fn asking(answer: Option<bool>) -> Harness {
    let mut h = Harness::new();
    h.ask = true;
    h.answer = answer;
    h
}

#[test]
fn an_upgrade_js_accepts_hands_the_rest_of_the_input_over() {
    let mut h = asking(Some(true));
    // Listeners do not matter: the callback decides.
    h.upgrade = false;
    let input = [UPGRADE, b"head"].concat();
    let (acts, used) = h.feed(&input);
    assert_eq!(acts, ["request 0 /u body=head ask", "consume 4"]);
    assert_eq!(used, input.len());
    assert!(h.http.is_upgraded());
    assert_eq!(h.http.keep_alive, KeepAlive::Done);
    assert!(h.http.request_clock().is_none());
    assert_eq!(h.actions(b"more"), ["raw more"]);
    assert_eq!(h.http.eof(false), Eof::Upgraded);
}

#[test]
fn an_upgrade_js_refuses_is_a_plain_request_and_the_rest_of_the_read_is_dropped() {
    let mut h = asking(Some(false));
    h.upgrade = true;
    let input = [UPGRADE, b"GET /b HTTP/1.1\r\n\r\n"].concat();
    let (acts, used) = h.feed(&input);
    assert_eq!(
        acts,
        [
            "request 0 /u body=GET /b HTTP/1.1\r\n\r\n ask",
            "consume 19"
        ]
    );
    assert_eq!(used, input.len());
    assert!(matches!(h.http.reading, Reading::Head));
    assert!(!h.http.is_upgraded());
    assert!(h.http.request_clock().is_none(), "the request is complete");
    assert_eq!(h.http.keep_alive, KeepAlive::Open);
    h.http.response_done(0, false).unwrap();
    assert_eq!(
        h.actions(b"GET /c HTTP/1.1\r\n\r\n"),
        ["request 1 /c after-idle"],
        "the next read is parsed"
    );
}

#[test]
fn a_refused_upgrade_reads_its_body_then_drops_the_rest_of_that_read() {
    let mut h = asking(Some(false));
    let head =
        b"POST /u HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: ws\r\nContent-Length: 3\r\n\r\n";
    let input = [&head[..], b"abcGET /b HTTP/1.1\r\n\r\n"].concat();
    let (acts, used) = h.feed(&input);
    assert_eq!(
        acts,
        [
            "request 0 /u body=abcGET /b HTTP/1.1\r\n\r\n ask",
            "body 0 abc",
            "end 0"
        ]
    );
    assert_eq!(used, input.len());
    assert_eq!(h.actions(b"GET /c HTTP/1.1\r\n\r\n"), ["request 1 /c"]);

    // The body in pieces: the read that ends it is the one whose rest is dropped.
    let mut h = asking(Some(false));
    assert_eq!(
        h.actions(&[&head[..], b"a"].concat()),
        ["request 0 /u body=a ask", "body 0 a"]
    );
    assert!(
        h.http.request_clock().is_some(),
        "the body is still arriving"
    );
    assert_eq!(
        h.actions(b"bcGET /b HTTP/1.1\r\n\r\n"),
        ["body 0 bc", "end 0"]
    );
    assert_eq!(h.actions(b"GET /c HTTP/1.1\r\n\r\n"), ["request 1 /c"]);
}

#[test]
fn a_refused_upgrade_with_a_chunked_body() {
    let mut h = asking(Some(false));
    let input = b"POST /u HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: ws\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
    let acts = h.actions(input);
    assert_eq!(&acts[1..], ["body 0 abc", "end 0"]);
    assert!(matches!(h.http.reading, Reading::Head));
}

#[test]
fn a_refused_upgrade_that_closes_makes_later_bytes_an_error() {
    let mut h = asking(Some(false));
    h.actions(b"GET /u HTTP/1.1\r\nConnection: Upgrade, close\r\nUpgrade: ws\r\n\r\n");
    assert_eq!(h.http.keep_alive, KeepAlive::Closing);
    assert_eq!(
        h.actions(b"GET / HTTP/1.1\r\n\r\n"),
        ["error HPE_CLOSED_CONNECTION"]
    );
}

#[test]
fn an_unanswered_upgrade_drops_the_rest_of_the_read_and_upgrades_on_the_next_bytes() {
    // The callback threw: JS never answers, and node's request stays an upgrade.
    let mut h = asking(None);
    let input = [UPGRADE, b"rest"].concat();
    let (acts, used) = h.feed(&input);
    assert_eq!(acts, ["request 0 /u body=rest ask", "consume 4"]);
    assert_eq!(used, input.len());
    assert!(matches!(
        h.http.reading,
        Reading::Upgrade(Upgrading::Undecided)
    ));
    assert!(!h.http.is_upgraded());
    assert!(!h.http.decide_upgrade(true, false), "too late to answer");
    // requestTimeout still applies to it.
    assert!(matches!(h.http.request_clock(), Some((_, true))));
    assert!(h.http.mid_message());
    assert_eq!(h.actions(b"more"), ["raw more"]);
    assert!(h.http.is_upgraded());
    assert!(h.http.request_clock().is_none());
    assert_eq!(h.http.eof(true), Eof::Upgraded);
}

#[test]
fn an_unanswered_upgrade_ends_with_the_peer() {
    for half_open in [false, true] {
        let mut h = asking(None);
        h.actions(UPGRADE);
        assert_eq!(h.http.eof(half_open), Eof::End);
        assert_eq!(h.http.writing, Writing::EndAfterFlush);
    }
}

#[test]
fn an_answer_nobody_asked_for_changes_nothing() {
    let mut h = Harness::new();
    assert!(!h.http.decide_upgrade(true, false));
    h.actions(b"GET / HTTP/1.1\r\n\r\n");
    assert!(!h.http.decide_upgrade(true, false));
    assert!(matches!(h.http.reading, Reading::Head));
}

#[test]
fn connect_is_never_asked() {
    let mut h = asking(Some(false));
    h.connect = true;
    assert_eq!(
        h.actions(b"CONNECT a:443 HTTP/1.1\r\n\r\nx"),
        ["request 0 a:443 body=x"]
    );
    assert!(h.http.is_upgraded());
}

#[test]
fn plain_requests_are_not_asked() {
    let mut h = asking(Some(true));
    assert_eq!(
        h.actions(b"GET / HTTP/1.1\r\nUpgrade: ws\r\n\r\n"),
        ["request 0 /"],
        "Upgrade without Connection: upgrade is no upgrade request"
    );
}

#[test]
fn node26_an_upgrade_body_goes_through_the_request_then_the_rest_is_the_head() {
    let mut h = Harness::new();
    h.upgrade = true;
    h.upgrade_body = true;
    let head =
        b"POST /u HTTP/1.1\r\nUpgrade: x\r\nConnection: upgrade\r\nContent-Length: 5\r\n\r\n";
    // The body completes in the read that brought the head: one 'upgrade', after the body.
    let mut all = head.to_vec();
    all.extend_from_slice(b"helloEXTRA");
    assert_eq!(
        h.actions(&all),
        [
            "request 0 /u",
            "body 0 hello",
            "end 0",
            "upgrade 0 head=EXTRA"
        ]
    );
    assert!(h.http.is_upgraded());
    assert_eq!(h.actions(b"MORE"), ["raw MORE"]);

    // It does not: 'upgrade' when the read is used up, the rest after the body later.
    let mut h = Harness::new();
    h.upgrade = true;
    h.upgrade_body = true;
    let mut first = head.to_vec();
    first.extend_from_slice(b"hel");
    assert_eq!(
        h.actions(&first),
        ["request 0 /u", "body 0 hel", "upgrade 0 body still coming"]
    );
    assert!(!h.http.is_upgraded() && h.http.mid_message());
    assert_eq!(h.actions(b"l"), ["body 0 l"]);
    assert_eq!(
        h.actions(b"oEXTRA"),
        ["body 0 o", "end 0", "upgrade 0 head=EXTRA"]
    );
    assert_eq!(h.actions(b"MORE"), ["raw MORE"]);
}

#[test]
fn node26_a_chunked_upgrade_body_and_the_peer_ending_inside_it() {
    let mut h = Harness::new();
    h.upgrade = true;
    h.upgrade_body = true;
    let head = b"POST /u HTTP/1.1\r\nUpgrade: x\r\nConnection: upgrade\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n";
    assert_eq!(
        h.actions(head),
        [
            "request 0 /u",
            "body 0 hi",
            "consume 2",
            "upgrade 0 body still coming"
        ]
    );
    assert_eq!(h.actions(b"0\r\n\r\n"), ["end 0", "upgrade 0 head="]);
    let mut h2 = Harness::new();
    h2.upgrade = true;
    h2.upgrade_body = true;
    h2.actions(head);
    assert_eq!(h2.http.eof(false), Eof::Upgraded, "JS ends it");
}

#[test]
fn node26_an_accepted_upgrade_with_a_body_reads_it_first() {
    let mut h = Harness::new();
    h.ask = true;
    h.answer = Some(true);
    h.upgrade_body = true;
    assert_eq!(
        h.actions(b"POST /u HTTP/1.1\r\nUpgrade: x\r\nConnection: upgrade\r\nContent-Length: 2\r\n\r\nhiNEXT"),
        [
            "request 0 /u body=hiNEXT ask",
            "body 0 hi",
            "end 0",
            "upgrade 0 head=NEXT"
        ]
    );
}

#[test]
fn a_connection_not_read_is_active_only_while_output_waits() {
    let mut h = Harness::new();
    assert!(h.http.is_active(true), "being read");
    assert!(
        !h.http.is_active(false),
        "paused with nothing to write: as a socket after readStop"
    );
    h.actions(b"GET / HTTP/1.1\r\n\r\n");
    h.http.out.push(0, b"HTTP/1.1 200 OK\r\n\r\n".to_vec());
    h.http.response_done(0, false);
    h.http.out.confirm();
    assert!(h.http.is_active(false), "output waiting: a pending write");
}
