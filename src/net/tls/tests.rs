//! The TLS transport against an in-memory rustls client over a pipe that blocks like a
//! non-blocking socket.

use super::*;
use crate::net::tls_config::{TlsSpec, TLS12, TLS13};
use crate::net::tls_scope::keylog_line;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};
use std::collections::VecDeque;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/test/fixtures/tls/");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIX}{name}")).unwrap()
}

/// One direction each way; `cap` bounds what the server's side may have unread by the client.
#[derive(Default)]
struct Pipe {
    to_server: VecDeque<u8>,
    to_client: VecDeque<u8>,
    cap: usize,
    closed: bool,
    /// Reads the server made from its end.
    reads: usize,
}

struct ServerEnd<'a>(&'a std::cell::RefCell<Pipe>);

impl Read for ServerEnd<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut p = self.0.borrow_mut();
        p.reads += 1;
        if p.to_server.is_empty() {
            return if p.closed {
                Ok(0)
            } else {
                Err(ErrorKind::WouldBlock.into())
            };
        }
        let n = buf.len().min(p.to_server.len());
        for b in buf.iter_mut().take(n) {
            *b = p.to_server.pop_front().unwrap();
        }
        Ok(n)
    }
}

impl Write for ServerEnd<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut p = self.0.borrow_mut();
        let room = p.cap.saturating_sub(p.to_client.len());
        if room == 0 {
            return Err(ErrorKind::WouldBlock.into());
        }
        let n = room.min(buf.len());
        p.to_client.extend(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn spec() -> TlsSpec {
    TlsSpec {
        pairs: vec![(
            fixture("server-rsa-cert.pem"),
            fixture("server-rsa-key.pem"),
        )],
        min_version: TLS12,
        max_version: TLS13,
        tickets: true,
        reject_unauthorized: true,
        ..TlsSpec::default()
    }
}

fn client_config(versions: &[&'static rustls::SupportedProtocolVersion]) -> ClientConfig {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(&fixture("ca-cert.pem")).unwrap())
        .unwrap();
    ClientConfig::builder_with_protocol_versions(versions)
        .with_root_certificates(roots)
        .with_no_client_auth()
}

fn client(cfg: ClientConfig) -> ClientConnection {
    ClientConnection::new(Arc::new(cfg), ServerName::try_from("localhost").unwrap()).unwrap()
}

/// Moves the client's output into the pipe and the pipe's output into the client.
fn pump_client(c: &mut ClientConnection, pipe: &std::cell::RefCell<Pipe>) {
    let mut out = Vec::new();
    while c.wants_write() {
        c.write_tls(&mut out).unwrap();
    }
    pipe.borrow_mut().to_server.extend(out);
    let bytes: Vec<u8> = pipe.borrow_mut().to_client.drain(..).collect();
    if !bytes.is_empty() {
        let mut rd = &bytes[..];
        while !rd.is_empty() {
            // A full plaintext buffer: the rest waits in the pipe until the client reads.
            if c.read_tls(&mut rd).is_err() {
                break;
            }
            c.process_new_packets().unwrap();
        }
        let mut p = pipe.borrow_mut();
        for &b in rd.iter().rev() {
            p.to_client.push_front(b);
        }
    }
}

thread_local! {
    /// The key-log lines `server_read` took.
    static TAKEN: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Reads the server until it would block; returns (plaintext, handshake announced, the
/// session's failure, end of input).
fn server_read(s: &mut TlsSession<ServerEnd<'_>>) -> (Vec<u8>, bool, Option<TlsFailure>, bool) {
    let mut got = Vec::new();
    let mut done = false;
    let mut buf = [0u8; 1024];
    loop {
        match s.read_input(&mut buf) {
            Ok(Input::Bytes(0)) => return (got, done, None, true),
            Ok(Input::Bytes(n)) => got.extend_from_slice(&buf[..n]),
            Ok(Input::HandshakeDone) => done = true,
            // Key-log lines are taken as the reactor takes them.
            Ok(Input::Keylog) => {
                let lines = s.take_keylog();
                TAKEN.with(|t| t.borrow_mut().extend(lines));
            }
            Ok(Input::ClientHello) => panic!("no SNICallback asked"),
            Ok(Input::Failed(f)) => return (got, done, Some(f), false),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return (got, done, None, false),
            Err(e) => panic!("{e}"),
        }
    }
}

/// The plaintext one read gives.
fn plain(s: &mut TlsSession<ServerEnd<'_>>, buf: &mut [u8]) -> io::Result<usize> {
    match s.read_input(buf)? {
        Input::Bytes(n) => Ok(n),
        other => panic!("{other:?}"),
    }
}

fn handshake(
    s: &mut TlsSession<ServerEnd<'_>>,
    c: &mut ClientConnection,
    pipe: &std::cell::RefCell<Pipe>,
) {
    let mut announced = false;
    for _ in 0..10 {
        pump_client(c, pipe);
        let (_, done, err, _) = server_read(s);
        assert!(err.is_none(), "{err:?}");
        announced |= done;
        if announced && !c.is_handshaking() {
            pump_client(c, pipe);
            return;
        }
    }
    panic!("no handshake");
}

fn session<'a>(pipe: &'a std::cell::RefCell<Pipe>, spec: &TlsSpec) -> TlsSession<ServerEnd<'a>> {
    let ctx = Arc::new(TlsContext::new(spec).unwrap());
    TlsSession::new(ServerEnd(pipe), ctx).unwrap()
}

/// A server session over `pipe` and a TLS 1.3 client, past their handshake.
fn established<'a>(
    pipe: &'a std::cell::RefCell<Pipe>,
    spec: &TlsSpec,
) -> (TlsSession<ServerEnd<'a>>, ClientConnection) {
    let mut s = session(pipe, spec);
    let mut c = client(client_config(&[&rustls::version::TLS13]));
    handshake(&mut s, &mut c, pipe);
    (s, c)
}

fn pipe(cap: usize) -> std::cell::RefCell<Pipe> {
    std::cell::RefCell::new(Pipe {
        cap,
        ..Pipe::default()
    })
}

#[test]
fn handshake_then_request_and_response() {
    let pipe = pipe(1 << 20);
    let (mut s, mut c) = established(&pipe, &spec());
    let info = s.session_info();
    assert_eq!(info.protocol, "TLSv1.3");
    assert!(info.cipher.0.starts_with("TLS_"));
    assert_eq!(info.servername.as_deref(), Some("localhost"));
    assert!(info.authorization_error.is_none());
    c.writer().write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    pump_client(&mut c, &pipe);
    let (got, done, err, eof) = server_read(&mut s);
    assert_eq!(got, b"GET / HTTP/1.1\r\n\r\n");
    assert!(!done && err.is_none() && !eof);
    assert_eq!(s.write(b"HTTP/1.1 200 OK\r\n\r\n").unwrap(), 19);
    assert!(!s.wants_write());
    pump_client(&mut c, &pipe);
    let mut back = vec![0; 64];
    let n = c.reader().read(&mut back).unwrap();
    assert_eq!(&back[..n], b"HTTP/1.1 200 OK\r\n\r\n");
    // close_notify then the socket's end: the client sees a clean close.
    s.close_notify();
    pump_client(&mut c, &pipe);
    assert_eq!(c.reader().read(&mut back).unwrap(), 0);
}

/// A request that came whole in a short socket read is returned without reading the socket
/// again (the plain transport's one recv per request; the reactor reads again when the event
/// said the peer closed).
#[test]
fn one_socket_read_per_request() {
    let pipe = pipe(1 << 20);
    let (mut s, mut c) = established(&pipe, &spec());
    c.writer().write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    pump_client(&mut c, &pipe);
    let before = pipe.borrow().reads;
    let mut buf = [0u8; 4096];
    let n = plain(&mut s, &mut buf).unwrap();
    assert_eq!(&buf[..n], b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(pipe.borrow().reads - before, 1);
    // Nothing more: the next read meets the empty socket (and says so).
    assert_eq!(
        plain(&mut s, &mut buf).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
}

#[test]
fn tls12_and_ecdsa_pair_chosen_by_the_client() {
    let mut spec = spec();
    spec.pairs.push((
        fixture("server-ecdsa-cert.pem"),
        fixture("server-ecdsa-key.pem"),
    ));
    let pipe = pipe(1 << 20);
    let mut s = session(&pipe, &spec);
    let mut cfg = client_config(&[&rustls::version::TLS12]);
    // An ECDSA-only client gets the ECDSA pair.
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites.retain(|cs| {
        matches!(
            cs.suite(),
            rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
        )
    });
    cfg = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_root_certificates(cfg.clone_roots())
        .with_no_client_auth();
    let mut c = client(cfg);
    handshake(&mut s, &mut c, &pipe);
    let info = s.session_info();
    assert_eq!(info.protocol, "TLSv1.2");
    assert_eq!(info.cipher.0, "ECDHE-ECDSA-AES128-GCM-SHA256");
}

trait CloneRoots {
    fn clone_roots(&self) -> RootCertStore;
}

impl CloneRoots for ClientConfig {
    fn clone_roots(&self) -> RootCertStore {
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(&fixture("ca-cert.pem")).unwrap())
            .unwrap();
        roots
    }
}

#[test]
fn plain_http_client_is_an_http_request_error() {
    let pipe = pipe(1 << 20);
    let mut s = session(&pipe, &spec());
    pipe.borrow_mut()
        .to_server
        .extend(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let (_, _, err, _) = server_read(&mut s);
    let f = err.expect("a TLS failure");
    assert_eq!(f.code, "ERR_SSL_HTTP_REQUEST");
    let pipe2 = self::pipe(1 << 20);
    let mut s = session(&pipe2, &spec());
    pipe2
        .borrow_mut()
        .to_server
        .extend(b"\x00\x01\x02\x03\x04\x05");
    let (_, _, err, _) = server_read(&mut s);
    assert_eq!(err.unwrap().code, "ERR_SSL_WRONG_VERSION_NUMBER");
}

#[test]
fn hang_up_mid_handshake() {
    let pipe = pipe(1 << 20);
    let mut s = session(&pipe, &spec());
    let mut c = client(client_config(&[&rustls::version::TLS13]));
    pump_client(&mut c, &pipe);
    let (_, done, err, _) = server_read(&mut s);
    assert!(!done && err.is_none());
    pipe.borrow_mut().closed = true;
    let (_, _, err, _) = server_read(&mut s);
    assert_eq!(err.unwrap(), HANG_UP);
}

#[test]
fn output_is_bounded_and_pending_ciphertext_is_reported() {
    let pipe = pipe(1 << 20);
    let (mut s, mut c) = established(&pipe, &spec());
    // The peer stops reading: the socket takes 1000 bytes more, rustls at most its limit.
    {
        let mut p = pipe.borrow_mut();
        p.cap = p.to_client.len() + 1000;
    }
    let chunk = vec![b'x'; 16 * 1024];
    let mut taken = 0;
    loop {
        match s.write(&chunk) {
            Ok(n) => taken += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("{e}"),
        }
        assert!(taken < 4 * BUFFER_LIMIT, "unbounded");
    }
    assert!(taken <= BUFFER_LIMIT + chunk.len());
    assert!(s.wants_write());
    assert_eq!(s.write_pending().unwrap_err().kind(), ErrorKind::WouldBlock);
    // The peer reads: everything goes, and it is what was written.
    let mut got = 0;
    for _ in 0..10_000 {
        pipe.borrow_mut().cap = usize::MAX;
        match s.write_pending() {
            Ok(()) => {}
            Err(e) => panic!("{e}"),
        }
        pump_client(&mut c, &pipe);
        let mut buf = vec![0; 64 * 1024];
        while let Ok(n) = c.reader().read(&mut buf) {
            if n == 0 {
                break;
            }
            assert!(buf[..n].iter().all(|&b| b == b'x'));
            got += n;
        }
        if !s.wants_write() && pipe.borrow().to_client.is_empty() {
            break;
        }
    }
    assert_eq!(got, taken);
}

#[test]
fn a_large_request_is_read_whole_before_blocking() {
    let pipe = pipe(1 << 20);
    let (mut s, mut c) = established(&pipe, &spec());
    let body = vec![b'y'; 200 * 1024];
    let mut sent = 0;
    while sent < body.len() {
        sent += c.writer().write(&body[sent..]).unwrap();
        pump_client(&mut c, &pipe);
    }
    // One read fills the buffer it is given; what follows is read by the next ones, and the
    // socket is drained before a read reports it would block.
    let mut buf = vec![0; 64 * 1024];
    let mut got = 0;
    loop {
        match plain(&mut s, &mut buf) {
            Ok(n) => {
                assert!(n == buf.len() || got + n == body.len());
                got += n;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(got, body.len());
    assert!(pipe.borrow().to_server.is_empty());
}

fn client_auth_config(cert: &str, key: &str) -> ClientConfig {
    let chain = vec![CertificateDer::from_pem_slice(&fixture(cert)).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(&fixture(key)).unwrap();
    ClientConfig::builder_with_protocol_versions(&[&rustls::version::TLS13])
        .with_root_certificates(client_config(&[&rustls::version::TLS13]).clone_roots())
        .with_client_auth_cert(chain, key)
        .unwrap()
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
        let pipe = pipe(1 << 20);
        let mut s = session(&pipe, &spec);
        let mut c = client(client_auth_config(cert, key));
        handshake(&mut s, &mut c, &pipe);
        let info = s.session_info();
        assert_eq!(info.authorization_error, want, "{cert}");
        assert_eq!(info.peer_chain.len(), 1);
        assert!(!info.reject);
    }
    // Without a certificate: OpenSSL's result node keeps.
    let pipe = pipe(1 << 20);
    let (s, _client) = established(&pipe, &spec);
    assert_eq!(
        s.session_info().authorization_error,
        Some("UNABLE_TO_GET_ISSUER_CERT")
    );
    // rejectUnauthorized: the handshake completes, and the connection is to be closed.
    spec.reject_unauthorized = true;
    let pipe = self::pipe(1 << 20);
    let mut s = session(&pipe, &spec);
    let mut c = client(client_auth_config(
        "self-signed-cert.pem",
        "self-signed-key.pem",
    ));
    handshake(&mut s, &mut c, &pipe);
    assert!(s.session_info().reject);
}

#[test]
fn only_tls12_and_13() {
    let mut only13 = spec();
    only13.min_version = TLS13;
    let pipe = pipe(1 << 20);
    let mut s = session(&pipe, &only13);
    let mut c = client(client_config(&[&rustls::version::TLS12]));
    pump_client(&mut c, &pipe);
    let (_, _, err, _) = server_read(&mut s);
    assert_eq!(err.unwrap().code, "ERR_SSL_UNSUPPORTED_PROTOCOL");
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
    ctx.add_context("local*", &TlsContext::new(&other).unwrap());
    let pipe = pipe(1 << 20);
    let mut s = TlsSession::new(ServerEnd(&pipe), ctx).unwrap();
    let mut cfg = client_config(&[&rustls::version::TLS12]);
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    let mut c = client(cfg);
    handshake(&mut s, &mut c, &pipe);
    let info = s.session_info();
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
        let pipe = pipe(1 << 20);
        let mut s = session(&pipe, &spec());
        s.set_keylog(true);
        // Another session of the same context that does not log sees none of them.
        let quiet_pipe = self::pipe(1 << 20);
        let mut quiet = TlsSession::new(ServerEnd(&quiet_pipe), s.ctx.clone()).unwrap();
        let mut c = client(client_config(&[version]));
        handshake(&mut s, &mut c, &pipe);
        let lines = TAKEN.with(|t| std::mem::take(&mut *t.borrow_mut()));
        let mut c2 = client(client_config(&[version]));
        handshake(&mut quiet, &mut c2, &quiet_pipe);
        assert!(TAKEN.with(|t| t.borrow().is_empty()));
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
        let pipe = pipe(1 << 20);
        let mut s = TlsSession::new(ServerEnd(&pipe), ctx.clone()).unwrap();
        s.ask_sni(true, false);
        let mut c = client(client_config(&[&rustls::version::TLS12]));
        pump_client(&mut c, &pipe);
        let mut buf = [0u8; 64];
        assert_eq!(s.read_input(&mut buf).unwrap(), Input::ClientHello);
        assert_eq!(s.sni_name(), Some("localhost"));
        // Until the answer the handshake waits, whatever arrives.
        let e = s.read_input(&mut buf).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::WouldBlock);
        s.answer_sni(answer, super::AlpnChoice::Config);
        assert_eq!(s.sni_name(), None);
        handshake(&mut s, &mut c, &pipe);
        let kind = if answer.is_some() {
            "ECDHE-ECDSA"
        } else {
            "ECDHE-RSA"
        };
        let info = s.session_info();
        assert!(info.cipher.0.starts_with(kind), "{}", info.cipher.0);
        assert_eq!(info.servername.as_deref(), Some("localhost"));
    }
}

#[test]
fn sni_callback_with_a_plain_http_client() {
    let pipe = pipe(1 << 20);
    let mut s = session(&pipe, &spec());
    s.ask_sni(true, false);
    pipe.borrow_mut()
        .to_server
        .extend(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut buf = [0u8; 64];
    match s.read_input(&mut buf).unwrap() {
        Input::Failed(f) => assert_eq!(f.code, "ERR_SSL_HTTP_REQUEST"),
        other => panic!("{other:?}"),
    }
}
