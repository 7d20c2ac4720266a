//! Listening sockets: TCP (IPv4/IPv6, backlog, SO_REUSEPORT, IPV6_V6ONLY) and unix paths.
//! Built with libc so the options libuv sets (SO_REUSEADDR) and the ones node exposes
//! (`backlog`, `reusePort`, `ipv6Only`) are applied before bind/listen.

use mio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{FromRawFd, RawFd};

pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, String),
}

pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

pub struct TcpOptions {
    pub backlog: i32,
    pub reuse_port: bool,
    pub ipv6_only: bool,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn set_int_opt(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: fd is an open socket; the option value is a c_int on the stack.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

pub fn listen_tcp(ip: IpAddr, port: u16, opts: &TcpOptions) -> io::Result<TcpListener> {
    let domain = if ip.is_ipv6() {
        libc::AF_INET6
    } else {
        libc::AF_INET
    };
    // SAFETY: plain socket(2) call.
    let fd = cvt(unsafe {
        libc::socket(
            domain,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })?;
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
    use std::os::fd::AsRawFd;
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

impl Listener {
    pub fn accept(&self) -> io::Result<Stream> {
        match self {
            Listener::Tcp(l) => l.accept().map(|(s, _)| Stream::Tcp(s)),
            Listener::Unix(l, _) => l.accept().map(|(s, _)| Stream::Unix(s)),
        }
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        match self {
            Listener::Tcp(l) => l.local_addr().ok(),
            Listener::Unix(..) => None,
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

impl Stream {
    pub fn set_nodelay(&self, on: bool) {
        if let Stream::Tcp(s) = self {
            let _ = s.set_nodelay(on);
        }
    }

    pub fn set_keepalive(&self, on: bool, delay_secs: u32) {
        use std::os::fd::AsRawFd;
        if let Stream::Tcp(s) = self {
            let fd = s.as_raw_fd();
            let _ = set_int_opt(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, on as i32);
            if on && delay_secs > 0 {
                let _ = set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, delay_secs as i32);
            }
        }
    }

    pub fn peer_addr(&self) -> Option<SocketAddr> {
        match self {
            Stream::Tcp(s) => s.peer_addr().ok(),
            Stream::Unix(_) => None,
        }
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        match self {
            Stream::Tcp(s) => s.local_addr().ok(),
            Stream::Unix(_) => None,
        }
    }

    pub fn shutdown_write(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Write),
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Write),
        };
    }

    /// Sends RST instead of FIN on close (SO_LINGER 0), as net.Socket.resetAndDestroy does.
    pub fn set_linger_zero(&self) {
        use std::os::fd::AsRawFd;
        let fd = match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        };
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
        }
    }
}

impl io::Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write_vectored(bufs),
            Stream::Unix(s) => s.write_vectored(bufs),
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
        }
    }
    fn reregister(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, t, i),
            Stream::Unix(s) => s.reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &mio::Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Unix(s) => s.deregister(r),
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
