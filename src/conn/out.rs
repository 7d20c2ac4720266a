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

#[derive(Default)]
pub struct OutQueue {
    segs: VecDeque<Seg>,
    /// Bytes of the front segment already written.
    front_pos: usize,
    /// Bytes ever queued / written, so positions survive segments coming and going.
    total_in: u64,
    total_out: u64,
    /// The response whose bytes may go on the wire now.
    pub active: u32,
    /// A finished response asked for the connection to close after it.
    pub close_after: bool,
    /// Where bytes of responses released from `later` begin (an absolute position), until
    /// the batch that released them ends: node writes such responses only on the earlier
    /// one's 'finish' (a tick later), so a destroy in the same batch must not send them.
    tentative: Option<u64>,
    later: VecDeque<Later>,
    /// Emptied owned buffers, for the caller to reuse.
    spare: Vec<Vec<u8>>,
}

impl std::fmt::Debug for OutQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "OutQueue {{ queued: {}, active: {}, later: {} }}",
            self.queued(),
            self.active,
            self.later.len()
        )
    }
}

impl OutQueue {
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
        self.total_in += bytes.len() as u64;
        if let Some(Seg::Owned(last)) = self.segs.back_mut() {
            if bytes.len() <= APPEND_COPY_MAX || last.is_empty() {
                last.extend_from_slice(&bytes);
                bytes.clear();
                return Some(bytes);
            }
        }
        self.segs.push_back(Seg::Owned(bytes));
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
        if !matches!(self.segs.back(), Some(Seg::Owned(_))) {
            let buf = self.spare.pop().unwrap_or_default();
            self.segs.push_back(Seg::Owned(buf));
        }
        match self.segs.back_mut() {
            Some(Seg::Owned(v)) => Some(v),
            _ => None,
        }
    }

    /// `n` bytes were appended through `tail` to the active response.
    pub fn pushed(&mut self, n: usize) {
        self.total_in += n as u64;
    }

    /// Queues memory owned elsewhere for the active response.
    pub fn push_pinned(&mut self, p: Pinned) -> Result<(), Pinned> {
        if self.close_after || p.len == 0 {
            return Err(p);
        }
        self.total_in += p.len as u64;
        self.segs.push_back(Seg::Pinned(p));
        Ok(())
    }

    fn later_bytes(&mut self, seq: u32) -> Option<&mut Vec<u8>> {
        if self.close_after || seq < self.active {
            return None;
        }
        let i = match self.later.binary_search_by_key(&seq, |l| l.seq) {
            Ok(i) => i,
            Err(i) => {
                self.later.insert(
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
        let l = &mut self.later[i];
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
            if let Ok(i) = self.later.binary_search_by_key(&seq, |l| l.seq) {
                self.later[i].done = true;
                self.later[i].close = close;
            }
            return 0;
        }
        let mut completed = 1;
        if close {
            self.close_after = true;
            self.later.clear();
            return completed;
        }
        self.active += 1;
        while let Some(front) = self.later.front() {
            if front.seq != self.active {
                break;
            }
            let Some(l) = self.later.pop_front() else {
                break;
            };
            if self.tentative.is_none() && !l.bytes.is_empty() {
                self.tentative = Some(self.total_in);
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
                self.later.clear();
                break;
            }
            self.active += 1;
        }
        completed
    }

    /// Marks everything queued from now on as tentative (see the field), unless already.
    pub fn mark_tentative(&mut self) {
        if self.tentative.is_none() {
            self.tentative = Some(self.total_in);
        }
    }

    /// The batch that released tentative bytes ended: they may go out.
    pub fn confirm(&mut self) {
        self.tentative = None;
    }

    /// Bytes not yet accepted by the kernel, including responses waiting their turn.
    pub fn queued(&self) -> usize {
        (self.total_in - self.total_out) as usize
            + self.later.iter().map(|l| l.bytes.len()).sum::<usize>()
    }

    /// Bytes of the active stream not yet written (without responses waiting their turn).
    pub fn unsent(&self) -> usize {
        (self.total_in - self.total_out) as usize
    }

    pub fn is_flushed(&self) -> bool {
        self.total_in == self.total_out
    }

    /// Up to MAX_SLICES slices of what may be written now, in order; with `confirmed_only`,
    /// not past the tentative mark. Returns how many slices were filled.
    pub fn slices<'a>(
        &'a self,
        out: &mut [IoSlice<'a>; MAX_SLICES],
        confirmed_only: bool,
    ) -> usize {
        let mut limit = self.unsent();
        if confirmed_only {
            if let Some(t) = self.tentative {
                limit = limit.min(t.saturating_sub(self.total_out) as usize);
            }
        }
        let mut n = 0;
        for (i, seg) in self.segs.iter().enumerate() {
            if n == MAX_SLICES || limit == 0 {
                break;
            }
            let mut b = seg.bytes();
            if i == 0 {
                b = &b[self.front_pos.min(b.len())..];
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
        self.total_out += n as u64;
        while n > 0 {
            let Some(front) = self.segs.front() else {
                break;
            };
            let left = front.bytes().len() - self.front_pos;
            if n < left {
                self.front_pos += n;
                return;
            }
            n -= left;
            self.pop_front();
        }
        // Empty segments (none are queued, but a drained owned tail may remain).
        while matches!(self.segs.front(), Some(s) if s.bytes().len() == self.front_pos) {
            self.pop_front();
        }
        if self.total_in == self.total_out {
            self.tentative = None;
        }
    }

    fn pop_front(&mut self) {
        self.front_pos = 0;
        if let Some(Seg::Owned(mut v)) = self.segs.pop_front() {
            if v.capacity() > 0 && self.spare.len() < 2 {
                v.clear();
                self.spare.push(v);
            }
        }
    }

    /// An emptied buffer to reuse, if any.
    pub fn take_spare(&mut self) -> Option<Vec<u8>> {
        self.spare.pop()
    }

    /// Drops everything not yet written (the connection closes).
    pub fn clear(&mut self) {
        self.segs.clear();
        self.later.clear();
        self.front_pos = 0;
        self.total_out = self.total_in;
        self.tentative = None;
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

    #[test]
    fn released_responses_are_tentative_until_confirmed() {
        let mut q = OutQueue::default();
        q.push(1, b"B".to_vec());
        q.finish(1, false);
        q.push(0, b"A".to_vec());
        q.finish(0, false);
        assert_eq!(written(&mut q, true), b"A");
        assert!(!q.is_flushed());
        q.confirm();
        assert_eq!(written(&mut q, true), b"B");
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
