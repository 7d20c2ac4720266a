//! The only code that touches N-API: module registration, the functions JS calls, and the
//! calls into JS (`js`).

pub mod exports;
pub mod js;
pub mod napi;
