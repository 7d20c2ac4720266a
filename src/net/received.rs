//! What the completion driver's ring reports of a receive: the one type `uring.rs` and
//! `uring_none.rs` share.

/// One completion of a receive: the connection, the result (bytes, 0 for the end of the
/// input, or -errno), the buffer it filled, and whether the multishot goes on.
#[derive(Clone, Copy, Debug)]
pub struct Received {
    pub id: u64,
    pub result: i32,
    pub buffer: Option<u16>,
    pub more: bool,
}
