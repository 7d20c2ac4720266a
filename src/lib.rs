//! fast-http: a node:http-compatible server core. The layers, in the order data flows
//! (docs/internals.md): sockets (`net`); a mio reactor on the JS thread
//! inside libuv's loop (`reactor`); the HTTP/1 connection state machine (`conn`); pure
//! protocol code, our own llhttp-exact parser among it (`proto`); and the N-API layer
//! (`binding`), the only code that knows JS. Dependencies point one way, down
//! binding → reactor → conn → proto, with `net` under the reactor: a layer may use those
//! below it, never one above.

// No function over 100 lines (clippy.toml sets the threshold; clippy runs with -D warnings).
#![warn(clippy::too_many_lines)]

mod binding;
mod conn;
mod net;
pub mod proto;
mod reactor;

use napi::JsValue;
use napi_derive::napi;

#[napi(module_exports)]
pub fn module_init(exports: napi::bindgen_prelude::Object, env: napi::Env) -> napi::Result<()> {
    binding::register(env.raw(), exports.raw());
    Ok(())
}
