//! The few libuv calls the reactor needs. Node exports libuv's symbols to addons, so these
//! resolve against the running node binary at load time.

#![allow(non_camel_case_types)]

use std::os::raw::{c_int, c_uint};

#[repr(C)]
pub struct uv_loop_t {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct uv_handle_t {
    _opaque: [u8; 0],
}

pub type uv_poll_cb = unsafe extern "C" fn(handle: *mut uv_handle_t, status: c_int, events: c_int);
pub type uv_timer_cb = unsafe extern "C" fn(handle: *mut uv_handle_t);
pub type uv_close_cb = unsafe extern "C" fn(handle: *mut uv_handle_t);

/// `uv_handle_type` values from uv.h.
pub const UV_IDLE: c_int = 6;
pub const UV_POLL: c_int = 8;
pub const UV_TIMER: c_int = 13;
/// `uv_poll_event` UV_READABLE.
pub const UV_READABLE: c_int = 1;

/// libuv 1.52.0 as `uv_version()` numbers it (major << 16 | minor << 8 | patch).
pub const UV_1_52: c_uint = 0x01_34_00;

extern "C" {
    pub fn uv_version() -> c_uint;
    pub fn uv_handle_size(kind: c_int) -> usize;
    pub fn uv_poll_init(lp: *mut uv_loop_t, handle: *mut uv_handle_t, fd: c_int) -> c_int;
    pub fn uv_poll_start(handle: *mut uv_handle_t, events: c_int, cb: uv_poll_cb) -> c_int;
    pub fn uv_timer_init(lp: *mut uv_loop_t, handle: *mut uv_handle_t) -> c_int;
    pub fn uv_idle_init(lp: *mut uv_loop_t, handle: *mut uv_handle_t) -> c_int;
    pub fn uv_idle_start(handle: *mut uv_handle_t, cb: uv_timer_cb) -> c_int;
    pub fn uv_idle_stop(handle: *mut uv_handle_t) -> c_int;
    pub fn uv_timer_start(
        handle: *mut uv_handle_t,
        cb: uv_timer_cb,
        timeout: u64,
        repeat: u64,
    ) -> c_int;
    pub fn uv_close(handle: *mut uv_handle_t, cb: uv_close_cb);
    pub fn uv_ref(handle: *mut uv_handle_t);
    pub fn uv_unref(handle: *mut uv_handle_t);
    pub fn uv_now(lp: *const uv_loop_t) -> u64;
    pub fn uv_handle_set_data(handle: *mut uv_handle_t, data: *mut std::ffi::c_void);
    pub fn uv_handle_get_data(handle: *const uv_handle_t) -> *mut std::ffi::c_void;
}

/// Allocates zeroed storage for a handle of `kind`; freed by [`free_handle`] from the close
/// callback.
pub fn alloc_handle(kind: c_int) -> *mut uv_handle_t {
    // SAFETY: uv_handle_size only reads a table in libuv.
    let size = unsafe { uv_handle_size(kind) };
    let words = size.div_ceil(8);
    let storage: Box<[u64]> = vec![0u64; words].into_boxed_slice();
    Box::into_raw(storage) as *mut u64 as *mut uv_handle_t
}

/// Close callback that frees storage from [`alloc_handle`].
///
/// # Safety
/// `handle` must come from `alloc_handle` with the same `kind` and be closed.
pub unsafe fn free_handle(handle: *mut uv_handle_t, kind: c_int) {
    // SAFETY: the caller guarantees the allocation came from alloc_handle(kind).
    unsafe {
        let words = uv_handle_size(kind).div_ceil(8);
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            handle as *mut u64,
            words,
        )));
    }
}
