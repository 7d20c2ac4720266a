//! Thin helpers over raw Node-API: argument access, value creation, errors, and the panic
//! guard every entry point goes through.

// `napi_env` / `napi_value` are opaque handles that only Node dereferences (and checks);
// these helpers pass them through and never dereference them in Rust.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use napi::sys;
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

pub type Env = sys::napi_env;
pub type Value = sys::napi_value;

pub const MAX_ARGS: usize = 12;

/// Runs an entry point; a panic becomes a thrown JS error instead of unwinding into Node.
pub fn guard(env: Env, f: impl FnOnce() -> Value) -> Value {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => {
            throw_error(env, "ERR_FAST_HTTP_INTERNAL", "fast-http: internal error");
            ptr::null_mut()
        }
    }
}

pub fn throw_error(env: Env, code: &str, msg: &str) {
    let code = CString::new(code).unwrap_or_default();
    let msg = CString::new(msg).unwrap_or_default();
    // SAFETY: env is the live env of the current call; strings are NUL-terminated.
    unsafe {
        sys::napi_throw_error(env, code.as_ptr(), msg.as_ptr());
    }
}

/// Throws a TypeError with `code`.
pub fn throw_type_error(env: Env, code: &str, msg: &str) {
    let code = CString::new(code).unwrap_or_default();
    let msg = CString::new(msg).unwrap_or_default();
    // SAFETY: env is the live env of the current call; strings are NUL-terminated.
    unsafe {
        sys::napi_throw_type_error(env, code.as_ptr(), msg.as_ptr());
    }
}

/// The arguments of one JS → native call.
pub struct Args {
    pub env: Env,
    pub argv: [Value; MAX_ARGS],
    pub argc: usize,
    /// Every argument, when the call has more than `MAX_ARGS` (a `Rest` argument's batch).
    pub all: Vec<Value>,
}

impl Args {
    /// The arguments and the `data` pointer the function was created with.
    ///
    /// # Safety
    /// `env` and `info` must be the ones Node passed to the current callback.
    pub unsafe fn with_data(
        env: Env,
        info: sys::napi_callback_info,
    ) -> (Args, *mut std::ffi::c_void) {
        let mut argv = [ptr::null_mut(); MAX_ARGS];
        let mut argc = MAX_ARGS;
        let mut data = ptr::null_mut();
        // SAFETY: argv has room for argc values, as napi_get_cb_info requires.
        unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                ptr::null_mut(),
                &mut data,
            );
        }
        let mut all = Vec::new();
        if argc > MAX_ARGS {
            all = vec![ptr::null_mut(); argc];
            let mut n = argc;
            // SAFETY: `all` has room for n values, as napi_get_cb_info requires.
            unsafe {
                sys::napi_get_cb_info(
                    env,
                    info,
                    &mut n,
                    all.as_mut_ptr(),
                    ptr::null_mut(),
                    ptr::null_mut(),
                );
            }
            all.truncate(n);
        }
        let a = Args {
            env,
            argv,
            argc,
            all,
        };
        (a, data)
    }

    pub fn get(&self, i: usize) -> Option<Value> {
        if i >= self.argc {
            None
        } else if self.all.is_empty() {
            Some(self.argv[i])
        } else {
            Some(self.all[i])
        }
    }

    /// The arguments from `i` on.
    pub fn from(&self, i: usize) -> &[Value] {
        let all = if self.all.is_empty() {
            &self.argv[..self.argc.min(MAX_ARGS)]
        } else {
            &self.all[..]
        };
        all.get(i..).unwrap_or(&[])
    }
}

#[derive(Clone, Copy)]
pub enum Encoding {
    Latin1,
    Utf8,
}

/// Strings up to this many units are written as UTF-8 into 3 bytes of room per unit.
const ONE_PASS_UTF8: usize = 16 * 1024;

/// Appends a JS string's bytes to `out`. False when `v` is not a string.
pub fn string_into(env: Env, v: Value, out: &mut Vec<u8>, enc: Encoding) -> bool {
    let mut len = 0usize;
    // SAFETY: a null buffer asks only for the length in latin1 units (the string's length,
    // no scan); status tells whether v is a string.
    let status = unsafe { sys::napi_get_value_string_latin1(env, v, ptr::null_mut(), 0, &mut len) };
    if status != sys::Status::napi_ok {
        return false;
    }
    if len == 0 {
        return true;
    }
    if let Encoding::Utf8 = enc {
        // A UTF-16 unit takes at most 3 UTF-8 bytes: short strings are written in one pass
        // instead of measuring their UTF-8 length first (a second full scan).
        if len <= ONE_PASS_UTF8 {
            len *= 3;
        } else {
            // SAFETY: as above; asks for the UTF-8 length.
            unsafe { sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len) };
        }
    }
    let start = out.len();
    out.reserve(len + 1);
    let mut written = 0usize;
    // SAFETY: `out` has at least len + 1 bytes of spare capacity; Node writes at most
    // len bytes plus a NUL terminator, and we only expose the `written` bytes.
    unsafe {
        let dst = out.as_mut_ptr().add(start) as *mut std::os::raw::c_char;
        match enc {
            Encoding::Latin1 => {
                sys::napi_get_value_string_latin1(env, v, dst, len + 1, &mut written)
            }
            Encoding::Utf8 => sys::napi_get_value_string_utf8(env, v, dst, len + 1, &mut written),
        };
        out.set_len(start + written.min(len));
    }
    true
}

/// A strong reference to a JS value, released when dropped (on the JS thread: connections
/// and the reactor are only dropped there, at the latest from the env's cleanup hook).
pub struct JsRef {
    env: Env,
    r: sys::napi_ref,
}

impl JsRef {
    pub fn new(env: Env, v: Value) -> Option<JsRef> {
        let mut r = ptr::null_mut();
        // SAFETY: v is a live value of the current call; one strong reference.
        let status = unsafe { sys::napi_create_reference(env, v, 1, &mut r) };
        (status == sys::Status::napi_ok && !r.is_null()).then_some(JsRef { env, r })
    }
}

impl Drop for JsRef {
    fn drop(&mut self) {
        // SAFETY: r was created on this env, which is alive (see the type's comment), and is
        // deleted exactly once.
        unsafe { sys::napi_delete_reference(self.env, self.r) };
    }
}

/// A TypedArray's element type, memory and length in elements (Node moves an array kept on
/// the V8 heap off it first, so the memory stays where it is while the array lives).
pub fn typed_array(env: Env, v: Value) -> (sys::napi_typedarray_type, *mut u8, usize) {
    let mut kind = 0;
    let mut len = 0usize;
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    let mut ab = ptr::null_mut();
    let mut offset = 0usize;
    // SAFETY: v is a TypedArray of the current call; `data` points at its first element.
    unsafe {
        sys::napi_get_typedarray_info(env, v, &mut kind, &mut len, &mut data, &mut ab, &mut offset)
    };
    (kind, data as *mut u8, len)
}

/// Whether `v` is a TypedArray.
pub fn is_typed_array(env: Env, v: Value) -> bool {
    let mut is_ta = false;
    // SAFETY: v is a live value of the current call.
    unsafe { sys::napi_is_typedarray(env, v, &mut is_ta) };
    is_ta
}

/// The bytes of a Buffer, TypedArray or ArrayBuffer-backed view.
pub fn bytes_of<'a>(env: Env, v: Value) -> Option<&'a [u8]> {
    if !is_typed_array(env, v) {
        let mut is_buf = false;
        // SAFETY: v is a live value of the current call.
        unsafe { sys::napi_is_buffer(env, v, &mut is_buf) };
        if !is_buf {
            return None;
        }
        let mut data: *mut std::ffi::c_void = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: v is a Buffer.
        unsafe { sys::napi_get_buffer_info(env, v, &mut data, &mut len) };
        return Some(slice_or_empty(data as *const u8, len));
    }
    let (kind, data, len) = typed_array(env, v);
    let elem = match kind {
        sys::TypedarrayType::int16_array | sys::TypedarrayType::uint16_array => 2,
        sys::TypedarrayType::int32_array
        | sys::TypedarrayType::uint32_array
        | sys::TypedarrayType::float32_array => 4,
        sys::TypedarrayType::float64_array
        | sys::TypedarrayType::bigint64_array
        | sys::TypedarrayType::biguint64_array => 8,
        _ => 1,
    };
    Some(slice_or_empty(data as *const u8, len * elem))
}

fn slice_or_empty<'a>(data: *const u8, len: usize) -> &'a [u8] {
    if data.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: Node guarantees `len` readable bytes at `data` while the value is alive,
        // which covers the current call.
        unsafe { std::slice::from_raw_parts(data, len) }
    }
}

pub fn object(env: Env) -> Value {
    let mut v = ptr::null_mut();
    // SAFETY: env is live.
    unsafe { sys::napi_create_object(env, &mut v) };
    v
}

pub fn is_array(env: Env, v: Value) -> bool {
    let mut out = false;
    // SAFETY: v is a live value.
    unsafe { sys::napi_is_array(env, v, &mut out) };
    out
}

pub fn is_function(env: Env, v: Value) -> bool {
    let mut t = sys::ValueType::napi_undefined;
    // SAFETY: v is a live value.
    unsafe { sys::napi_typeof(env, v, &mut t) };
    t == sys::ValueType::napi_function
}

pub fn undefined(env: Env) -> Value {
    let mut v = ptr::null_mut();
    // SAFETY: env is live.
    unsafe { sys::napi_get_undefined(env, &mut v) };
    v
}

pub fn boolean(env: Env, b: bool) -> Value {
    let mut v = ptr::null_mut();
    // SAFETY: env is live.
    unsafe { sys::napi_get_boolean(env, b, &mut v) };
    v
}

pub fn u32v(env: Env, n: u32) -> Value {
    let mut v = ptr::null_mut();
    // SAFETY: env is live.
    unsafe { sys::napi_create_uint32(env, n, &mut v) };
    v
}

pub fn i32v(env: Env, n: i32) -> Value {
    let mut v = ptr::null_mut();
    // SAFETY: env is live.
    unsafe { sys::napi_create_int32(env, n, &mut v) };
    v
}

pub fn f64v(env: Env, n: f64) -> Value {
    let mut v = ptr::null_mut();
    // SAFETY: env is live.
    unsafe { sys::napi_create_double(env, n, &mut v) };
    v
}

pub fn latin1(env: Env, s: &[u8]) -> Value {
    let mut v = ptr::null_mut();
    // SAFETY: s is valid for s.len() bytes.
    unsafe {
        sys::napi_create_string_latin1(env, s.as_ptr() as *const _, s.len() as isize, &mut v)
    };
    v
}

pub fn utf8(env: Env, s: &str) -> Value {
    let mut v = ptr::null_mut();
    // SAFETY: s is valid UTF-8 of s.len() bytes.
    unsafe { sys::napi_create_string_utf8(env, s.as_ptr() as *const _, s.len() as isize, &mut v) };
    v
}

pub fn buffer_copy(env: Env, s: &[u8]) -> Value {
    let mut v = ptr::null_mut();
    let mut data = ptr::null_mut();
    // SAFETY: Node copies s.len() bytes from s into a new Buffer.
    unsafe {
        sys::napi_create_buffer_copy(env, s.len(), s.as_ptr() as *const _, &mut data, &mut v)
    };
    v
}

pub fn array(env: Env, items: &[Value]) -> Value {
    let mut arr = ptr::null_mut();
    // SAFETY: env is live; each item is a live value.
    unsafe {
        sys::napi_create_array_with_length(env, items.len(), &mut arr);
        for (i, &it) in items.iter().enumerate() {
            sys::napi_set_element(env, arr, i as u32, it);
        }
    }
    arr
}

pub fn get_named(env: Env, obj: Value, name: &str) -> Value {
    let mut v = ptr::null_mut();
    let c = CString::new(name).unwrap_or_default();
    // SAFETY: obj is a live object; c is NUL-terminated.
    unsafe { sys::napi_get_named_property(env, obj, c.as_ptr(), &mut v) };
    v
}

pub fn set_named(env: Env, obj: Value, name: &str, v: Value) {
    let c = CString::new(name).unwrap_or_default();
    // SAFETY: obj is a live object; c is NUL-terminated.
    unsafe { sys::napi_set_named_property(env, obj, c.as_ptr(), v) };
}

pub fn array_len(env: Env, arr: Value) -> u32 {
    let mut n = 0;
    // SAFETY: arr is a live value; a non-array leaves n at 0.
    unsafe { sys::napi_get_array_length(env, arr, &mut n) };
    n
}

pub fn element(env: Env, arr: Value, i: u32) -> Value {
    let mut v = ptr::null_mut();
    // SAFETY: arr is a live array.
    unsafe { sys::napi_get_element(env, arr, i, &mut v) };
    v
}

/// A persistent reference to a JS value.
pub fn reference(env: Env, v: Value) -> sys::napi_ref {
    let mut r = ptr::null_mut();
    // SAFETY: v is a live value; the reference keeps it alive.
    unsafe { sys::napi_create_reference(env, v, 1, &mut r) };
    r
}

pub fn deref(env: Env, r: sys::napi_ref) -> Value {
    let mut v = ptr::null_mut();
    // SAFETY: r is a live reference created on this env.
    unsafe { sys::napi_get_reference_value(env, r, &mut v) };
    v
}

/// Defines a function property on `obj`; `cb` gets `data` back on each call.
pub fn define_fn(
    env: Env,
    obj: Value,
    name: &str,
    cb: sys::napi_callback,
    data: *mut std::ffi::c_void,
) {
    let c = CString::new(name).unwrap_or_default();
    let mut f = ptr::null_mut();
    // SAFETY: cb is an extern "C" callback that guards against panics itself.
    unsafe {
        sys::napi_create_function(env, c.as_ptr(), name.len() as isize, cb, data, &mut f);
        sys::napi_set_named_property(env, obj, c.as_ptr(), f);
    }
}

/// # Safety
/// `env` must be a live env.
pub unsafe fn sys_get_uv_loop(env: Env, out: *mut *mut crate::reactor::uv::uv_loop_t) {
    // SAFETY: the caller passes a live env; libuv's loop type is opaque on both sides.
    unsafe { sys::napi_get_uv_event_loop(env, out as *mut *mut sys::uv_loop_s) };
}
