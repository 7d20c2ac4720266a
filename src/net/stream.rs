//! An accepted connection, TCP or unix, with the per-socket options node's net.Socket exposes
//! (setNoDelay, setKeepAlive, resetAndDestroy's SO_LINGER 0). A TLS connection is the same
//! socket with a TLS session beside it (`tls`); reading and writing either is the driver's
//! (`super::readiness`).

use super::sys::{self, set_int_opt};
use super::tls::TlsSession;
use mio::net::{TcpStream, UnixStream};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, IntoRawFd, RawFd};

/// The socket of a connection.
pub enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

pub struct Stream {
    pub(super) socket: Socket,
    /// TLS over the TCP or Unix-domain socket (node's https serves both).
    pub(super) tls: Option<Box<TlsSession>>,
}

impl Socket {
    fn tcp(&self) -> Option<&TcpStream> {
        match self {
            Socket::Tcp(s) => Some(s),
            Socket::Unix(_) => None,
        }
    }

    pub(super) fn shutdown_write(&mut self) {
        let _ = match self {
            Socket::Tcp(s) => s.shutdown(std::net::Shutdown::Write),
            Socket::Unix(s) => s.shutdown(std::net::Shutdown::Write),
        };
    }
}

impl Stream {
    pub fn new(socket: Socket) -> Stream {
        Stream { socket, tls: None }
    }

    fn tcp(&self) -> Option<&TcpStream> {
        self.socket.tcp()
    }

    /// Puts a TLS session over the socket (before any byte is read).
    pub fn secure(&mut self, session: TlsSession) {
        self.tls = Some(Box::new(session));
    }

    /// The socket's descriptor, which the caller owns from now on (the socket is not closed).
    pub fn into_raw_fd(self) -> RawFd {
        match self.socket {
            Socket::Tcp(s) => s.into_raw_fd(),
            Socket::Unix(s) => s.into_raw_fd(),
        }
    }

    pub fn tls(&self) -> Option<&TlsSession> {
        self.tls.as_deref()
    }

    pub fn tls_mut(&mut self) -> Option<&mut TlsSession> {
        self.tls.as_deref_mut()
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

impl io::Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }
}

impl io::Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write_vectored(bufs),
            Socket::Unix(s) => s.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl mio::event::Source for Socket {
    fn register(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.register(r, t, i),
            Socket::Unix(s) => s.register(r, t, i),
        }
    }
    fn reregister(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.reregister(r, t, i),
            Socket::Unix(s) => s.reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &mio::Registry) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.deregister(r),
            Socket::Unix(s) => s.deregister(r),
        }
    }
}

impl mio::event::Source for Stream {
    fn register(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        self.socket.register(r, t, i)
    }
    fn reregister(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        self.socket.reregister(r, t, i)
    }
    fn deregister(&mut self, r: &mio::Registry) -> io::Result<()> {
        self.socket.deregister(r)
    }
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Socket::Tcp(s) => s.as_raw_fd(),
            Socket::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }
}
