//! fast-http: a node:http-compatible server core. See DESIGN.md for the shape: a mio reactor
//! on the JS thread inside libuv's loop (`reactor`), the HTTP/1 connection state machine
//! (`conn`), pure protocol code (`proto`), sockets (`net`), and the N-API layer
//! (`binding`), the only code that knows JS. Dependencies point one way:
//! binding → reactor → conn → proto.

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
