//! io_uring for the completion driver (`crate::reactor::completions`): one ring per reactor,
//! a ring of provided receive buffers that every connection's multishot receive takes from,
//! and the few operations the driver needs: arm a multishot receive, cancel it, send a
//! batch's output with one `io_uring_enter`, and take the completions. `Ring::new` is the
//! probe: it runs a multishot receive and a would-block send on a socketpair, so a kernel
//! that lacks either (multishot receive is 6.0), a disabled io_uring (sysctl
//! kernel.io_uring_disabled) or a seccomp filter that refuses it (many container runtimes)
//! all end as an error here, and the reactor keeps to epoll.

use io_uring::{cqueue, opcode, types, IoUring};
use std::alloc::{self, Layout};
use std::io;
use std::os::fd::RawFd;

pub use super::received::Received;

/// Bytes per provided receive buffer: what one completion carries at most, libuv's 64 KiB
/// read (a request's body reaches JS in node's chunks: how full its buffer is after one read
/// is observable, test/parity-conn.test.js).
pub const BUF_SIZE: usize = 64 * 1024;
/// Provided receive buffers (4 MiB, touched only as the kernel fills them). A receive that
/// finds none ends its multishot with ENOBUFS, and the driver arms it again once buffers are
/// back.
const BUF_COUNT: u16 = 64;
const GROUP: u16 = 0;
const SQ_ENTRIES: u32 = 256;
/// Completions arrive between two reaps for every connection that received meanwhile.
const CQ_ENTRIES: u32 = 8192;

/// `user_data` of a send (its index in the batch is the low bits); connection ids (< 2^53)
/// tag receives.
const SEND_TAG: u64 = 1 << 63;
/// `user_data` of a cancellation.
const CANCEL_TAG: u64 = 1 << 62;

pub struct Ring {
    ring: std::mem::ManuallyDrop<IoUring>,
    /// The provided-buffer ring the kernel reads buffer addresses from (page-aligned).
    entries: *mut types::BufRingEntry,
    /// BUF_COUNT buffers of BUF_SIZE bytes that the kernel writes received bytes into; read
    /// here only between a completion and the buffer's return (`give_back`).
    buffers: *mut u8,
    tail: u16,
    /// Receive completions met while waiting for a batch's sends; taken with the next reap.
    pending: Vec<Received>,
    /// Sends' results (index in the batch, bytes or -errno) met in the completion queue.
    sent: Vec<(usize, i32)>,
}

fn entries_layout() -> Layout {
    let size = std::mem::size_of::<types::BufRingEntry>() * BUF_COUNT as usize;
    Layout::from_size_align(size, 4096).expect("a page-aligned layout")
}

fn buffers_layout() -> Layout {
    Layout::from_size_align(BUF_SIZE * BUF_COUNT as usize, 4096).expect("a page-aligned layout")
}

impl Ring {
    /// A ring with its receive buffers, after the probe said both operations the driver
    /// relies on work here.
    pub fn new() -> io::Result<Ring> {
        // COOP_TASKRUN: the receives' completions run at the thread's next entry into the
        // kernel (or wake it where it sleeps in epoll_wait) instead of interrupting JS with an
        // IPI: hello 11.5 against 14.5 µs/request (A/B, bench/README). DEFER_TASKRUN hangs
        // here: its deferred work does not make the ring's fd readable.
        let ring = IoUring::builder()
            .dontfork()
            .setup_cqsize(CQ_ENTRIES)
            .setup_coop_taskrun()
            .build(SQ_ENTRIES)?;
        // SAFETY: non-zero sizes; both regions are freed in Drop with the same layouts.
        let (entries, buffers) = unsafe {
            (
                alloc::alloc_zeroed(entries_layout()).cast::<types::BufRingEntry>(),
                alloc::alloc(buffers_layout()),
            )
        };
        if entries.is_null() || buffers.is_null() {
            return Err(io::ErrorKind::OutOfMemory.into());
        }
        let mut r = Ring {
            ring: std::mem::ManuallyDrop::new(ring),
            entries,
            buffers,
            tail: 0,
            pending: Vec::new(),
            sent: Vec::new(),
        };
        // SAFETY: `entries` holds BUF_COUNT entries, page-aligned, and lives until the ring
        // is closed (Drop unregisters nothing: closing the ring releases the registration).
        unsafe {
            r.ring
                .submitter()
                .register_buf_ring_with_flags(entries as u64, BUF_COUNT, GROUP, 0)?;
        }
        for bid in 0..BUF_COUNT {
            r.give_back(bid);
        }
        r.self_test()?;
        Ok(r)
    }

    pub fn fd(&self) -> RawFd {
        use std::os::fd::AsRawFd;
        self.ring.as_raw_fd()
    }

    /// Returns buffer `bid` to the kernel.
    pub fn give_back(&mut self, bid: u16) {
        let mask = BUF_COUNT - 1;
        // SAFETY: the slot index is within the BUF_COUNT entries; the tail store is the
        // kernel's signal that the entry is filled, so it is a release store after it.
        unsafe {
            let e = &mut *self.entries.add((self.tail & mask) as usize);
            e.set_addr(self.buffers.add(bid as usize * BUF_SIZE) as u64);
            e.set_len(BUF_SIZE as u32);
            e.set_bid(bid);
            self.tail = self.tail.wrapping_add(1);
            let tail =
                types::BufRingEntry::tail(self.entries) as *const std::sync::atomic::AtomicU16;
            (*tail).store(self.tail, std::sync::atomic::Ordering::Release);
        }
    }

    /// The first `len` bytes of buffer `bid`, which a completion says the kernel filled.
    ///
    /// # Safety
    /// `bid` and `len` must come from one receive completion, and the buffer must not have
    /// been given back yet (the kernel may refill it after).
    pub unsafe fn bytes(&self, bid: u16, len: usize) -> &[u8] {
        debug_assert!(bid < BUF_COUNT && len <= BUF_SIZE);
        // SAFETY: the caller's contract: the kernel wrote `len` bytes there and owns the
        // buffer no more until it is given back.
        unsafe { std::slice::from_raw_parts(self.buffers.add(bid as usize * BUF_SIZE), len) }
    }

    fn push(&mut self, e: io_uring::squeue::Entry) -> io::Result<()> {
        // SAFETY: every entry built here points at nothing (receives use provided buffers,
        // cancellations name a user_data) or at memory the caller keeps until its completion
        // (`send_batch`).
        unsafe {
            if self.ring.submission().push(&e).is_err() {
                self.submit_now()?;
                self.ring
                    .submission()
                    .push(&e)
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
        }
        Ok(())
    }

    /// Submits what the queue holds. A full completion queue (EBUSY) or a signal is waited
    /// out, completions kept: entries left unsubmitted would name memory the caller reuses.
    fn submit_now(&mut self) -> io::Result<()> {
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EBUSY | libc::EAGAIN | libc::EINTR)
                    ) =>
                {
                    self.drain();
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Arms a multishot receive on `fd` for connection `id`, submitted at once.
    pub fn arm(&mut self, fd: RawFd, id: u64) -> io::Result<()> {
        let e = opcode::RecvMulti::new(types::Fd(fd), GROUP)
            .build()
            .user_data(id);
        self.push(e)?;
        self.submit_now()
    }

    /// Cancels connection `id`'s receive, submitted at once (its socket is about to close,
    /// or its reading paused); the receive ends with a last completion.
    pub fn cancel(&mut self, id: u64) -> io::Result<()> {
        let e = opcode::AsyncCancel::new(id).build().user_data(CANCEL_TAG);
        self.push(e)?;
        self.submit_now()
    }

    /// Whether receive completions wait that `send_batch` took from the queue.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Takes every receive completion there is.
    pub fn take(&mut self, out: &mut Vec<Received>) {
        out.append(&mut self.pending);
        self.drain();
        // Completions that found the queue full wait in the kernel (IORING_FEAT_NODROP)
        // until an enter flushes them; no new readiness edge announces them.
        for _ in 0..64 {
            if !self.ring.submission().cq_overflow() || self.submit_now().is_err() {
                break;
            }
            self.drain();
        }
        out.append(&mut self.pending);
    }

    /// Moves the completion queue's entries out: receives to `pending`, sends' results to
    /// `sent`.
    fn drain(&mut self) {
        for cqe in self.ring.completion() {
            let ud = cqe.user_data();
            if ud & SEND_TAG != 0 {
                self.sent.push(((ud & !SEND_TAG) as usize, cqe.result()));
            } else if ud & CANCEL_TAG == 0 {
                self.pending.push(Received {
                    id: ud,
                    result: cqe.result(),
                    buffer: cqueue::buffer_select(cqe.flags()),
                    more: cqueue::more(cqe.flags()),
                });
            }
        }
    }

    /// Moves the sends' results that came into `results`; how many.
    fn take_sent(&mut self, results: &mut [i32]) -> usize {
        let mut n = 0;
        for (i, res) in self.sent.drain(..) {
            if let Some(slot) = results.get_mut(i) {
                *slot = res;
                n += 1;
            }
        }
        n
    }

    /// Sends each message on its socket, all submitted with one `io_uring_enter`. With
    /// MSG_DONTWAIT a full socket completes at once with -EAGAIN instead of waiting, so every
    /// send is done when the call returns; `results[i]` is message i's (bytes or -errno).
    /// An error is the ring's own (not a send's): only one the kernel never gives for a
    /// live ring (EBADF, EFAULT) would leave a send unsubmitted.
    ///
    /// # Safety
    /// Every message's iovecs and bytes must stay valid until this returns.
    pub unsafe fn send_batch(
        &mut self,
        msgs: &[libc::msghdr],
        fds: &[RawFd],
        results: &mut [i32],
    ) -> io::Result<()> {
        let flags = (libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) as u32;
        self.sent.clear();
        let mut from = 0;
        while from < msgs.len() {
            let to = msgs.len().min(from + SQ_ENTRIES as usize);
            for i in from..to {
                let e = opcode::SendMsg::new(types::Fd(fds[i]), &msgs[i])
                    .flags(flags)
                    .build()
                    .user_data(SEND_TAG | i as u64);
                self.push(e)?;
                results[i] = i32::MIN;
            }
            self.submit_now()?;
            self.drain();
            let mut done = self.take_sent(results);
            if done < to - from {
                // Not expected (MSG_DONTWAIT sends complete inline), but a send still in
                // flight would write from memory the caller is about to reuse: cancel what
                // is left and wait for its last completion.
                for (i, &res) in results.iter().enumerate().take(to).skip(from) {
                    if res == i32::MIN {
                        let e = opcode::AsyncCancel::new(SEND_TAG | i as u64)
                            .build()
                            .user_data(CANCEL_TAG);
                        self.push(e)?;
                    }
                }
                while done < to - from {
                    self.ring.submit_and_wait(1)?;
                    self.drain();
                    done += self.take_sent(results);
                }
            }
            from = to;
        }
        Ok(())
    }

    /// The probe: a multishot receive on a socketpair takes two writes as two completions
    /// and goes on; a send to a full socket completes at once with EAGAIN.
    fn self_test(&mut self) -> io::Result<()> {
        let mut fds = [0; 2];
        // SAFETY: socketpair fills the two-element array.
        let rc = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let result = self.self_test_on(fds[0], fds[1]);
        // SAFETY: both fds are ours and closed once.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        result
    }

    fn self_test_on(&mut self, a: RawFd, b: RawFd) -> io::Result<()> {
        const ID: u64 = 1;
        let refused = |what: &str| io::Error::new(io::ErrorKind::Unsupported, what.to_string());
        self.arm(a, ID)?;
        let mut got = Vec::new();
        for byte in [b"x", b"y"] {
            // SAFETY: b is an open socket; one byte from a static.
            if unsafe { libc::write(b, byte.as_ptr().cast(), 1) } != 1 {
                return Err(io::Error::last_os_error());
            }
            self.ring.submit_and_wait(1)?;
            self.take(&mut got);
        }
        let ok = got.len() == 2 && got.iter().all(|g| g.result == 1 && g.more);
        for g in &got {
            if let Some(bid) = g.buffer {
                self.give_back(bid);
            }
        }
        if !ok {
            return Err(refused("multishot receive with provided buffers"));
        }
        self.cancel(ID)?;
        // The cancellation's own completion ends every wait; its receive's last one comes
        // with it or just after.
        let mut ended = false;
        for _ in 0..16 {
            let mut last = Vec::new();
            self.ring.submit_and_wait(1)?;
            self.take(&mut last);
            if last.iter().any(|g| !g.more) {
                ended = true;
                break;
            }
        }
        if !ended {
            return Err(refused("cancelling a multishot receive"));
        }
        // Fill b's send buffer (a's receive queue), then one more send must not wait.
        let chunk = [0u8; 4096];
        // SAFETY: b is an open socket; the chunk is on the stack.
        while unsafe { libc::send(b, chunk.as_ptr().cast(), chunk.len(), libc::MSG_DONTWAIT) } > 0 {
        }
        let iov = libc::iovec {
            iov_base: chunk.as_ptr() as *mut libc::c_void,
            iov_len: chunk.len(),
        };
        // SAFETY: an all-zero msghdr is valid; it points at one iovec on this stack frame.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &iov as *const libc::iovec as *mut libc::iovec;
        msg.msg_iovlen = 1;
        let mut result = [0];
        // SAFETY: the message and its bytes live until send_batch returns.
        unsafe { self.send_batch(&[msg], &[b], &mut result)? };
        if result[0] != -libc::EAGAIN {
            return Err(refused("sends that do not wait"));
        }
        Ok(())
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Receives still armed would write into the buffers until the kernel is done with the
        // ring, which closing its fd does not wait for: cancel every request and wait for
        // that, then close, then free.
        let all = types::CancelBuilder::any();
        let e = opcode::AsyncCancel2::new(all).build().user_data(CANCEL_TAG);
        if self.push(e).is_ok() && self.ring.submit_and_wait(1).is_ok() {
            self.drain();
        }
        // SAFETY: dropped once, here; nothing uses the ring after.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.ring) };
        // SAFETY: allocated in `new` with these layouts; the ring that used them is closed.
        unsafe {
            alloc::dealloc(self.entries.cast(), entries_layout());
            alloc::dealloc(self.buffers, buffers_layout());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_runs_here() {
        // The machines this crate is tested on offer io_uring; where one does not, the
        // probe's error is the answer and the reactor uses epoll.
        match Ring::new() {
            Ok(r) => assert!(r.fd() >= 0),
            Err(e) => eprintln!("io_uring unavailable: {e}"),
        }
    }
}
