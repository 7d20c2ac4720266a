//! Requests (heads, bodies, pipelined messages) read whole and in random pieces must parse
//! alike, and nothing may panic. The first two bytes choose the pieces and the limits.
#![no_main]

use fast_http_fuzz::pieces;
use fast_http_fuzz::proto::parse::{Leniency, Limits, Methods};
use fast_http_fuzz::proto::sim::{simulate, test_methods};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static METHODS: OnceLock<Methods> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Some((ctl, input)) = data.split_first_chunk::<2>() else {
        return;
    };
    let methods = METHODS.get_or_init(test_methods);
    let leniency = match ctl[1] & 0b1010 {
        0 | 0b1000 => Leniency::Strict,
        0b10 => Leniency::Relaxed,
        _ => Leniency::Insecure,
    };
    // Small limits reach the overflow paths with short inputs.
    let mut limits = Limits::new(if ctl[1] & 1 == 0 { 16 * 1024 } else { 64 }, leniency);
    if ctl[1] & 4 != 0 {
        limits.max_header_fields = 3;
    }
    let whole = simulate([input], methods, &limits);
    let split = simulate(pieces(input, ctl), methods, &limits);
    assert_eq!(
        whole,
        split,
        "pieces {:?}",
        pieces(input, ctl)
            .iter()
            .map(|p| p.len())
            .collect::<Vec<_>>()
    );
});
