//! fast-http's src/proto, compiled on its own: it is pure (no N-API, no I/O), so the fuzz
//! targets link without a Node process.

#[path = "../../../src/proto/chars.rs"]
pub mod chars;
#[path = "../../../src/proto/decode.rs"]
pub mod decode;
#[path = "../../../src/proto/errors.rs"]
pub mod errors;
#[path = "../../../src/proto/parse/mod.rs"]
pub mod parse;
#[path = "../../../src/proto/response.rs"]
pub mod response;
#[path = "../../../src/proto/sim.rs"]
pub mod sim;
