//! Output in request order (RFC 9112 §9.3.2): the active response's bytes go straight into
//! the queue; a pipelined response that finishes early waits in `later` until every earlier
//! response has finished. Queued bytes are owned, or pinned: the memory of a large JS Buffer
//! kept alive by a reference (node's writev keeps Buffers the same way), so a backlog an app
//! writes costs what it costs node, not a copy.

use std::collections::VecDeque;
use std::io::IoSlice;

/// Owned bytes appended to a pinned or large segment go into a new segment from this size;
/// smaller ones are copied onto the end of the last owned segment.
const APPEND_COPY_MAX: usize = 4096;
/// Most slices handed to one writev.
pub const MAX_SLICES: usize = 64;
/// Emptied owned buffers a queue keeps for reuse (`take_spare`).
pub const SPARE_MAX: usize = 2;

/// A byte range whose memory belongs to someone else, kept alive by `keep`.
pub struct Pinned {
    ptr: *const u8,
    len: usize,
    /// Keeps the memory at `ptr` alive and unmoved (a strong reference to a JS Buffer).
    _keep: Box<dyn std::any::Any>,
}

impl Pinned {
    /// # Safety
    /// `ptr..ptr+len` must stay valid and unmoved for as long as `keep` lives (an off-heap
    /// Buffer backing store held by a strong reference).
    pub unsafe fn new(ptr: *const u8, len: usize, keep: Box<dyn std::any::Any>) -> Pinned {
        Pinned {
            ptr,
            len,
            _keep: keep,
        }
    }

    fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: Pinned::new's contract keeps ptr..ptr+len valid while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

enum Seg {
    Owned(Vec<u8>),
    Pinned(Pinned),
}

impl Seg {
    fn bytes(&self) -> &[u8] {
        match self {
            Seg::Owned(v) => v,
            Seg::Pinned(p) => p.bytes(),
        }
    }
}

/// A response that may not go on the wire yet because an earlier one is unfinished.
#[derive(Debug)]
struct Later {
    seq: u32,
    bytes: Vec<u8>,
    done: bool,
    close: bool,
}

/// A connection's output. An idle connection holds only `active` and `close_after`: the
/// queue itself is taken from a per-thread pool when bytes arrive and goes back once it is
/// written out (`release`), so 10,000 idle keep-alive connections do not each keep ~300 B
/// of queue and segment buffers (issue #20's memory row).
#[derive(Default)]
pub struct OutQueue {
    /// The response whose bytes may go on the wire now.
    pub active: u32,
    /// A finished response asked for the connection to close after it.
    pub close_after: bool,
    q: Option<Box<Queue>>,
}

#[derive(Default)]
struct Queue {
    segs: VecDeque<Seg>,
    /// Bytes of the front segment already written.
    front_pos: usize,
    /// Bytes queued / written since the queue was taken, so positions survive segments
    /// coming and going.
    total_in: u64,
    total_out: u64,
    /// Responses released from `later` (their seq, and where their bytes begin), oldest
    /// first, until the batch that released them ends: node writes each only on the 'finish'
    /// of the one before (a tick later), so a destroy in the same batch sends none of them
    /// but those JS has given the socket to by then (`confirm_through`).
    tentative: VecDeque<(u32, u64)>,
    later: VecDeque<Later>,
    /// Emptied owned buffers, for the caller to reuse.
    spare: Vec<Vec<u8>>,
}

/// Queues kept for reuse: enough for the connections writing at one time, not one per
/// connection.
const POOL_MAX: usize = 256;
/// Segment slots a pooled queue may keep.
const POOLED_SEGS_MAX: usize = 16;

thread_local! {
    // Boxes, as the connections hold them: taking one from the pool moves a pointer.
    #[allow(clippy::vec_box)]
    static POOL: std::cell::RefCell<Vec<Box<Queue>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Queue {
    fn unsent(&self) -> usize {
        (self.total_in - self.total_out) as usize
    }

    fn is_idle(&self) -> bool {
        self.segs.is_empty()
            && self.later.is_empty()
            && self.tentative.is_empty()
            && self.spare.is_empty()
    }

    fn pop_front(&mut self) {
        self.front_pos = 0;
        if let Some(Seg::Owned(mut v)) = self.segs.pop_front() {
            if v.capacity() > 0 && self.spare.len() < SPARE_MAX {
                v.clear();
                self.spare.push(v);
            }
        }
    }
}

impl std::fmt::Debug for OutQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "OutQueue {{ queued: {}, active: {}, later: {} }}",
            self.queued(),
            self.active,
            self.q.as_ref().map_or(0, |q| q.later.len())
        )
    }
}

impl OutQueue {
    fn q(&mut self) -> &mut Queue {
        self.q
            .get_or_insert_with(|| POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default())
    }

    /// Whether the connection holds a queue (none once its output is written out).
    #[cfg(test)]
    pub fn holds_queue(&self) -> bool {
        self.q.is_some()
    }

    /// Gives the queue back to the pool once nothing is queued, waiting or tentative (its
    /// spare buffers first go to the caller through `take_spare`).
    pub fn release(&mut self) {
        if !self.q.as_ref().is_some_and(|q| q.is_idle()) {
            return;
        }
        let Some(mut q) = self.q.take() else {
            return;
        };
        // A queue that grew for a backlog is freed, not kept for every later response.
        if q.segs.capacity() > POOLED_SEGS_MAX || q.later.capacity() > POOLED_SEGS_MAX {
            return;
        }
        q.front_pos = 0;
        q.total_in = 0;
        q.total_out = 0;
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < POOL_MAX {
                p.push(q);
            }
        });
    }

    /// Appends owned bytes of response `seq` (dropped when it cannot take them). Small
    /// appends are copied onto the last segment, and `bytes` is handed back for reuse.
    pub fn push(&mut self, seq: u32, mut bytes: Vec<u8>) -> Option<Vec<u8>> {
        if bytes.is_empty() {
            return Some(bytes);
        }
        if seq != self.active {
            let t = self.later_bytes(seq)?;
            if t.is_empty() {
                std::mem::swap(t, &mut bytes);
            } else {
                t.extend_from_slice(&bytes);
            }
            bytes.clear();
            return Some(bytes);
        }
        if self.close_after {
            return None;
        }
        let q = self.q();
        q.total_in += bytes.len() as u64;
        if let Some(Seg::Owned(last)) = q.segs.back_mut() {
            if bytes.len() <= APPEND_COPY_MAX || last.is_empty() {
                last.extend_from_slice(&bytes);
                bytes.clear();
                return Some(bytes);
            }
        }
        q.segs.push_back(Seg::Owned(bytes));
        None
    }

    /// The owned buffer that bytes of response `seq` can be appended to directly (the hot
    /// path of small writes), or None when it cannot take them. Call `pushed(n)` after
    /// appending `n` bytes to the active response's buffer.
    pub fn tail(&mut self, seq: u32) -> Option<&mut Vec<u8>> {
        if seq != self.active {
            return self.later_bytes(seq);
        }
        if self.close_after {
            return None;
        }
        let q = self.q();
        if !matches!(q.segs.back(), Some(Seg::Owned(_))) {
            let buf = q.spare.pop().unwrap_or_default();
            q.segs.push_back(Seg::Owned(buf));
        }
        match q.segs.back_mut() {
            Some(Seg::Owned(v)) => Some(v),
            _ => None,
        }
    }

    /// `n` bytes were appended through `tail` to the active response.
    pub fn pushed(&mut self, n: usize) {
        self.q().total_in += n as u64;
    }

    /// Queues memory owned elsewhere for the active response.
    pub fn push_pinned(&mut self, p: Pinned) -> Result<(), Pinned> {
        if self.close_after || p.len == 0 {
            return Err(p);
        }
        let q = self.q();
        q.total_in += p.len as u64;
        q.segs.push_back(Seg::Pinned(p));
        Ok(())
    }

    fn later_bytes(&mut self, seq: u32) -> Option<&mut Vec<u8>> {
        if self.close_after || seq < self.active {
            return None;
        }
        let later = &mut self.q().later;
        let i = match later.binary_search_by_key(&seq, |l| l.seq) {
            Ok(i) => i,
            Err(i) => {
                later.insert(
                    i,
                    Later {
                        seq,
                        bytes: Vec::new(),
                        done: false,
                        close: false,
                    },
                );
                i
            }
        };
        let l = &mut later[i];
        if l.done {
            None
        } else {
            Some(&mut l.bytes)
        }
    }

    /// Response `seq` is complete. Returns how many responses completed in order (0 when
    /// `seq` still waits behind an earlier one).
    pub fn finish(&mut self, seq: u32, close: bool) -> u32 {
        if self.close_after || seq < self.active {
            return 0;
        }
        if seq > self.active {
            let _ = self.later_bytes(seq);
            let later = &mut self.q().later;
            if let Ok(i) = later.binary_search_by_key(&seq, |l| l.seq) {
                later[i].done = true;
                later[i].close = close;
            }
            return 0;
        }
        let mut completed = 1;
        if close {
            self.close_after = true;
            if let Some(q) = self.q.as_mut() {
                q.later.clear();
            }
            return completed;
        }
        self.active += 1;
        while let Some(q) = self.q.as_mut() {
            if q.later.front().is_none_or(|l| l.seq != self.active) {
                break;
            }
            let Some(l) = q.later.pop_front() else {
                break;
            };
            if !l.bytes.is_empty() {
                q.tentative.push_back((self.active, q.total_in));
            }
            let done = l.done;
            let close = l.close;
            let _ = self.push(self.active, l.bytes);
            if !done {
                break;
            }
            completed += 1;
            if close {
                self.close_after = true;
                if let Some(q) = self.q.as_mut() {
                    q.later.clear();
                }
                break;
            }
            self.active += 1;
        }
        completed
    }

    /// The active response's bytes from now on are tentative (see the field): JS ended it
    /// while it waited.
    pub fn mark_tentative(&mut self) {
        let active = self.active;
        let q = self.q();
        if q.tentative.back().is_none_or(|&(seq, _)| seq != active) {
            q.tentative.push_back((active, q.total_in));
        }
    }

    /// JS gave the socket to response `seq` (node's assignSocket, on the earlier one's
    /// 'finish'): node has written it and those before, not those after.
    pub fn confirm_through(&mut self, seq: u32) {
        if let Some(q) = self.q.as_mut() {
            while q.tentative.front().is_some_and(|&(s, _)| s <= seq) {
                q.tentative.pop_front();
            }
        }
    }

    /// The batch that released tentative bytes ended: they may go out.
    pub fn confirm(&mut self) {
        if let Some(q) = self.q.as_mut() {
            q.tentative.clear();
        }
    }

    /// Bytes not yet accepted by the kernel, including responses waiting their turn.
    pub fn queued(&self) -> usize {
        self.q.as_ref().map_or(0, |q| {
            q.unsent() + q.later.iter().map(|l| l.bytes.len()).sum::<usize>()
        })
    }

    /// Bytes of the active stream not yet written (without responses waiting their turn).
    pub fn unsent(&self) -> usize {
        self.q.as_ref().map_or(0, |q| q.unsent())
    }

    pub fn is_flushed(&self) -> bool {
        self.unsent() == 0
    }

    /// Up to MAX_SLICES slices of what may be written now, in order; with `confirmed_only`,
    /// not past the tentative mark. Returns how many slices were filled.
    pub fn slices<'a>(
        &'a self,
        out: &mut [IoSlice<'a>; MAX_SLICES],
        confirmed_only: bool,
    ) -> usize {
        let Some(q) = self.q.as_ref() else {
            return 0;
        };
        let mut limit = q.unsent();
        if confirmed_only {
            if let Some(&(_, t)) = q.tentative.front() {
                limit = limit.min(t.saturating_sub(q.total_out) as usize);
            }
        }
        let mut n = 0;
        for (i, seg) in q.segs.iter().enumerate() {
            if n == MAX_SLICES || limit == 0 {
                break;
            }
            let mut b = seg.bytes();
            if i == 0 {
                b = &b[q.front_pos.min(b.len())..];
            }
            let b = &b[..b.len().min(limit)];
            if b.is_empty() {
                continue;
            }
            limit -= b.len();
            out[n] = IoSlice::new(b);
            n += 1;
        }
        n
    }

    /// `n` bytes of `slices()` were written.
    pub fn consume(&mut self, mut n: usize) {
        let Some(q) = self.q.as_mut() else {
            return;
        };
        q.total_out += n as u64;
        while n > 0 {
            let Some(front) = q.segs.front() else {
                break;
            };
            let left = front.bytes().len() - q.front_pos;
            if n < left {
                q.front_pos += n;
                return;
            }
            n -= left;
            q.pop_front();
        }
        // Empty segments (none are queued, but a drained owned tail may remain).
        while matches!(q.segs.front(), Some(s) if s.bytes().len() == q.front_pos) {
            q.pop_front();
        }
        if q.total_in == q.total_out {
            q.tentative.clear();
        }
    }

    /// An emptied buffer to reuse, if any.
    pub fn take_spare(&mut self) -> Option<Vec<u8>> {
        self.q.as_mut()?.spare.pop()
    }

    /// Drops everything not yet written (the connection closes).
    pub fn clear(&mut self) {
        if let Some(q) = self.q.as_mut() {
            q.segs.clear();
            q.later.clear();
            q.front_pos = 0;
            q.total_out = q.total_in;
            q.tentative.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(q: &mut OutQueue, confirmed_only: bool) -> Vec<u8> {
        let mut all = Vec::new();
        loop {
            let mut s = [IoSlice::new(&[]); MAX_SLICES];
            let n = q.slices(&mut s, confirmed_only);
            let bytes: Vec<u8> = s[..n].iter().flat_map(|s| s.to_vec()).collect();
            if bytes.is_empty() {
                return all;
            }
            let len = bytes.len();
            all.extend(bytes);
            q.consume(len);
        }
    }

    #[test]
    fn in_order_responses_go_straight_out() {
        let mut q = OutQueue::default();
        q.push(0, b"A".to_vec());
        assert_eq!(q.finish(0, false), 1);
        q.push(1, b"B".to_vec());
        assert_eq!(q.finish(1, false), 1);
        assert_eq!(written(&mut q, false), b"AB");
        assert!(q.is_flushed());
    }

    #[test]
    fn later_responses_wait_for_earlier_ones() {
        let mut q = OutQueue::default();
        q.push(2, b"C".to_vec());
        assert_eq!(q.finish(2, false), 0);
        q.push(1, b"B1".to_vec());
        assert_eq!(q.unsent(), 0);
        assert_eq!(q.queued(), 3);
        q.push(0, b"A".to_vec());
        assert_eq!(q.unsent(), 1);
        assert_eq!(q.finish(0, false), 1);
        // Response 1 is now active but unfinished: its early bytes move out, 2 still waits.
        assert_eq!(q.unsent(), 3);
        q.push(1, b"B2".to_vec());
        assert_eq!(q.finish(1, false), 2);
        assert_eq!(written(&mut q, false), b"AB1B2C");
        assert_eq!(q.active, 3);
    }

    #[test]
    fn close_drops_later_responses() {
        let mut q = OutQueue::default();
        q.push(1, b"B".to_vec());
        q.finish(1, false);
        q.push(0, b"A".to_vec());
        q.finish(0, true);
        assert!(q.close_after);
        assert!(q.push(1, b"x".to_vec()).is_none());
        assert_eq!(written(&mut q, false), b"A");
    }

    /// Responses 0.. with these bodies, ended last first: each one after the first ended
    /// while it waited, and is released when the one before it ends.
    fn ended_last_first(bodies: &[&[u8]]) -> OutQueue {
        let mut q = OutQueue::default();
        for (seq, body) in bodies.iter().enumerate().rev() {
            q.push(seq as u32, body.to_vec());
            q.finish(seq as u32, false);
        }
        q
    }

    #[test]
    fn released_responses_are_tentative_until_confirmed() {
        let mut q = ended_last_first(&[b"A", b"B"]);
        assert_eq!(written(&mut q, true), b"A");
        assert!(!q.is_flushed());
        q.confirm();
        assert_eq!(written(&mut q, true), b"B");
    }

    #[test]
    fn tentative_bytes_go_once_js_assigned_their_response() {
        let mut q = ended_last_first(&[b"A", b"B"]);
        // The socket still belongs to A in JS: B is not node's to send yet.
        q.confirm_through(0);
        assert_eq!(written(&mut q, true), b"A");
        assert!(!q.is_flushed());
        // A's 'finish' gave the socket to B: node has written B.
        q.confirm_through(1);
        assert_eq!(written(&mut q, true), b"B");
    }

    #[test]
    fn a_response_released_behind_a_released_one_waits_for_its_own_turn() {
        let mut q = ended_last_first(&[b"A", b"B", b"C"]);
        q.confirm_through(1);
        assert_eq!(written(&mut q, true), b"AB");
        q.confirm_through(2);
        assert_eq!(written(&mut q, true), b"C");
    }

    #[test]
    fn pinned_bytes_keep_their_place() {
        let body = b"BODY".to_vec();
        let mut q = OutQueue::default();
        q.push(0, b"head ".to_vec());
        // SAFETY: `body` outlives the queue's use of it (the queue is drained below).
        let p = unsafe { Pinned::new(body.as_ptr(), body.len(), Box::new(())) };
        assert!(q.push_pinned(p).is_ok());
        q.push(0, b" tail".to_vec());
        assert_eq!(q.queued(), 14);
        let mut s = [IoSlice::new(&[]); MAX_SLICES];
        assert_eq!(q.slices(&mut s, false), 3);
        q.consume(7);
        assert_eq!(written(&mut q, false), b"DY tail");
        assert!(q.is_flushed());
    }

    #[test]
    fn consume_tracks_what_is_left() {
        let mut q = OutQueue::default();
        q.push(0, vec![1u8; 100_000]);
        q.consume(50_000);
        assert_eq!(q.queued(), 50_000);
        q.consume(50_000);
        assert!(q.is_flushed());
        assert!(q.take_spare().is_some());
    }

    #[test]
    fn a_written_out_queue_goes_back_to_the_pool() {
        let mut q = OutQueue::default();
        q.tail(0).unwrap().extend_from_slice(b"first");
        q.pushed(5);
        q.finish(0, false);
        assert_eq!(written(&mut q, false), b"first");
        assert!(q.take_spare().is_some());
        q.release();
        assert!(q.q.is_none(), "an idle connection holds no queue");
        assert!(q.is_flushed());
        assert_eq!(q.queued(), 0);
        // The next response takes a queue again (from the pool), positions from zero.
        q.push(1, b"second".to_vec());
        assert_eq!(q.unsent(), 6);
        assert_eq!(written(&mut q, false), b"second");
    }

    #[test]
    fn a_queue_grown_for_a_backlog_is_freed_not_pooled() {
        let body = [7u8; 100];
        let mut q = OutQueue::default();
        for _ in 0..100 {
            // SAFETY: `body` outlives the queue's use of it (the queue is drained below).
            let p = unsafe { Pinned::new(body.as_ptr(), body.len(), Box::new(())) };
            assert!(q.push_pinned(p).is_ok());
        }
        q.finish(0, false);
        assert_eq!(written(&mut q, false).len(), 10_000);
        q.release();
        assert!(q.q.is_none());
        // What the pool hands out next is small.
        q.push(1, b"x".to_vec());
        assert!(q.q.as_ref().unwrap().segs.capacity() <= POOLED_SEGS_MAX);
    }

    #[test]
    fn a_queue_with_bytes_or_waiting_responses_is_kept() {
        let mut q = OutQueue::default();
        q.push(0, b"A".to_vec());
        q.release();
        assert_eq!(q.unsent(), 1, "unwritten bytes stay");
        assert_eq!(written(&mut q, false), b"A");
        q.push(2, b"C".to_vec());
        q.finish(2, false);
        while q.take_spare().is_some() {}
        q.release();
        assert_eq!(q.queued(), 1, "a response waiting its turn stays");
        q.finish(0, false);
        q.push(1, b"B".to_vec());
        q.finish(1, false);
        // C was released behind B in this batch: tentative until the batch ends.
        assert_eq!(written(&mut q, true), b"B");
        while q.take_spare().is_some() {}
        q.release();
        assert!(q.q.is_some(), "tentative bytes stay");
        q.confirm();
        assert_eq!(written(&mut q, true), b"C");
        while q.take_spare().is_some() {}
        q.release();
        assert!(q.q.is_none());
    }

    #[test]
    fn tail_appends_in_place() {
        let mut q = OutQueue::default();
        q.tail(0).unwrap().extend_from_slice(b"abc");
        q.pushed(3);
        q.tail(1).unwrap().extend_from_slice(b"later");
        assert_eq!(q.unsent(), 3);
        q.finish(0, false);
        assert_eq!(written(&mut q, false), b"abclater");
    }
}
