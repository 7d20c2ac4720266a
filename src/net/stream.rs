//! An accepted connection, TCP or unix, with the per-socket options node's net.Socket exposes
//! (setNoDelay, setKeepAlive, resetAndDestroy's SO_LINGER 0) and half-close. A TLS connection is
//! the same stream behind a TLS session (`tls`): the connection machine reads and writes
//! plaintext through it either way.

use super::sys::{self, set_int_opt};
use super::tls::TlsSession;
use mio::net::{TcpStream, UnixStream};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};

pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// TLS over a TCP or Unix-domain socket (node's https serves both).
    Tls(Box<TlsSession<Stream>>),
}

impl Stream {
    fn tcp(&self) -> Option<&TcpStream> {
        match self {
            Stream::Tcp(s) => Some(s),
            Stream::Tls(t) => t.socket().tcp(),
            Stream::Unix(_) => None,
        }
    }

    /// Output the transport still holds (TLS ciphertext): the connection is not written out.
    #[inline]
    pub fn wants_write(&self) -> bool {
        match self {
            Stream::Tls(t) => t.wants_write(),
            _ => false,
        }
    }

    /// Writes what `wants_write` reports; WouldBlock when some is left.
    pub fn write_pending(&mut self) -> io::Result<()> {
        match self {
            Stream::Tls(t) => t.write_pending(),
            _ => Ok(()),
        }
    }

    pub fn tls(&self) -> Option<&TlsSession<Stream>> {
        match self {
            Stream::Tls(t) => Some(t),
            _ => None,
        }
    }

    pub fn tls_mut(&mut self) -> Option<&mut TlsSession<Stream>> {
        match self {
            Stream::Tls(t) => Some(t),
            _ => None,
        }
    }

    pub fn set_nodelay(&self, on: bool) {
        if let Some(s) = self.tcp() {
            let _ = s.set_nodelay(on);
        }
    }

    pub fn set_keepalive(&self, on: bool, delay_secs: u32) {
        if let Some(s) = self.tcp() {
            let fd = s.as_raw_fd();
            let _ = set_int_opt(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, on as i32);
            if on && delay_secs > 0 {
                let idle = sys::TCP_KEEPALIVE_IDLE;
                let _ = set_int_opt(fd, libc::IPPROTO_TCP, idle, delay_secs as i32);
            }
        }
    }

    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.tcp().and_then(|s| s.peer_addr().ok())
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.tcp().and_then(|s| s.local_addr().ok())
    }

    /// FIN (after TLS's close_notify).
    pub fn shutdown_write(&mut self) {
        match self {
            Stream::Tcp(s) => {
                let _ = s.shutdown(std::net::Shutdown::Write);
            }
            Stream::Unix(s) => {
                let _ = s.shutdown(std::net::Shutdown::Write);
            }
            Stream::Tls(t) => {
                t.close_notify();
                t.socket_mut().shutdown_write();
            }
        }
    }

    /// Sends RST instead of FIN on close (SO_LINGER 0), as net.Socket.resetAndDestroy does.
    pub fn set_linger_zero(&self) {
        let fd = self.as_raw_fd();
        let l = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: fd is an open socket; linger is a valid struct on the stack.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                &l as *const libc::linger as *const libc::c_void,
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            );
        }
    }
}

impl io::Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl io::Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write_vectored(bufs),
            Stream::Unix(s) => s.write_vectored(bufs),
            Stream::Tls(t) => t.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl mio::event::Source for Stream {
    fn register(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(r, t, i),
            Stream::Unix(s) => s.register(r, t, i),
            Stream::Tls(s) => s.socket_mut().register(r, t, i),
        }
    }
    fn reregister(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, t, i),
            Stream::Unix(s) => s.reregister(r, t, i),
            Stream::Tls(s) => s.socket_mut().reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &mio::Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Unix(s) => s.deregister(r),
            Stream::Tls(s) => s.socket_mut().deregister(r),
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(t) => t.socket().as_raw_fd(),
        }
    }
}
