//! Fuzz targets for fast-http's request parser, body decoder and connection state machine.

#[path = "../../src/conn/mod.rs"]
pub mod conn;
pub mod proto;

/// Cuts `input` into pieces whose sizes come from `seed` (a small xorshift generator): the
/// reads a connection could see.
pub fn pieces<'a>(input: &'a [u8], seed: &[u8]) -> Vec<&'a [u8]> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for &b in seed {
        x = (x ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    // Mostly small pieces, sometimes one byte at a time, sometimes large.
    let max = match seed.first().map(|b| b >> 6) {
        Some(0) => 1,
        Some(1) => 4,
        Some(2) => 32,
        _ => 512,
    };
    let mut out = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = 1 + (x % max) as usize;
        let (a, b) = rest.split_at(n.min(rest.len()));
        out.push(a);
        rest = b;
    }
    out
}
