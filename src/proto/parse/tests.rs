use super::*;

/// The methods node's http.METHODS lists (the corpus and fuzz targets use the same table).
pub(crate) fn methods() -> Methods {
    crate::proto::sim::test_methods()
}

fn parse(b: &[u8]) -> Result<Option<RequestHead>, ParseError> {
    parse_request(b, &methods(), &Limits::default())
}

fn err(b: &[u8]) -> (&'static str, &'static str) {
    let e = parse(b).unwrap_err();
    (e.code, e.reason)
}

fn method_name(h: &RequestHead) -> &'static str {
    ["CONNECT", "GET", "POST", "OPTIONS", "SOURCE", "M-SEARCH"]
        .into_iter()
        .find(|m| methods().exact(m.as_bytes()).map(|i| i as u16) == Some(h.method))
        .unwrap_or("?")
}

#[test]
fn simple_get() {
    let b = b"GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\nrest";
    let h = parse(b).unwrap().unwrap();
    assert_eq!(method_name(&h), "GET");
    assert_eq!(&b[h.url.0..h.url.1], b"/a?b=1");
    assert_eq!(&b[h.headers.0..h.headers.1], b"Host: x\r\n");
    assert_eq!(h.head_len, b.len() - 4);
    assert_eq!(h.framing, Framing::None);
    assert!(h.flags & F_KEEP_ALIVE != 0 && h.flags & F_HOST != 0);
    assert!(h.flags & F_BODY_DONE != 0);
}

#[test]
fn partial_heads_need_more() {
    let full = b"POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\n";
    for n in 0..full.len() {
        assert_eq!(parse(&full[..n]), Ok(None), "prefix {n}");
    }
    let h = parse(full).unwrap().unwrap();
    assert_eq!(h.framing, Framing::Length(3));
}

#[test]
fn keep_alive_follows_llhttp() {
    let ka = |b: &[u8]| parse(b).unwrap().unwrap().flags & F_KEEP_ALIVE != 0;
    assert!(!ka(b"GET / HTTP/1.0\r\n\r\n"));
    assert!(ka(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
    // HTTP/1.0 persists with keep-alive even when close is there too.
    assert!(ka(
        b"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"
    ));
    assert!(!ka(b"GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n"));
    assert!(!ka(b"GET / HTTP/1.1\r\nProxy-Connection: close\r\n\r\n"));
    assert!(ka(b"GET / HTTP/1.1\r\nConnection: closex\r\n\r\n"));
    assert!(ka(b"GET /\r\nConnection: keep-alive\r\n\r\n"));
    assert!(!ka(b"GET / HTTP/2.0\r\n\r\n"));
}

#[test]
fn upgrade_and_connect() {
    let h = parse(b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
        .unwrap()
        .unwrap();
    assert_ne!(h.flags & F_UPGRADE, 0);
    // llhttp sets its upgrade flag only for a non-empty Upgrade value.
    let h = parse(b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade:\r\n\r\n")
        .unwrap()
        .unwrap();
    assert_eq!(h.flags & F_UPGRADE, 0);
    let b = b"CONNECT example.com:443 HTTP/1.1\r\n\r\n";
    let h = parse(b).unwrap().unwrap();
    assert_ne!(h.flags & F_CONNECT, 0);
    assert_eq!(&b[h.url.0..h.url.1], b"example.com:443");
}

#[test]
fn framing() {
    assert_eq!(
        err(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n").0,
        "HPE_UNEXPECTED_CONTENT_LENGTH"
    );
    assert_eq!(
        err(b"POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n").0,
        "HPE_INVALID_CONTENT_LENGTH"
    );
    assert_eq!(
        err(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n").1,
        "Invalid `Transfer-Encoding` header value"
    );
    let f = |b: &[u8]| parse(b).unwrap().unwrap();
    assert_ne!(
        f(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n").flags & F_INVALID_TE,
        0
    );
    assert_ne!(
        f(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\t\r\n\r\n").flags & F_INVALID_TE,
        0
    );
    assert_eq!(
        f(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked  \r\n\r\n").framing,
        Framing::Chunked
    );
    assert_eq!(
        f(b"POST / HTTP/1.1\r\nContent-Length: 007 \r\n\r\n").framing,
        Framing::Length(7)
    );
    assert_eq!(
        f(b"POST / HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n").framing,
        Framing::Length(u64::MAX)
    );
    assert_eq!(
        err(b"POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n").1,
        "Content-Length overflow"
    );
}

#[test]
fn request_line_errors() {
    assert_eq!(
        err(b"FOO / HTTP/1.1\r\n\r\n").1,
        "Invalid method encountered"
    );
    assert_eq!(
        err(b"GETX / HTTP/1.1\r\n\r\n").1,
        "Expected space after method"
    );
    assert_eq!(
        err(b"GET /\x01 HTTP/1.1\r\n\r\n").1,
        "Invalid char in url path"
    );
    assert_eq!(
        err(b"GET foo HTTP/1.1\r\n\r\n").1,
        "Invalid characters in url"
    );
    assert_eq!(err(b"GET / XTTP/1.1\r\n\r\n").0, "HPE_INVALID_CONSTANT");
    assert_eq!(err(b"GET / HTTP/1.9\r\n\r\n").0, "HPE_INVALID_VERSION");
    assert_eq!(
        err(b"GET / HTTP/1.1\nHost: x\r\n\r\n").0,
        "HPE_INVALID_VERSION"
    );
    assert_eq!(err(b"GET / HTTP/1.1\rHost: x\r\n\r\n").0, "HPE_STRICT");
    assert_eq!(
        err(b"DESCRIBE / HTTP/1.1\r\n\r\n").1,
        "Invalid method for HTTP/x.x request"
    );
    assert_eq!(
        err(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").0,
        "HPE_PAUSED_H2_UPGRADE"
    );
}

#[test]
fn field_errors() {
    assert_eq!(
        err(b"GET / HTTP/1.1\r\n Host: x\r\n\r\n").0,
        "HPE_UNEXPECTED_SPACE"
    );
    assert_eq!(
        err(b"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n").0,
        "HPE_LF_EXPECTED"
    );
    assert_eq!(err(b"GET / HTTP/1.1\r\nHost: x\n\r\n").0, "HPE_CR_EXPECTED");
    assert_eq!(
        err(b"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n").1,
        "Invalid header token"
    );
    assert_eq!(
        err(b"GET / HTTP/1.1\r\nContent-Length : 1\r\n\r\n").1,
        "Invalid header field char"
    );
    assert_eq!(
        err(b"GET / HTTP/1.1\r\nA: \x01\r\n\r\n").1,
        "Invalid header value char"
    );
    assert_eq!(
        err(b"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n").1,
        "Unexpected whitespace after header value"
    );
    assert_eq!(
        err(b"GET / HTTP/1.1\r\nA:\r\n c\r\n\r\n").1,
        "Invalid header value char"
    );
    assert_eq!(
        err(b"GET / HTTP/1.1\r\nA: b\r\n\n").1,
        "Invalid header field char"
    );
}

#[test]
fn header_overflow() {
    let mut b = b"GET / HTTP/1.1\r\nX: ".to_vec();
    b.extend(std::iter::repeat_n(b'a', 20_000));
    assert_eq!(parse(&b).unwrap_err().code, "HPE_HEADER_OVERFLOW");
}

#[test]
fn header_size_counts_url_names_and_values() {
    // node's test-http-max-http-headers: "/" + "Host" + "localhost" + "Agent" + "nod3"
    // + "X-CRASH" + value; a total of max - 1 passes, max fails.
    let max = 16 * 1024;
    let head = |fill: usize| {
        let mut b = b"GET / HTTP/1.1\r\nHost: localhost\r\nAgent: nod3\r\nX-CRASH: ".to_vec();
        b.extend(std::iter::repeat_n(b'a', fill));
        b.extend_from_slice(b"\r\n\r\n");
        b
    };
    let base = 1 + 4 + 9 + 5 + 4 + 7;
    let limits = Limits::new(max, Leniency::Strict);
    assert!(parse_request(&head(max - base - 1), &methods(), &limits)
        .unwrap()
        .is_some());
    assert_eq!(
        parse_request(&head(max - base), &methods(), &limits)
            .unwrap_err()
            .code,
        "HPE_HEADER_OVERFLOW"
    );
    // Without the end of the head yet, too; a CR at the end counts nothing.
    let partial = &head(max - base)[..];
    assert_eq!(
        parse_request(&partial[..partial.len() - 4], &methods(), &limits)
            .unwrap_err()
            .code,
        "HPE_HEADER_OVERFLOW"
    );
    let partial = &head(max - base - 1)[..];
    assert_eq!(
        parse_request(&partial[..partial.len() - 3], &methods(), &limits),
        Ok(None)
    );
}

#[test]
fn blanks_before_values_are_not_counted() {
    let mut b = b"GET / HTTP/1.1\r\nX:".to_vec();
    b.extend(std::iter::repeat_n(b' ', 100_000));
    b.extend_from_slice(b"v\r\n\r\n");
    assert!(parse(&b).unwrap().is_some());
}

fn parse_with(b: &[u8], leniency: Leniency) -> Result<Option<RequestHead>, ParseError> {
    parse_request(b, &methods(), &Limits::new(16 * 1024, leniency))
}

fn err_with(b: &[u8], leniency: Leniency) -> (&'static str, &'static str) {
    let e = parse_with(b, leniency).unwrap_err();
    (e.code, e.reason)
}

const LENIENT: [Leniency; 2] = [Leniency::Relaxed, Leniency::Insecure];

#[test]
fn lenient_accepts_control_chars_in_values() {
    let b = b"GET / HTTP/1.1\r\nContent-Type: text/te\x08t\r\n\r\n";
    assert!(parse(b).is_err());
    assert!(parse_with(b, Leniency::Insecure).unwrap().is_some());
}

#[test]
fn relaxed_values_take_every_byte_but_nul_cr_and_lf() {
    let value_char = ("HPE_INVALID_HEADER_TOKEN", "Invalid header value char");
    let ctl = (1..0x20u8)
        .chain([0x7f])
        .filter(|&c| !matches!(c, b'\t' | b'\r' | b'\n'));
    for c in ctl {
        // A whole line, and a value the field machine reads (its field not ended yet).
        let line = [&b"GET / HTTP/1.1\r\nX-Ctrl: value"[..], &[c], b"here\r\n"].concat();
        let head = [&line[..], b"\r\n"].concat();
        assert_eq!(err(&head), value_char, "{c:#x}");
        assert_eq!(err_with(&head, Leniency::Strict), value_char, "{c:#x}");
        for l in LENIENT {
            let h = parse_with(&head, l).unwrap().unwrap();
            assert_eq!(&head[h.headers.0..h.headers.1], &line[16..], "{c:#x} {l:?}");
            assert_eq!(parse_with(&line, l), Ok(None), "{c:#x} {l:?}");
            // The first value byte, and a value of control characters only.
            let first = [&b"GET / HTTP/1.1\r\nX:"[..], &[c, c], b"\r\n\r\n"].concat();
            assert!(parse_with(&first, l).unwrap().is_some(), "{c:#x} {l:?}");
        }
    }
    for l in LENIENT {
        let e = parse_with(b"GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", l).unwrap_err();
        assert_eq!((e.code, e.reason, e.at), (value_char.0, value_char.1, 20));
        assert_eq!(
            err_with(b"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", l).0,
            "HPE_LF_EXPECTED"
        );
        assert_eq!(
            err_with(b"GET / HTTP/1.1\r\nX: a\x01\n\r\n", l).0,
            "HPE_CR_EXPECTED"
        );
    }
}

#[test]
fn relaxed_values_are_all_that_is_lenient() {
    // llhttp's other lenient flags (node's kLenientAll) are not taken, in either mode.
    for l in LENIENT {
        for (head, code) in [
            (
                &b"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n"[..],
                "HPE_INVALID_HEADER_TOKEN",
            ),
            (b"GET / HTTP/1.1\nHost: x\r\n\r\n", "HPE_INVALID_VERSION"),
            (
                b"GET / HTTP/1.1\r\n Host: x\r\n\r\n",
                "HPE_UNEXPECTED_SPACE",
            ),
            (
                b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
                "HPE_INVALID_HEADER_TOKEN",
            ),
            (b"GET / HTTP/1.3\r\n\r\n", "HPE_INVALID_VERSION"),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                "HPE_INVALID_TRANSFER_ENCODING",
            ),
        ] {
            assert_eq!(
                err_with(head, l).0,
                code,
                "{l:?} {:?}",
                String::from_utf8_lossy(head)
            );
        }
    }
}

#[test]
fn insecure_lets_chunked_come_before_the_final_coding() {
    let twice =
        &b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"[..];
    let listed = &b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"[..];
    for head in [twice, listed] {
        for l in [Leniency::Strict, Leniency::Relaxed] {
            assert_eq!(
                err_with(head, l).0,
                "HPE_INVALID_TRANSFER_ENCODING",
                "{l:?}"
            );
        }
        let h = parse_with(head, Leniency::Insecure).unwrap().unwrap();
        assert_ne!(h.flags & F_CHUNKED, 0);
        assert_eq!(h.flags & F_INVALID_TE, 0);
    }
    // The final coding decides: chunked before gzip is not chunked framing.
    let h = parse_with(
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n",
        Leniency::Insecure,
    )
    .unwrap()
    .unwrap();
    assert_eq!(h.flags & F_CHUNKED, 0);
    assert_ne!(h.flags & F_INVALID_TE, 0);
}

#[test]
fn relaxed_control_characters_in_special_values() {
    let r = |b: &[u8]| parse_with(b, Leniency::Relaxed);
    // llhttp's Content-Length states take digits and blanks only.
    assert_eq!(
        err_with(
            b"POST / HTTP/1.1\r\nContent-Length: 1\x01\r\n\r\n",
            Leniency::Relaxed
        )
        .0,
        "HPE_INVALID_CONTENT_LENGTH"
    );
    // A Transfer-Encoding value goes on as a general one: chunked is not the final coding.
    for v in [
        &b"chunked\x01"[..],
        b"\x01, chunked",
        b"gzip\x01, chunked",
        b"chu\x7fnked",
    ] {
        let b = [
            &b"POST / HTTP/1.1\r\nTransfer-Encoding: "[..],
            v,
            b"\r\n\r\n",
        ]
        .concat();
        let h = r(&b).unwrap().unwrap();
        assert_eq!(h.flags & (F_INVALID_TE | F_CHUNKED), F_INVALID_TE, "{v:?}");
    }
    let h = r(b"POST / HTTP/1.1\r\nTransfer-Encoding: x\x01, chunked\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert_eq!(h.unwrap().unwrap().framing, Framing::Chunked);
    // Connection tokens count up to the one holding a control character.
    let flags = |v: &[u8], version: &[u8]| {
        let b = [
            &b"GET / HTTP/"[..],
            version,
            b"\r\nConnection: ",
            v,
            b"\r\n\r\n",
        ]
        .concat();
        r(&b).unwrap().unwrap().flags & (F_KEEP_ALIVE | F_CONN_CLOSE)
    };
    assert_eq!(flags(b"keep-alive, \x01", b"1.0"), F_KEEP_ALIVE);
    assert_eq!(flags(b"keep-alive\x01", b"1.0"), 0);
    assert_eq!(flags(b"\x01, keep-alive", b"1.0"), 0);
    assert_eq!(flags(b"x\x01, close", b"1.1"), F_KEEP_ALIVE);
    assert_eq!(flags(b"close, x\x01", b"1.1"), F_CONN_CLOSE);
    let h = r(b"GET / HTTP/1.1\r\nConnection: upgrade, \x01\r\nUpgrade: ws\r\n\r\n");
    assert_ne!(h.unwrap().unwrap().flags & F_UPGRADE, 0);
}

#[test]
fn relaxed_trailer_values() {
    let trailers = |l: Leniency| {
        HeadParser::for_trailers()
            .parse_trailers(b"X: a\x01b\r\n\r\n", &Limits::new(16 * 1024, l))
            .map(|t| t.map(|t| t.len))
    };
    assert_eq!(
        trailers(Leniency::Strict).unwrap_err().code,
        "HPE_INVALID_HEADER_TOKEN"
    );
    assert_eq!(trailers(Leniency::Relaxed), Ok(Some(10)));
}

#[test]
fn invalid_method_position() {
    let e = parse(b"Oopsie-doopsie\r\n").unwrap_err();
    assert_eq!((e.code, e.at), ("HPE_INVALID_METHOD", 1));
}

#[test]
fn many_headers() {
    let mut b = b"GET / HTTP/1.1\r\n".to_vec();
    for i in 0..1000 {
        b.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    b.extend_from_slice(b"\r\n");
    assert!(parse(&b).unwrap().is_some());
    b.splice(16..16, b"Y: 1\r\n".iter().copied());
    assert_eq!(parse(&b).unwrap_err().code, "HPE_HEADER_OVERFLOW");
}

#[test]
fn other_versions() {
    let h = parse(b"GET /\r\n\r\n").unwrap().unwrap();
    assert_eq!((h.major, h.minor), (0, 9));
    assert_eq!(h.flags & F_KEEP_ALIVE, 0);
    let h = parse(b"GET / HTTP/2.0\r\nHost: x\r\n\r\n")
        .unwrap()
        .unwrap();
    assert_eq!((h.major, h.minor), (2, 0));
    assert_eq!((h.flags >> VERSION_SHIFT) & 0xff, 2);
    let h = parse(b"GET / RTSP/1.0\r\n\r\n").unwrap().unwrap();
    assert_eq!((h.major, h.minor), (1, 0));
    let h = parse(b"SOURCE / ICE/1.0\r\n\r\n").unwrap().unwrap();
    assert_eq!(method_name(&h), "SOURCE");
}

#[test]
fn leading_empty_lines_are_skipped() {
    let b = b"\r\n\n\rGET / HTTP/1.1\r\n\r\n";
    let h = parse(b).unwrap().unwrap();
    assert_eq!(&b[h.url.0..h.url.1], b"/");
    assert_eq!(h.head_len, b.len());
}

#[test]
fn expect() {
    let f = |v: &str| {
        let b = format!("POST / HTTP/1.1\r\nExpect: {v}\r\n\r\n");
        parse(b.as_bytes()).unwrap().unwrap().flags & (F_EXPECT_CONTINUE | F_EXPECT_OTHER)
    };
    assert_eq!(f("100-continue"), F_EXPECT_CONTINUE);
    assert_eq!(f("100-Continue, foo"), F_EXPECT_CONTINUE);
    assert_eq!(f("foo,100-continue"), F_EXPECT_CONTINUE);
    assert_eq!(f("-100-continue;"), F_EXPECT_CONTINUE);
    assert_eq!(f("x100-continue"), F_EXPECT_OTHER);
    assert_eq!(f("100-continue_"), F_EXPECT_OTHER);
    assert_eq!(f(""), F_EXPECT_OTHER);
}

#[test]
fn fewer_bytes_than_last_time_start_over() {
    let m = methods();
    let l = Limits::default();
    let mut p = HeadParser::default();
    assert_eq!(p.parse(b"GET /abc HTTP/1.1\r\nHo", &m, &l), Ok(None));
    let h = p.parse(b"GET / HTTP/1.1\r\n\r\n", &m, &l).unwrap().unwrap();
    assert_eq!(h.head_len, 18);
}

#[test]
fn compact_drops_skipped_bytes() {
    let m = methods();
    let l = Limits::default();
    let mut p = HeadParser::default();
    let mut buf = bytes::BytesMut::from(&b"\r\n\r\nGET   /x   HTTP/1.1\r\nX-A:     "[..]);
    assert_eq!(p.parse(&buf, &m, &l), Ok(None));
    p.compact(&mut buf);
    assert_eq!(&buf[..], b"GET /x HTTP/1.1\r\nX-A:");
    buf.extend_from_slice(b"   v  \r\nHost:  h\r\n\r\n");
    let h = p.parse(&buf, &m, &l).unwrap().unwrap();
    assert_eq!(&buf[h.url.0..h.url.1], b"/x");
    assert_eq!(
        &buf[h.headers.0..h.headers.1],
        b"X-A:   v  \r\nHost:  h\r\n"
    );
    assert_eq!(h.head_len, buf.len());
}
