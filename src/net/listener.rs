//! Listening sockets: TCP (IPv4/IPv6, backlog, SO_REUSEPORT, IPV6_V6ONLY) and unix paths.
//! Built with libc so the options libuv sets (SO_REUSEADDR) and the ones node exposes
//! (`backlog`, `reusePort`, `ipv6Only`) are applied before bind/listen.

use super::stream::{Socket, Stream};
use super::sys::{self, cvt, set_int_opt};
use mio::net::{TcpListener, UnixListener};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};

pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, String),
}

pub struct TcpOptions {
    pub backlog: i32,
    pub reuse_port: bool,
    pub ipv6_only: bool,
}

pub fn listen_tcp(ip: IpAddr, port: u16, opts: &TcpOptions) -> io::Result<TcpListener> {
    let domain = if ip.is_ipv6() {
        libc::AF_INET6
    } else {
        libc::AF_INET
    };
    let fd = sys::stream_socket(domain)?;
    // SAFETY: fd was just created and is owned here; the std listener closes it on error.
    let std_listener = unsafe { std::net::TcpListener::from_raw_fd(fd) };
    set_int_opt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    if opts.reuse_port {
        set_int_opt(fd, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1)?;
    }
    if ip.is_ipv6() {
        set_int_opt(
            fd,
            libc::IPPROTO_IPV6,
            libc::IPV6_V6ONLY,
            opts.ipv6_only as i32,
        )?;
    }
    let addr = SocketAddr::new(ip, port);
    let (storage, len) = sockaddr(&addr);
    // SAFETY: storage holds a valid sockaddr of `len` bytes.
    cvt(unsafe { libc::bind(fd, &storage as *const _ as *const libc::sockaddr, len) })?;
    // SAFETY: fd is a bound stream socket.
    cvt(unsafe { libc::listen(fd, opts.backlog) })?;
    Ok(TcpListener::from_std(std_listener))
}

pub fn listen_unix(path: &str, backlog: i32) -> io::Result<UnixListener> {
    let std_listener = std::os::unix::net::UnixListener::bind(path)?;
    std_listener.set_nonblocking(true)?;
    // SAFETY: re-listen on the bound socket to apply node's backlog.
    cvt(unsafe { libc::listen(std_listener.as_raw_fd(), backlog) })?;
    Ok(UnixListener::from_std(std_listener))
}

fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in.
            let sin = unsafe { &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr = libc::in_addr {
                s_addr: u32::from_ne_bytes(a.ip().octets()),
            };
            (
                storage,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        }
        SocketAddr::V6(a) => {
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in6.
            let sin6 = unsafe { &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr = libc::in6_addr {
                s6_addr: a.ip().octets(),
            };
            sin6.sin6_flowinfo = a.flowinfo();
            sin6.sin6_scope_id = a.scope_id();
            (
                storage,
                std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
            )
        }
    }
}

/// Takes over a listening (or bound) socket JS hands over: `listen({ fd })`, a handle, a
/// cluster's shared handle. With `dup` the socket is used through a new descriptor and the
/// caller keeps its own; without, the listener owns `fd` and closes it. Listens with
/// `backlog` (as libuv's uv_listen on an adopted handle does).
pub fn adopt_listener(fd: RawFd, backlog: i32, dup: bool) -> io::Result<Listener> {
    let family = sys::socket_family(fd)?;
    let fd = if dup { sys::dup(fd)? } else { fd };
    let owned = || {
        sys::adopt_fd(fd)?;
        // SAFETY: fd is an open socket.
        cvt(unsafe { libc::listen(fd, backlog) })?;
        Ok(())
    };
    let result: io::Result<()> = owned();
    if let Err(e) = result {
        if dup {
            // SAFETY: the duplicate is ours and nobody else has seen it.
            unsafe { libc::close(fd) };
        }
        return Err(e);
    }
    // SAFETY: fd is an open listening socket of `family`, owned from here on.
    Ok(unsafe {
        if family == libc::AF_UNIX {
            // No path: an adopted socket's file is not ours to remove.
            Listener::Unix(
                UnixListener::from_std(std::os::unix::net::UnixListener::from_raw_fd(fd)),
                String::new(),
            )
        } else {
            Listener::Tcp(TcpListener::from_std(std::net::TcpListener::from_raw_fd(
                fd,
            )))
        }
    })
}

/// Takes over an accepted connection JS hands over (a cluster primary's round-robin
/// connection) through a new descriptor; the caller closes its own.
pub fn adopt_stream(fd: RawFd) -> io::Result<Stream> {
    let family = sys::socket_family(fd)?;
    let fd = sys::dup(fd)?;
    if let Err(e) = sys::adopt_fd(fd) {
        // SAFETY: the duplicate is ours and nobody else has seen it.
        unsafe { libc::close(fd) };
        return Err(e);
    }
    sys::prepare_accepted(fd);
    // SAFETY: fd is an open connected socket of `family`, owned from here on.
    Ok(unsafe {
        if family == libc::AF_UNIX {
            Stream::new(Socket::Unix(mio::net::UnixStream::from_std(
                std::os::unix::net::UnixStream::from_raw_fd(fd),
            )))
        } else {
            Stream::new(Socket::Tcp(mio::net::TcpStream::from_std(
                std::net::TcpStream::from_raw_fd(fd),
            )))
        }
    })
}

impl Listener {
    pub fn accept(&self) -> io::Result<Stream> {
        let stream = match self {
            Listener::Tcp(l) => l.accept().map(|(s, _)| Stream::new(Socket::Tcp(s))),
            Listener::Unix(l, _) => l.accept().map(|(s, _)| Stream::new(Socket::Unix(s))),
        }?;
        sys::prepare_accepted(stream.as_raw_fd());
        Ok(stream)
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        match self {
            Listener::Tcp(l) => l.local_addr().ok(),
            Listener::Unix(..) => None,
        }
    }

    /// The path a unix listener is bound to ("" for an unnamed one); None for TCP.
    pub fn unix_path(&self) -> Option<String> {
        match self {
            Listener::Tcp(_) => None,
            Listener::Unix(l, _) => Some(
                l.local_addr()
                    .ok()
                    .and_then(|a| a.as_pathname().map(|p| p.to_string_lossy().into_owned()))
                    .unwrap_or_default(),
            ),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        // node:http removes the unix socket file when the server closes.
        if let Listener::Unix(_, path) = self {
            let _ = std::fs::remove_file(path.as_str());
        }
    }
}

impl mio::event::Source for Listener {
    fn register(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => l.register(r, t, i),
            Listener::Unix(l, _) => l.register(r, t, i),
        }
    }
    fn reregister(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => l.reregister(r, t, i),
            Listener::Unix(l, _) => l.reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &mio::Registry) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => l.deregister(r),
            Listener::Unix(l, _) => l.deregister(r),
        }
    }
}
