//! HTTP/1.1 as bytes: no I/O, no N-API. Everything here is tested with byte slices.

pub mod chars;
#[cfg(test)]
mod corpus_tests;
pub mod date;
pub mod decode;
pub mod errors;
pub mod parse;
pub mod response;
#[cfg(test)]
pub(crate) mod sim;
