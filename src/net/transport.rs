//! One step of reading or writing a connection's transport: its socket, or a TLS session over
//! it. When to take a step (read until the socket would block, a short read means drained,
//! write until it would block, wait for WRITABLE) is the reactor's readiness driver's rule
//! (`crate::reactor::readiness`). A TLS connection's session (`super::tls`, which does no
//! I/O) is fed here: its ciphertext is read from the socket straight into rustls until the
//! caller's buffer is full or the socket would block, and what it has to send (handshake
//! messages, alerts, records) is written as the socket takes it.

use super::stream::Stream;
use super::tls::{Next, TlsSession};
use std::io::{self, ErrorKind, IoSlice, Read, Write};

/// What one read of a connection gives.
#[derive(Debug, PartialEq, Eq)]
pub enum Got {
    /// This many bytes for the connection (plaintext on TLS), never 0.
    Bytes(usize),
    /// The input ended.
    Eof,
    /// The TLS session has an event to act on (`TlsSession::take_event`) before more input.
    Event,
}

/// Reads the connection into `buf`. WouldBlock when there is nothing now.
pub fn read(s: &mut Stream, buf: &mut [u8]) -> io::Result<Got> {
    match s.tls.as_deref_mut() {
        None => match s.socket.read(buf)? {
            0 => Ok(Got::Eof),
            n => Ok(Got::Bytes(n)),
        },
        Some(t) => read_secure(&mut s.socket, t, buf),
    }
}

/// Writes plaintext: all the socket takes now (on TLS: what rustls takes, up to its buffer
/// limit, and the ciphertext the socket takes). WouldBlock when nothing is taken.
pub fn write(s: &mut Stream, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    match s.tls.as_deref_mut() {
        None if bufs.len() == 1 => s.socket.write(&bufs[0]),
        None => s.socket.write_vectored(bufs),
        Some(t) => write_secure(&mut s.socket, t, bufs),
    }
}

/// The last read left the end or a TLS event for the next one, which the socket will not
/// announce again.
#[inline]
pub fn holds_more(s: &Stream) -> bool {
    s.tls.as_ref().is_some_and(|t| t.holds_next())
}

/// Output the transport still holds (TLS ciphertext): the connection is not written out.
#[inline]
pub fn wants_write(s: &Stream) -> bool {
    s.tls.as_ref().is_some_and(|t| t.wants_write())
}

/// Writes what `wants_write` reports; WouldBlock when some is left.
pub fn write_pending(s: &mut Stream) -> io::Result<()> {
    match s.tls.as_deref_mut() {
        None => Ok(()),
        Some(t) => send_tls(&mut s.socket, t),
    }
}

/// FIN, after TLS's close_notify and what is left of its output (best effort).
pub fn shutdown_write(s: &mut Stream) {
    if let Some(t) = s.tls.as_deref_mut() {
        t.close_notify();
        let _ = send_tls(&mut s.socket, t);
    }
    s.socket.shutdown_write();
}

/// Tells whether the socket's last read was shorter than asked: the receive queue is empty
/// then, and (the registration being edge-triggered) reading again would only meet EAGAIN.
struct ShortRead<'a, R> {
    inner: &'a mut R,
    short: &'a mut bool,
}

impl<R: Read> Read for ShortRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        *self.short = n < buf.len();
        Ok(n)
    }
}

/// A TLS read: plaintext already decrypted comes first; then the socket is read until `buf`
/// is full or the socket would block. An event comes before any plaintext (when plaintext
/// came first, the next read reports it).
fn read_secure<S: Read + Write>(
    sock: &mut S,
    t: &mut TlsSession,
    buf: &mut [u8],
) -> io::Result<Got> {
    let mut filled = 0;
    // The socket's last read was short: once the plaintext it gave is taken, this read is
    // done (one recv per request, as on the plain transport).
    let mut drained = false;
    loop {
        match t.next(&mut buf[filled..])? {
            Next::Bytes(n) => {
                filled += n;
                if filled == buf.len() {
                    return Ok(Got::Bytes(filled));
                }
                continue;
            }
            Next::Empty => {}
            Next::Wait if filled > 0 => return Ok(Got::Bytes(filled)),
            // The end (close_notify) or an event came in the read that brought the
            // plaintext: the next read reports it, which the caller makes without waiting for
            // the socket (`holds_more`).
            _ if filled > 0 => {
                t.hold_next();
                return Ok(Got::Bytes(filled));
            }
            Next::Event => {
                // An alert the failure queued goes before the connection closes.
                let _ = send_tls(sock, t);
                return Ok(Got::Event);
            }
            Next::End => return Ok(Got::Eof),
            Next::Wait => return Err(ErrorKind::WouldBlock.into()),
        }
        // Without plaintext the socket is read again: a FIN (or an error) that came with the
        // last bytes raises no new edge, and only a read sees it.
        if drained && filled > 0 {
            t.release_input();
            return Ok(Got::Bytes(filled));
        }
        let read = t.read_tls(&mut ShortRead {
            inner: sock,
            short: &mut drained,
        });
        match read {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock && filled > 0 => {
                return Ok(Got::Bytes(filled))
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        // Handshake messages (and anything else rustls answers) go out now, whether or not
        // the app writes; what the socket does not take waits for `write_pending`.
        match send_tls(sock, t) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
}

/// Plaintext into the session, and the ciphertext out as far as the socket takes it.
fn write_secure<S: Write>(
    sock: &mut S,
    t: &mut TlsSession,
    bufs: &[IoSlice<'_>],
) -> io::Result<usize> {
    match send_tls(sock, t) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Err(e) => return Err(e),
    }
    let n = t.write_plain(bufs)?;
    match send_tls(sock, t) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Err(e) => return Err(e),
    }
    let asked: usize = bufs.iter().map(|b| b.len()).sum();
    if n == 0 && asked > 0 {
        return Err(ErrorKind::WouldBlock.into());
    }
    Ok(n)
}

/// Writes the ciphertext the session holds until the socket would block (WouldBlock then).
fn send_tls<S: Write>(sock: &mut S, t: &mut TlsSession) -> io::Result<()> {
    while t.wants_write() {
        match t.write_tls(sock) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
