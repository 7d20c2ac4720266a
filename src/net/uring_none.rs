//! Where there is no io_uring (macOS): the probe says so, and the reactor keeps to its
//! readiness driver. The same API as `uring.rs`, on a type with no values.

use std::io;
use std::os::fd::RawFd;

pub use super::received::Received;

pub enum Ring {}

impl Ring {
    pub fn new() -> io::Result<Ring> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "io_uring is Linux's",
        ))
    }

    pub fn fd(&self) -> RawFd {
        match *self {}
    }

    pub fn give_back(&mut self, _bid: u16) {
        match *self {}
    }

    /// # Safety
    /// As in `uring.rs`.
    pub unsafe fn bytes(&self, _bid: u16, _len: usize) -> &[u8] {
        match *self {}
    }

    pub fn arm(&mut self, _fd: RawFd, _id: u64) -> io::Result<()> {
        match *self {}
    }

    pub fn cancel(&mut self, _id: u64) -> io::Result<()> {
        match *self {}
    }

    pub fn has_pending(&self) -> bool {
        match *self {}
    }

    pub fn take(&mut self, _out: &mut Vec<Received>) {
        match *self {}
    }

    /// # Safety
    /// As in `uring.rs`.
    pub unsafe fn send_batch(
        &mut self,
        _msgs: &[libc::msghdr],
        _fds: &[RawFd],
        _results: &mut [i32],
    ) -> io::Result<()> {
        match *self {}
    }
}
