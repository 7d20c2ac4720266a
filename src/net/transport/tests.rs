//! One step of a transport over a pipe that blocks like a non-blocking socket, with a TLS
//! session and an in-memory rustls client on its other end.

use super::*;
use crate::net::test_support::{client, client_config, live_bytes, spec};
use crate::net::tls::{TlsEvent, BUFFER_LIMIT};
use crate::net::tls_config::TlsContext;
use rustls::ClientConnection;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

/// One direction each way; `cap` bounds what the server's side may have unread by the client.
#[derive(Default)]
struct Pipe {
    to_server: VecDeque<u8>,
    to_client: VecDeque<u8>,
    cap: usize,
    /// Reads the server made from its end.
    reads: usize,
}

struct ServerEnd<'a>(&'a RefCell<Pipe>);

impl Read for ServerEnd<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut p = self.0.borrow_mut();
        p.reads += 1;
        if p.to_server.is_empty() {
            return Err(ErrorKind::WouldBlock.into());
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

fn pipe(cap: usize) -> RefCell<Pipe> {
    RefCell::new(Pipe {
        cap,
        ..Pipe::default()
    })
}

/// Moves the client's output into the pipe and the pipe's output into the client.
fn pump_client(c: &mut ClientConnection, pipe: &RefCell<Pipe>) {
    let mut out = Vec::new();
    while c.wants_write() {
        c.write_tls(&mut out).unwrap();
    }
    pipe.borrow_mut().to_server.extend(out);
    let bytes: Vec<u8> = pipe.borrow_mut().to_client.drain(..).collect();
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

/// The session past its handshake with a TLS 1.3 client, read through the driver.
fn established(pipe: &RefCell<Pipe>) -> (TlsSession, ClientConnection) {
    let ctx = Arc::new(TlsContext::new(&spec()).unwrap());
    let mut s = TlsSession::new(ctx).unwrap();
    let mut c = client(client_config(&[&rustls::version::TLS13]));
    let mut buf = [0u8; 1024];
    let mut announced = false;
    for _ in 0..10 {
        pump_client(&mut c, pipe);
        loop {
            match read_secure(&mut ServerEnd(pipe), &mut s, &mut buf) {
                Ok(Got::Event) => match s.take_event() {
                    Some(TlsEvent::HandshakeDone) => announced = true,
                    Some(TlsEvent::Keylog(_)) => {}
                    other => panic!("{other:?}"),
                },
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                other => panic!("{other:?}"),
            }
        }
        if announced && !c.is_handshaking() {
            pump_client(&mut c, pipe);
            return (s, c);
        }
    }
    panic!("no handshake");
}

/// A request that came whole in a short socket read is returned without reading the socket
/// again (the plain transport's one recv per request; the reactor reads again when the event
/// said the peer closed).
#[test]
fn one_socket_read_per_request() {
    let pipe = pipe(1 << 20);
    let (mut s, mut c) = established(&pipe);
    c.writer().write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    pump_client(&mut c, &pipe);
    let before = pipe.borrow().reads;
    let mut buf = [0u8; 4096];
    let got = read_secure(&mut ServerEnd(&pipe), &mut s, &mut buf).unwrap();
    assert_eq!(got, Got::Bytes(18));
    assert_eq!(&buf[..18], b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(pipe.borrow().reads - before, 1);
    // Nothing more: the next read meets the empty socket (and says so).
    let e = read_secure(&mut ServerEnd(&pipe), &mut s, &mut buf).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WouldBlock);
}

/// A request and close_notify in one read (no FIN): the request, then the end, which the
/// next read reports without the socket (no new edge would announce it).
#[test]
fn close_notify_after_a_request_in_one_read() {
    let pipe = pipe(1 << 20);
    let (mut s, mut c) = established(&pipe);
    c.writer().write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    c.send_close_notify();
    pump_client(&mut c, &pipe);
    let mut buf = [0u8; 4096];
    let got = read_secure(&mut ServerEnd(&pipe), &mut s, &mut buf).unwrap();
    assert_eq!(got, Got::Bytes(18));
    assert!(s.holds_next());
    let before = pipe.borrow().reads;
    let got = read_secure(&mut ServerEnd(&pipe), &mut s, &mut buf).unwrap();
    assert_eq!(got, Got::Eof);
    assert_eq!(pipe.borrow().reads, before);
    assert!(!s.holds_next());
}

#[test]
fn a_large_request_is_read_whole_before_blocking() {
    let pipe = pipe(1 << 20);
    let (mut s, mut c) = established(&pipe);
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
        match read_secure(&mut ServerEnd(&pipe), &mut s, &mut buf) {
            Ok(Got::Bytes(n)) => {
                assert!(n == buf.len() || got + n == body.len());
                got += n;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(got, body.len());
    assert!(pipe.borrow().to_server.is_empty());
}

#[test]
fn output_is_bounded_and_pending_ciphertext_is_reported() {
    let pipe = pipe(1 << 20);
    let (mut s, mut c) = established(&pipe);
    // The peer stops reading: the socket takes 1000 bytes more, rustls at most its limit.
    {
        let mut p = pipe.borrow_mut();
        p.cap = p.to_client.len() + 1000;
    }
    let chunk = vec![b'x'; 16 * 1024];
    let mut taken = 0;
    loop {
        match write_secure(&mut ServerEnd(&pipe), &mut s, &[IoSlice::new(&chunk)]) {
            Ok(n) => taken += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("{e}"),
        }
        assert!(taken < 4 * BUFFER_LIMIT, "unbounded");
    }
    assert!(taken <= BUFFER_LIMIT + chunk.len());
    assert!(s.wants_write());
    let e = send_tls(&mut ServerEnd(&pipe), &mut s).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WouldBlock);
    // The peer reads: everything goes, and it is what was written.
    let mut got = 0;
    for _ in 0..10_000 {
        pipe.borrow_mut().cap = usize::MAX;
        send_tls(&mut ServerEnd(&pipe), &mut s).unwrap();
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

/// Heap bytes a session owns once it has read `body` (sent as one record) and is idle.
fn owned_after_reading(body: &[u8]) -> isize {
    let pipe = pipe(1 << 20);
    let (mut s, mut c) = established(&pipe);
    let mut buf = vec![0u8; 64 * 1024];
    c.writer().write_all(body).unwrap();
    pump_client(&mut c, &pipe);
    let mut got = 0;
    while got < body.len() {
        match read_secure(&mut ServerEnd(&pipe), &mut s, &mut buf) {
            Ok(Got::Bytes(n)) => got += n,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(&buf[..got.min(buf.len())], &body[..got.min(buf.len())]);
    let live = live_bytes();
    drop(s);
    live - live_bytes()
}

/// A large record grows rustls's input buffer (about 18 KiB for a 16 KiB record); once the
/// request it carried is read, an idle connection keeps what a small request leaves.
#[test]
fn an_idle_connection_gives_back_what_a_large_record_grew() {
    let small = owned_after_reading(b"GET / HTTP/1.1\r\n\r\n");
    let large = owned_after_reading(&vec![b'z'; 16 * 1024]);
    assert!(
        large <= small + 512,
        "idle after a 16 KiB record: {large} B, after a small one: {small} B"
    );
}
