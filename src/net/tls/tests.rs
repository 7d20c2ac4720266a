//! The TLS session against an in-memory rustls client, fed byte slices: no socket.

use super::*;
use crate::net::test_support::{
    client, client_auth_config, client_config, fixture, hello_naming, spec,
};
use crate::net::tls_config::{TlsSpec, TLS13};
use crate::net::tls_scope::keylog_line;
use rustls::{ClientConfig, ClientConnection};

/// What the session gave for the input it had.
#[derive(Default)]
struct Served {
    plain: Vec<u8>,
    done: bool,
    keylog: Vec<Vec<u8>>,
    hello: bool,
    failure: Option<TlsFailure>,
    eof: bool,
    /// The bytes read of a connection handed to node's TLS.
    handed_off: Option<Vec<u8>>,
}

/// Feeds `input` (what the client sent) to the session and takes what it gives until it
/// wants more than there is (`closed`: the input ends after it), an event stops it, or JS is
/// to answer.
fn serve(s: &mut TlsSession, input: &mut &[u8], closed: bool) -> Served {
    let mut out = Served::default();
    let mut buf = [0u8; 1024];
    loop {
        match s.next(&mut buf).unwrap() {
            Next::Bytes(n) => out.plain.extend_from_slice(&buf[..n]),
            Next::Event => match s.take_event().expect("the event next announced") {
                TlsEvent::HandshakeDone => out.done = true,
                TlsEvent::Keylog(lines) => out.keylog.extend(lines),
                TlsEvent::ClientHello => {
                    out.hello = true;
                    return out;
                }
                TlsEvent::Failed(f) => {
                    out.failure = Some(f);
                    return out;
                }
                TlsEvent::HandOff => {
                    out.handed_off = Some(s.take_read());
                    return out;
                }
            },
            Next::Wait => return out,
            Next::End => {
                out.eof = true;
                return out;
            }
            Next::Empty if input.is_empty() && !closed => return out,
            Next::Empty => {
                s.read_tls(input).unwrap();
            }
        }
    }
}

/// What the session has to send.
fn output(s: &mut TlsSession) -> Vec<u8> {
    let mut out = Vec::new();
    while s.wants_write() {
        s.write_tls(&mut out).unwrap();
    }
    out
}

/// A server session and a client, with what the client sent that the session did not take.
struct Pair {
    s: TlsSession,
    c: ClientConnection,
    to_server: Vec<u8>,
}

impl Pair {
    fn new(s: TlsSession, c: ClientConnection) -> Pair {
        Pair {
            s,
            c,
            to_server: Vec::new(),
        }
    }

    /// One exchange: the client's output to the session, what it gives, its output to the
    /// client.
    fn pump(&mut self) -> Served {
        while self.c.wants_write() {
            self.c.write_tls(&mut self.to_server).unwrap();
        }
        let mut input = &self.to_server[..];
        let served = serve(&mut self.s, &mut input, false);
        let used = self.to_server.len() - input.len();
        self.to_server.drain(..used);
        let back = output(&mut self.s);
        let mut rd = &back[..];
        while !rd.is_empty() {
            if self.c.read_tls(&mut rd).is_err() || self.c.process_new_packets().is_err() {
                break;
            }
        }
        served
    }

    /// Runs the handshake; returns the key-log lines it made.
    fn handshake(&mut self) -> Vec<Vec<u8>> {
        let mut announced = false;
        let mut keylog = Vec::new();
        for _ in 0..10 {
            let got = self.pump();
            assert!(got.failure.is_none(), "{:?}", got.failure);
            keylog.extend(got.keylog);
            announced |= got.done;
            if announced && !self.c.is_handshaking() {
                self.pump();
                return keylog;
            }
        }
        panic!("no handshake");
    }
}

fn session(spec: &TlsSpec) -> TlsSession {
    TlsSession::new(Arc::new(TlsContext::new(spec).unwrap())).unwrap()
}

/// A server session and a TLS 1.3 client, past their handshake.
fn established(spec: &TlsSpec) -> Pair {
    let mut p = Pair::new(
        session(spec),
        client(client_config(&[&rustls::version::TLS13])),
    );
    p.handshake();
    p
}

#[test]
fn handshake_then_request_and_response() {
    let mut p = established(&spec());
    let info = p.s.session_info();
    assert_eq!(info.protocol, "TLSv1.3");
    assert!(info.cipher.0.starts_with("TLS_"));
    assert_eq!(info.servername.as_deref(), Some("localhost"));
    assert!(info.authorization_error.is_none());
    p.c.writer().write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let got = p.pump();
    assert_eq!(got.plain, b"GET / HTTP/1.1\r\n\r\n");
    assert!(!got.done && got.failure.is_none() && !got.eof);
    let head = [IoSlice::new(b"HTTP/1.1 200 OK\r\n"), IoSlice::new(b"\r\n")];
    assert_eq!(p.s.write_plain(&head).unwrap(), 19);
    assert!(p.s.wants_write());
    p.pump();
    assert!(!p.s.wants_write());
    let mut back = vec![0; 64];
    let n = p.c.reader().read(&mut back).unwrap();
    assert_eq!(&back[..n], b"HTTP/1.1 200 OK\r\n\r\n");
    // close_notify: the client sees a clean close; the client's, the session's end.
    p.s.close_notify();
    p.pump();
    assert_eq!(p.c.reader().read(&mut back).unwrap(), 0);
    p.c.send_close_notify();
    assert!(p.pump().eof);
}

/// Events come before the plaintext that follows them, each once; the handshake is done once.
#[test]
fn the_handshake_is_announced_once_before_any_plaintext() {
    let mut p = Pair::new(
        session(&spec()),
        client(client_config(&[&rustls::version::TLS13])),
    );
    p.c.writer().write_all(b"early").unwrap();
    let mut done = 0;
    let mut plain = Vec::new();
    for _ in 0..10 {
        let got = p.pump();
        done += got.done as usize;
        assert!(done > 0 || got.plain.is_empty());
        plain.extend(got.plain);
    }
    assert_eq!(done, 1);
    assert_eq!(plain, b"early");
    assert_eq!(p.s.take_event(), None);
}

#[test]
fn tls12_and_ecdsa_pair_chosen_by_the_client() {
    let mut spec = spec();
    spec.pairs.push((
        fixture("server-ecdsa-cert.pem"),
        fixture("server-ecdsa-key.pem"),
    ));
    // An ECDSA-only client gets the ECDSA pair.
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites.retain(|cs| {
        matches!(
            cs.suite(),
            rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
        )
    });
    let cfg = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_root_certificates(crate::net::test_support::roots())
        .with_no_client_auth();
    let mut p = Pair::new(session(&spec), client(cfg));
    p.handshake();
    let info = p.s.session_info();
    assert_eq!(info.protocol, "TLSv1.2");
    assert_eq!(info.cipher.0, "ECDHE-ECDSA-AES128-GCM-SHA256");
}

#[test]
fn plain_http_client_is_an_http_request_error() {
    let mut s = session(&spec());
    let got = serve(
        &mut s,
        &mut &b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..],
        false,
    );
    assert_eq!(
        got.failure.expect("a TLS failure").code,
        "ERR_SSL_HTTP_REQUEST"
    );
    // Not TLS: OpenSSL sends no alert.
    assert!(output(&mut s).is_empty());
    let mut s = session(&spec());
    let got = serve(&mut s, &mut &b"\x00\x01\x02\x03\x04\x05"[..], false);
    assert_eq!(got.failure.unwrap().code, "ERR_SSL_WRONG_VERSION_NUMBER");
}

/// A handshake record rustls refuses without an alert of its own gets OpenSSL's
/// unexpected_message, in the clear.
#[test]
fn a_malformed_handshake_gets_an_unexpected_message_alert() {
    let mut s = session(&spec());
    // A handshake record whose message says it is longer than rustls takes.
    let record = [0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0xff, 0xff, 0xff];
    let got = serve(&mut s, &mut &record[..], false);
    assert!(got.failure.is_some());
    let out = output(&mut s);
    assert!(
        out.starts_with(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02]),
        "{out:?}"
    );
}

#[test]
fn hang_up_mid_handshake() {
    let mut p = Pair::new(
        session(&spec()),
        client(client_config(&[&rustls::version::TLS13])),
    );
    let got = p.pump();
    assert!(!got.done && got.failure.is_none());
    // The input ends before the client's Finished.
    assert_eq!(serve(&mut p.s, &mut &[][..], true).failure, Some(HANG_UP));
}

#[test]
fn client_certificates_are_checked_after_the_handshake() {
    let mut spec = spec();
    spec.request_cert = true;
    spec.reject_unauthorized = false;
    spec.ca = vec![fixture("ca-cert.pem")];
    for (cert, key, want) in [
        ("client-cert.pem", "client-key.pem", None),
        (
            "self-signed-cert.pem",
            "self-signed-key.pem",
            Some("DEPTH_ZERO_SELF_SIGNED_CERT"),
        ),
    ] {
        let mut p = Pair::new(session(&spec), client(client_auth_config(cert, key)));
        p.handshake();
        let info = p.s.session_info();
        assert_eq!(info.authorization_error, want, "{cert}");
        assert_eq!(info.peer_chain.len(), 1);
        assert!(!info.reject);
    }
    // Without a certificate: OpenSSL's result node keeps.
    let p = established(&spec);
    assert_eq!(
        p.s.session_info().authorization_error,
        Some("UNABLE_TO_GET_ISSUER_CERT")
    );
    // rejectUnauthorized: the handshake completes, and the connection is to be closed.
    spec.reject_unauthorized = true;
    let mut p = Pair::new(
        session(&spec),
        client(client_auth_config(
            "self-signed-cert.pem",
            "self-signed-key.pem",
        )),
    );
    p.handshake();
    assert!(p.s.session_info().reject);
}

#[test]
fn only_tls12_and_13() {
    let mut only13 = spec();
    only13.min_version = TLS13;
    let mut p = Pair::new(
        session(&only13),
        client(client_config(&[&rustls::version::TLS12])),
    );
    let got = p.pump();
    assert_eq!(got.failure.unwrap().code, "ERR_SSL_UNSUPPORTED_PROTOCOL");
}

#[test]
fn mismatched_key_is_refused() {
    let mut spec = spec();
    spec.pairs = vec![(
        fixture("server-rsa-cert.pem"),
        fixture("server-ecdsa-key.pem"),
    )];
    assert_eq!(
        TlsContext::new(&spec).err().as_deref(),
        Some("key values mismatch")
    );
}

#[test]
fn alpn_and_sni_contexts() {
    let mut spec = spec();
    spec.alpn = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let ctx = Arc::new(TlsContext::new(&spec).unwrap());
    let mut other = self::spec();
    other.pairs = vec![(
        fixture("server-ecdsa-cert.pem"),
        fixture("server-ecdsa-key.pem"),
    )];
    ctx.add_context("local*", false, &TlsContext::new(&other).unwrap());
    let mut cfg = client_config(&[&rustls::version::TLS12]);
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    let mut p = Pair::new(TlsSession::new(ctx).unwrap(), client(cfg));
    p.handshake();
    let info = p.s.session_info();
    assert_eq!(info.alpn.as_deref(), Some(&b"http/1.1"[..]));
    assert!(
        info.cipher.0.starts_with("ECDHE-ECDSA"),
        "{}",
        info.cipher.0
    );
}

#[test]
fn keylog_lines_of_a_session_that_logs() {
    assert_eq!(
        keylog_line("CLIENT_RANDOM", &[0, 0xab], &[0x10, 0xff]),
        b"CLIENT_RANDOM 00ab 10ff\n"
    );
    for (version, labels) in [
        (&rustls::version::TLS12, &["CLIENT_RANDOM"][..]),
        (
            &rustls::version::TLS13,
            &[
                "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
                "CLIENT_TRAFFIC_SECRET_0",
                "EXPORTER_SECRET",
                "SERVER_HANDSHAKE_TRAFFIC_SECRET",
                "SERVER_TRAFFIC_SECRET_0",
            ][..],
        ),
    ] {
        let mut s = session(&spec());
        s.set_keylog(true);
        // Another session of the same context that does not log sees none of them.
        let quiet = TlsSession::new(s.ctx.clone()).unwrap();
        let mut p = Pair::new(s, client(client_config(&[version])));
        let lines = p.handshake();
        let mut q = Pair::new(quiet, client(client_config(&[version])));
        assert!(q.handshake().is_empty());
        let mut got: Vec<String> = lines
            .iter()
            .map(|l| {
                String::from_utf8_lossy(l)
                    .split(' ')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        got.sort();
        assert_eq!(got, labels);
        assert!(lines.iter().all(|l| l.ends_with(b"\n")));
    }
}

#[test]
fn sni_callback_chooses_the_certificate_after_the_client_hello() {
    let ctx = Arc::new(TlsContext::new(&spec()).unwrap());
    let mut other = spec();
    other.pairs = vec![(
        fixture("server-ecdsa-cert.pem"),
        fixture("server-ecdsa-key.pem"),
    )];
    let other = TlsContext::new(&other).unwrap();
    for answer in [Some(&other), None] {
        let mut s = TlsSession::new(ctx.clone()).unwrap();
        s.ask_sni(true, false);
        let mut p = Pair::new(s, client(client_config(&[&rustls::version::TLS12])));
        assert!(p.pump().hello);
        assert_eq!(p.s.sni_name(), Some("localhost"));
        // Until the answer the handshake waits, whatever arrives.
        let mut buf = [0u8; 64];
        assert_eq!(p.s.next(&mut buf).unwrap(), Next::Wait);
        let e = p.s.read_tls(&mut &b"\x16\x03\x03"[..]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::WouldBlock);
        p.s.answer_sni(answer, AlpnChoice::Config);
        assert_eq!(p.s.sni_name(), None);
        // The ServerHello waits to be sent.
        assert!(p.s.wants_write());
        p.handshake();
        let kind = if answer.is_some() {
            "ECDHE-ECDSA"
        } else {
            "ECDHE-RSA"
        };
        let info = p.s.session_info();
        assert!(info.cipher.0.starts_with(kind), "{}", info.cipher.0);
        assert_eq!(info.servername.as_deref(), Some("localhost"));
    }
}

#[test]
fn sni_callback_with_a_plain_http_client() {
    let mut s = session(&spec());
    s.ask_sni(true, false);
    let got = serve(
        &mut s,
        &mut &b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..],
        false,
    );
    assert_eq!(got.failure.unwrap().code, "ERR_SSL_HTTP_REQUEST");
}

/// A record that does not open after the handshake is OpenSSL's error for its version: the SSL
/// library's for TLS 1.3, OpenSSL 3's AES-GCM provider's for TLS 1.2 (as node reports them).
#[test]
fn a_record_that_does_not_open_names_openssl_s_error_per_version() {
    for (version, code, message) in [
        (
            &rustls::version::TLS13,
            "ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC",
            "error:0A000119:SSL routines::decryption failed or bad record mac",
        ),
        (
            &rustls::version::TLS12,
            "ERR_SSL_CIPHER_OPERATION_FAILED",
            "error:1C800066:Provider routines::cipher operation failed",
        ),
    ] {
        let mut p = Pair::new(session(&spec()), client(client_config(&[version])));
        p.handshake();
        let mut record = vec![23, 3, 3, 0, 60];
        record.extend_from_slice(&[7; 60]);
        p.to_server.extend_from_slice(&record);
        let failure = p.pump().failure.expect("the record fails");
        assert_eq!(failure.code, code);
        assert_eq!(failure.to_string(), message);
    }
}

#[test]
fn a_name_rustls_refuses_hands_every_byte_read_to_node() {
    for ask in [false, true] {
        let hello = hello_naming(b"sni.00000");
        let mut s = session(&spec());
        if ask {
            s.ask_sni(true, false);
        }
        // The hello in two reads: nothing is decided on its first part.
        let (a, b) = hello.split_at(40);
        let got = serve(&mut s, &mut &a[..], false);
        assert!(got.handed_off.is_none() && got.failure.is_none());
        let got = serve(&mut s, &mut &b[..], false);
        assert_eq!(got.handed_off.as_deref(), Some(&hello[..]), "ask {ask}");
        // Nothing was answered, and nothing more is taken.
        assert!(!s.wants_write());
        let e = s.read_tls(&mut &b"\x16"[..]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::WouldBlock);
    }
}

#[test]
fn the_server_name_as_sent() {
    // An IP literal (rustls: no name) and capitals (rustls: lowercased), as node gives them.
    for (name, sent) in [
        (&b"127.0.0.1"[..], "127.0.0.1"),
        (b"LocalHost", "LocalHost"),
    ] {
        for ask in [false, true] {
            let mut s = session(&spec());
            if ask {
                s.ask_sni(true, false);
            }
            let mut p = Pair::new(s, client(client_config(&[&rustls::version::TLS13])));
            while p.c.wants_write() {
                p.c.write_tls(&mut p.to_server).unwrap();
            }
            let hello = hello_naming(name);
            // The hello the client made, with its name replaced (the handshake goes on
            // with the client's own transcript only when the name is unchanged).
            let got = serve(&mut p.s, &mut &hello[..], false);
            assert!(got.failure.is_none(), "{:?}", got.failure);
            if ask {
                assert!(got.hello);
                assert_eq!(p.s.sni_name(), Some(sent));
                p.s.answer_sni(None, AlpnChoice::Config);
            }
            assert!(p.s.wants_write(), "the ServerHello for {sent}");
        }
    }
}
