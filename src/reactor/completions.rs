//! The completion driver, the readiness driver's sibling for plain connections when the
//! kernel offers io_uring (`crate::net::uring`; chosen at start, FAST_HTTP_DRIVER=epoll or
//! io_uring forces either). Each connection has one multishot receive armed: the kernel
//! receives into provided buffers as bytes arrive, and the ring's completions (its fd is in
//! the same poll set, under `RING_TOKEN`) reach the connection's input with no recv(2) per
//! request. The sends of a batch go in one `io_uring_enter`. The rules it keeps are the
//! readiness driver's: a paused or throttled connection stops receiving (what came before
//! the cancellation took effect waits in its buffer), the end of the input and errors reach
//! the same entry points (`http::input`, `http::input_ended`, `Reactor::close_conn`), and
//! a full socket waits for a WRITABLE edge from epoll. TLS connections stay with the
//! readiness driver (their reads go through rustls's `read_tls`); a connection never mixes
//! drivers.

use super::batch::guarded;
use super::delivery::Group;
use super::http;
use super::sink::Sink;
use super::state::*;
use crate::conn::out::MAX_SLICES;
use crate::net::uring::{Received, Ring};
use std::io::IoSlice;
use std::os::fd::AsRawFd;

/// The ring's poll token (below every listener's, above every connection slot's).
pub(super) const RING_TOKEN: usize = LISTENER_BIT - 1;

/// Batches with fewer connections to send to than this write with writev(2): one
/// `io_uring_enter` for one send measured the same as its writev (A/B, hello 12.4 / 12.6
/// µs), and several sends in one enter less than their writevs (JSON 14.9 / 17.4 µs).
const RING_SEND_MIN: usize = 2;

/// The driver FAST_HTTP_DRIVER asks for, or the kernel offers: a ring, or None for epoll.
pub fn choose() -> std::io::Result<Option<Box<Ring>>> {
    let forced = std::env::var("FAST_HTTP_DRIVER").unwrap_or_default();
    match forced.as_str() {
        "epoll" => Ok(None),
        "io_uring" => Ring::new().map(|r| Some(Box::new(r))).map_err(|e| {
            std::io::Error::other(format!(
                "FAST_HTTP_DRIVER=io_uring, but io_uring is not usable here: {e}"
            ))
        }),
        "" => Ok(Ring::new().ok().map(Box::new)),
        other => Err(std::io::Error::other(format!(
            "FAST_HTTP_DRIVER={other}: the drivers are epoll and io_uring"
        ))),
    }
}

impl Reactor {
    /// The name of the driver new plain connections get.
    pub fn driver_name(&self) -> &'static str {
        if self.ring.is_some() {
            "io_uring"
        } else {
            "epoll"
        }
    }

    /// Connection `id` is read by the ring: its receive is armed.
    pub(super) fn ring_adopt(&mut self, id: u64) -> bool {
        let Some(c) = self.conns.get_mut(id) else {
            return false;
        };
        c.flags |= C_RING;
        self.ring_arm(id)
    }

    /// Arms connection `id`'s receive unless one is in flight or it is not reading.
    pub(super) fn ring_arm(&mut self, id: u64) -> bool {
        let Some(c) = self.conns.get_mut(id) else {
            return false;
        };
        if c.flags & (C_RECV_ARMED | C_READ_PAUSED) != 0 || c.http.throttled || c.http.peer_eof {
            return true;
        }
        let fd = c.stream.as_raw_fd();
        let Some(ring) = self.ring.as_mut() else {
            return false;
        };
        if ring.arm(fd, id).is_err() {
            return false;
        }
        c.flags |= C_RECV_ARMED;
        true
    }

    /// Stops connection `id`'s receive (its socket closes, or it stopped reading).
    pub(super) fn ring_cancel(&mut self, id: u64) {
        let Some(c) = self.conns.get_mut(id) else {
            return;
        };
        if c.flags & C_RECV_ARMED == 0 || c.flags & C_RECV_CANCELLING != 0 {
            return;
        }
        c.flags |= C_RECV_CANCELLING;
        if let Some(ring) = self.ring.as_mut() {
            let _ = ring.cancel(id);
        }
    }

    /// Flushes the connections written in this batch: the ones the ring reads, when there
    /// are enough, with one `io_uring_enter` for all their sends; what a send left (a full
    /// socket) and every other connection go through `flush`.
    pub(super) fn ring_flush(&mut self, dirty: &[u64]) {
        let mut iovs: Vec<libc::iovec> = Vec::new();
        let mut sends: Vec<(u64, usize, usize)> = Vec::new();
        let mut fds = Vec::new();
        for &id in dirty {
            let Some(c) = self.conns.get_mut(id) else {
                continue;
            };
            if c.flags & C_RING == 0 || c.flags & C_WAIT_WRITABLE != 0 {
                continue;
            }
            c.http.out.confirm();
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let n = c.http.out.slices(&mut slices, false);
            if n == 0 {
                continue;
            }
            let from = iovs.len();
            iovs.extend(slices[..n].iter().map(|s| libc::iovec {
                iov_base: s.as_ptr() as *mut libc::c_void,
                iov_len: s.len(),
            }));
            sends.push((id, from, n));
            fds.push(c.stream.as_raw_fd());
        }
        if sends.len() >= RING_SEND_MIN {
            let msgs: Vec<libc::msghdr> = sends
                .iter()
                .map(|&(_, from, n)| {
                    // SAFETY: an all-zero msghdr is valid (no name, no control data).
                    let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
                    m.msg_iov = iovs[from..].as_ptr() as *mut libc::iovec;
                    m.msg_iovlen = n as _;
                    m
                })
                .collect();
            let mut results = vec![0i32; msgs.len()];
            let sent = match self.ring.as_mut() {
                // SAFETY: the iovecs point into the connections' output queues, which nothing
                // changes until the sends are done (this function calls no JS and touches no
                // queue before `send_batch` returns).
                Some(ring) => unsafe { ring.send_batch(&msgs, &fds, &mut results).is_ok() },
                None => false,
            };
            if sent {
                self.counters.write_calls += sends.len() as u64;
                for (&(id, _, _), &res) in sends.iter().zip(&results) {
                    if res > 0 {
                        if let Some(c) = self.conns.get_mut(id) {
                            c.http.out.consume(res as usize);
                        }
                        self.wrote(id, res as usize);
                    } else if res < 0
                        && ![libc::EAGAIN, libc::EINTR, libc::ECANCELED].contains(&-res)
                    {
                        self.close_conn(id, res);
                    }
                }
            }
        }
        for &id in dirty {
            self.flush(id, false);
        }
    }
}

/// The ring's fd is readable: every completion reaches its connection, each read as one
/// group (JS runs its ticks after each, as after one node:http read). `last`: the ring is
/// the poll's last ready source.
pub fn reap<S: Sink>(last: bool) {
    let mut got = with(|r| std::mem::take(&mut r.ring_completions)).unwrap_or_default();
    let Some(()) = with(|r| {
        if let Some(ring) = r.ring.as_mut() {
            ring.take(&mut got);
        }
    }) else {
        return;
    };
    let n = got.len();
    let mut bytes_for = None;
    for (i, rx) in got.drain(..).enumerate() {
        S::last_read(last && i + 1 == n);
        let after_bytes = bytes_for == Some(rx.id);
        bytes_for = (rx.result > 0).then_some(rx.id);
        received::<S>(rx, after_bytes);
    }
    with(|r| r.ring_completions = got);
}

/// Whether completions wait that a batch's sends took from the ring.
pub fn pending() -> bool {
    with(|r| r.ring.as_ref().is_some_and(|ring| ring.has_pending())).unwrap_or(false)
}

/// One receive completion of connection `rx.id`; `after_bytes`: the one before it brought
/// this connection bytes.
fn received<S: Sink>(rx: Received, after_bytes: bool) {
    // Where the connection stands: gone (the buffer goes back), not reading (the bytes wait
    // in its buffer and the receive is cancelled), or reading.
    let reading = with(|r| {
        let now = r.now;
        let Some(c) = r.conns.get_mut(rx.id) else {
            if let (Some(bid), Some(ring)) = (rx.buffer, r.ring.as_mut()) {
                ring.give_back(bid);
            }
            return None;
        };
        if !rx.more {
            c.flags &= !(C_RECV_ARMED | C_RECV_CANCELLING);
        }
        let reading = c.flags & C_READ_PAUSED == 0 && !c.http.throttled;
        if rx.result <= 0 {
            return Some(reading);
        }
        c.bytes_read += rx.result as u64;
        c.last_active = now;
        r.counters.read_calls += 1;
        if reading {
            return Some(true);
        }
        if let (Some(bid), Some(ring)) = (rx.buffer, r.ring.as_mut()) {
            // SAFETY: the completion's buffer and length, not given back yet.
            let bytes = unsafe { ring.bytes(bid, rx.result as usize) };
            c.http.rbuf.extend_from_slice(bytes);
            ring.give_back(bid);
        }
        r.ring_cancel(rx.id);
        Some(false)
    })
    .flatten();
    let Some(reading) = reading else { return };
    let id = rx.id;
    match rx.result {
        n if n > 0 => {
            let Some(bid) = rx.buffer else { return };
            if reading {
                let ring: *const Ring =
                    match with(|r| r.ring.as_deref().map(|x| x as *const Ring)).flatten() {
                        Some(p) => p,
                        None => return,
                    };
                // SAFETY: the ring lives as long as the reactor, which JS cannot tear down
                // from inside a callback; the buffer stays the connection's until it is
                // given back below.
                let bytes = unsafe { (*ring).bytes(bid, n as usize) };
                guarded::<S, _>(Some(id), || {
                    let mut g = Group::<S>::open(Some(id));
                    http::input(&mut g, id, bytes);
                });
                with(|r| r.ring.as_mut().map(|ring| ring.give_back(bid)));
            }
        }
        // The end of the input: where the connection is not reading, the next receive (armed
        // when it reads again) reports it again; where it came with bytes, on the loop's
        // next turn, as libuv reads it (as `readiness::read_conn` does).
        0 if reading && after_bytes => {
            with(|r| r.yield_read(id));
            return;
        }
        0 if reading => {
            guarded::<S, _>(Some(id), || {
                let mut g = Group::<S>::open(Some(id));
                http::input_ended(&mut g, id);
            });
            return;
        }
        0 => return,
        e if [libc::ENOBUFS, libc::ECANCELED, libc::EINTR, libc::EAGAIN].contains(&-e) => {}
        e => {
            let eof =
                e == -libc::ECONNRESET && after_bytes && with(|r| r.hup_is_eof).unwrap_or(false);
            guarded::<S, _>(Some(id), || {
                if eof {
                    // libuv before 1.52 reads a hang-up after a short read as the end of
                    // the input (see readiness::hup_eof): a reset that came with bytes.
                    let mut g = Group::<S>::open(Some(id));
                    http::input_ended(&mut g, id);
                } else {
                    with(|r| r.close_conn(id, e));
                }
            });
            return;
        }
    }
    if !rx.more {
        with(|r| r.ring_arm(id));
    }
}

/// Connection `id` reads again (resumed, unthrottled, or bytes were put in its buffer):
/// what its buffer holds first, then its receive is armed again.
pub(super) fn resume<S: Sink>(id: u64) {
    guarded::<S, _>(Some(id), || {
        let mut g = Group::<S>::open(Some(id));
        http::input_buffered(&mut g, id);
    });
    with(|r| r.ring_arm(id));
}
