//! fast-http: a node:http-compatible server core. See DESIGN.md for the shape: a mio reactor
//! on the JS thread inside libuv's loop (`reactor`), per-connection state (`conn`), pure
//! protocol code (`proto`), and the N-API layer (`binding`).

pub mod binding;
pub mod conn;
pub mod net;
pub mod proto;
pub mod reactor;
pub mod uv;

use napi::JsValue;
use napi_derive::napi;

#[napi(module_exports)]
pub fn module_init(exports: napi::bindgen_prelude::Object, env: napi::Env) -> napi::Result<()> {
    binding::exports::register(env.raw(), exports.raw());
    Ok(())
}
