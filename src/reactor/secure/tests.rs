//! The TLS room through the reactor: a server with a TLS context, loopback clients, the
//! reactor tests' fake sink (`super::super::tests`), which records what JS would hear.

use super::super::tests::{events, record, Ev, Harness, TestSink};
use super::SecureSink;
use crate::net::test_support::{client, client_config, hello_naming, spec};
use crate::net::tls::{SessionInfo, TlsFailure};
use crate::net::tls_config::TlsContext;
use rustls::ClientConnection;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

impl SecureSink for TestSink {
    fn secure(_sid: u32, _id: u64, _info: &SessionInfo) {
        record(Ev::Other("secure"));
    }
    fn tls_client_error(_sid: u32, _id: u64, e: &TlsFailure) {
        record(Ev::Other(e.code));
    }
    fn tls_error(_id: u64, e: &TlsFailure) {
        record(Ev::Other(e.code));
    }
    fn keylog(_sid: u32, _id: u64, _line: &[u8]) {
        record(Ev::Other("keylog"));
    }
    fn sni_request(_sid: u32, _id: u64, _servername: &str, _protocols: &[Vec<u8>]) {
        record(Ev::Other("sniRequest"));
    }
    fn tls_hand_off(_sid: u32, _id: u64, fd: i32, _read: &[u8]) {
        record(Ev::Other("handOff"));
        // SAFETY: the descriptor was handed to this sink, which owns it and closes it once.
        unsafe { libc::close(fd) };
    }
}

fn https() -> Harness {
    let h = Harness::new(0, 5000);
    let ctx = Arc::new(TlsContext::new(&spec()).unwrap());
    crate::reactor::with(|r| r.set_server_context(h.sid, Some(ctx)));
    h
}

fn saw(what: &'static str) -> bool {
    events().contains(&Ev::Other(what))
}

/// Moves what the client has to send to the socket and what the socket has into the client.
fn pump(c: &mut ClientConnection, s: &mut TcpStream) -> bool {
    while c.wants_write() {
        match c.write_tls(s) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("{e}"),
        }
    }
    match c.read_tls(s) {
        Ok(0) => return false,
        Ok(_) => {
            c.process_new_packets().unwrap();
        }
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Err(e) => panic!("{e}"),
    }
    true
}

#[test]
fn a_handshake_is_announced_before_the_first_request() {
    let h = https();
    let mut s = h.connect();
    let mut c = client(client_config(&[&rustls::version::TLS13]));
    c.writer().write_all(super::super::tests::GET).unwrap();
    h.until("the handshake and the request", || {
        pump(&mut c, &mut s);
        events().iter().any(|e| matches!(e, Ev::Request { .. }))
    });
    let seen = events();
    let secure = seen.iter().position(|e| *e == Ev::Other("secure"));
    let request = seen.iter().position(|e| matches!(e, Ev::Request { .. }));
    assert!(secure.unwrap() < request.unwrap(), "{seen:?}");
    let (id, seq, _) = h.request(0);
    super::super::tests::hello(id, seq, b"hi", super::super::commands::Respond::default());
    let mut got = Vec::new();
    h.until("the response", || {
        pump(&mut c, &mut s);
        let mut buf = [0u8; 256];
        if let Ok(n) = c.reader().read(&mut buf) {
            got.extend_from_slice(&buf[..n]);
        }
        got.ends_with(b"hi")
    });
    assert!(got.starts_with(b"HTTP/1.1 200 OK\r\n"));
}

#[test]
fn a_plain_http_client_is_a_tls_client_error_and_is_closed() {
    let h = https();
    let mut s = h.connect();
    s.write_all(super::super::tests::GET).unwrap();
    let (got, ended) = h.read(&mut s, |_| false);
    assert!(ended);
    // OpenSSL sends no alert to what does not look like TLS.
    assert!(got.is_empty(), "{got:?}");
    assert!(saw("ERR_SSL_HTTP_REQUEST"));
    assert!(!events().iter().any(|e| matches!(e, Ev::Request { .. })));
}

#[test]
fn a_client_gone_mid_handshake_is_a_hang_up() {
    let h = https();
    let mut s = h.connect();
    let mut c = client(client_config(&[&rustls::version::TLS13]));
    h.until("the ServerHello", || {
        pump(&mut c, &mut s);
        !c.wants_write() && c.is_handshaking() && c.wants_read()
    });
    s.shutdown(std::net::Shutdown::Both).unwrap();
    h.until("the hang-up", || saw("ECONNRESET"));
    assert!(!saw("secure"));
}

/// A ClientHello naming a server rustls refuses: the connection leaves the reactor with its
/// socket open (the sink gets the descriptor; here it closes it), nothing answered, no close
/// told for it, the server's count down.
#[test]
fn a_name_rustls_refuses_leaves_the_reactor_unanswered() {
    let h = https();
    let mut s = h.connect();
    s.write_all(&hello_naming(b"sni.00000")).unwrap();
    h.until("the hand-off", || saw("handOff"));
    let (got, ended) = h.read(&mut s, |_| false);
    assert!(ended);
    assert!(got.is_empty(), "{got:?}");
    let seen = events();
    assert!(!seen.iter().any(|e| matches!(e, Ev::Close(..))), "{seen:?}");
    let sid = h.sid;
    let conns = crate::reactor::with(|r| r.server(sid).map(|s| s.conns)).flatten();
    assert_eq!(conns, Some(0));
}
