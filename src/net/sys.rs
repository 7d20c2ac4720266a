//! The socket calls that differ between operating systems. Everything else in `net` is
//! portable POSIX; each function here has one body per supported OS.
//!
//! Linux and macOS are supported. Other Unixes need their own arm here (FreeBSD would mostly
//! reuse Linux's); Windows needs more than this file (see docs/windows.md).

use std::io;
use std::os::fd::RawFd;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
compile_error!("fast-http supports Linux and macOS only; see docs/windows.md for a port's plan");

pub(super) fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

pub(super) fn set_int_opt(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
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

/// A new non-blocking, close-on-exec stream socket. The caller owns the returned fd.
#[cfg(target_os = "linux")]
pub(super) fn stream_socket(domain: libc::c_int) -> io::Result<RawFd> {
    // SAFETY: plain socket(2) call; both flags are set atomically by the kernel.
    cvt(unsafe {
        libc::socket(
            domain,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })
}

/// A new non-blocking, close-on-exec stream socket. The caller owns the returned fd.
///
/// macOS has no SOCK_NONBLOCK/SOCK_CLOEXEC: both are set with fcntl right after socket(2)
/// (what mio and std do there too). Accepted sockets inherit O_NONBLOCK from the listener.
#[cfg(target_os = "macos")]
pub(super) fn stream_socket(domain: libc::c_int) -> io::Result<RawFd> {
    // SAFETY: plain socket(2) call.
    let fd = cvt(unsafe { libc::socket(domain, libc::SOCK_STREAM, 0) })?;
    let setup = || -> io::Result<()> {
        // SAFETY: fd is the open socket created above.
        cvt(unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) })?;
        // SAFETY: as above; F_GETFL takes no argument.
        let flags = cvt(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
        // SAFETY: as above; the new flags are the old ones plus O_NONBLOCK.
        cvt(unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) })?;
        no_sigpipe(fd)
    };
    if let Err(e) = setup() {
        // SAFETY: fd is ours and nobody else has seen it yet.
        unsafe { libc::close(fd) };
        return Err(e);
    }
    Ok(fd)
}

/// Per-connection setup of an accepted socket (TCP or unix).
///
/// Linux: nothing; std's TcpStream/UnixStream write with MSG_NOSIGNAL there (and node ignores
/// SIGPIPE anyway).
#[cfg(target_os = "linux")]
pub(super) fn prepare_accepted(_fd: RawFd) {}

/// Per-connection setup of an accepted socket (TCP or unix).
///
/// macOS has no MSG_NOSIGNAL: a write to a peer that reset would raise SIGPIPE unless the
/// socket has SO_NOSIGPIPE. Node ignores SIGPIPE, but an embedder may not, and mio's accept
/// does not set it, so every accepted socket gets it (the listener has it too, in case the
/// kernel copies it; setting it twice is harmless).
#[cfg(target_os = "macos")]
pub(super) fn prepare_accepted(fd: RawFd) {
    let _ = no_sigpipe(fd);
}

#[cfg(target_os = "macos")]
fn no_sigpipe(fd: RawFd) -> io::Result<()> {
    set_int_opt(fd, libc::SOL_SOCKET, libc::SO_NOSIGPIPE, 1)
}

/// The TCP option that sets the idle time before the first keep-alive probe, in seconds
/// (node's `setKeepAlive(true, delay)`, libuv's `uv_tcp_keepalive`).
#[cfg(target_os = "linux")]
pub(super) const TCP_KEEPALIVE_IDLE: libc::c_int = libc::TCP_KEEPIDLE;

/// macOS calls it TCP_KEEPALIVE (same meaning, seconds; libuv uses it there too).
#[cfg(target_os = "macos")]
pub(super) const TCP_KEEPALIVE_IDLE: libc::c_int = libc::TCP_KEEPALIVE;

/// The address family of an open socket (AF_INET, AF_INET6, AF_UNIX).
pub(super) fn socket_family(fd: RawFd) -> io::Result<libc::c_int> {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: storage has room for `len` bytes; getsockname writes at most that.
    cvt(unsafe { libc::getsockname(fd, &mut storage as *mut _ as *mut libc::sockaddr, &mut len) })?;
    Ok(storage.ss_family as libc::c_int)
}

/// Makes a socket someone else created non-blocking and close-on-exec.
pub(super) fn adopt_fd(fd: RawFd) -> io::Result<()> {
    // SAFETY: fd is an open descriptor the caller owns; F_GETFL/F_SETFL/F_SETFD only change
    // its flags.
    unsafe {
        let flags = cvt(libc::fcntl(fd, libc::F_GETFL))?;
        cvt(libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK))?;
        cvt(libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC))?;
    }
    Ok(())
}

/// A new descriptor for the same socket (the caller owns it).
pub(super) fn dup(fd: RawFd) -> io::Result<RawFd> {
    // SAFETY: F_DUPFD_CLOEXEC on an open descriptor returns a new one we own.
    cvt(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) })
}
