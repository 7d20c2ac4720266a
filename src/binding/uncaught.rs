//! A throw from JS that no handler caught goes to node's uncaught-exception path, as a
//! throwing node:http handler's does, after the output already ended goes to the kernel:
//! the process may exit.

use super::napi::Env;
use ::napi::sys;
use std::ptr;

/// Hands the pending exception to node's uncaught-exception path.
pub fn uncaught(env: Env) {
    crate::reactor::with(|r| r.flush_all());
    let mut err = ptr::null_mut();
    // SAFETY: an exception is pending on env.
    unsafe {
        sys::napi_get_and_clear_last_exception(env, &mut err);
        sys::napi_fatal_exception(env, err);
    }
}
