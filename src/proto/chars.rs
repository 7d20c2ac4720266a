//! Byte classes of llhttp's request grammar (llhttp `src/llhttp/constants.ts`), as 256-entry
//! tables so the scanning loops cost one load per byte.

/// One bit per class; a byte may be in several.
pub const TOKEN: u8 = 1;
/// Header value bytes: HTAB, SP, VCHAR, obs-text (RFC 9110 §5.5); DEL and other controls are
/// not.
pub const VALUE: u8 = 1 << 1;
/// Request-target bytes in the path (no `?` or `#`, which change state).
pub const PATH: u8 = 1 << 2;
/// Request-target bytes in a query (`?` allowed, `#` starts the fragment).
pub const QUERY: u8 = 1 << 3;
/// Request-target bytes in a fragment (`?` and `#` allowed).
pub const FRAGMENT: u8 = 1 << 4;
/// Bytes of the authority in absolute-form and authority-form (llhttp USERINFO_CHARS plus
/// `[`, `]` and `@`).
pub const SERVER: u8 = 1 << 5;
/// Bytes of a chunk extension's quoted-string (RFC 9110 §5.6.4 qdtext).
pub const QDTEXT: u8 = 1 << 6;
/// Bytes allowed after a backslash in a quoted-pair: HTAB, SP, VCHAR, obs-text.
pub const QUOTED_PAIR: u8 = 1 << 7;

const fn build() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        let mut v = 0u8;
        let alnum = c.is_ascii_alphanumeric();
        if alnum
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            )
        {
            v |= TOKEN;
        }
        let vchar = c >= 0x21 && c <= 0x7e;
        if c == b'\t' || c == b' ' || vchar || c >= 0x80 {
            v |= VALUE | QUOTED_PAIR;
        }
        if vchar {
            v |= FRAGMENT;
            if c != b'#' {
                v |= QUERY;
                if c != b'?' {
                    v |= PATH;
                }
            }
        }
        if alnum
            || matches!(
                c,
                b'-' | b'_'
                    | b'.'
                    | b'!'
                    | b'~'
                    | b'*'
                    | b'\''
                    | b'('
                    | b')'
                    | b'%'
                    | b';'
                    | b':'
                    | b'&'
                    | b'='
                    | b'+'
                    | b'$'
                    | b','
                    | b'['
                    | b']'
                    | b'@'
            )
        {
            v |= SERVER;
        }
        let qd = c == b'\t' || c == b' ' || c == b'!' || (c >= 0x23 && c <= 0x5b) || c >= 0x5d;
        if qd && c != 0x7f {
            v |= QDTEXT;
        }
        t[i] = v;
        i += 1;
    }
    t
}

pub static CLASS: [u8; 256] = build();

#[inline(always)]
pub fn is(b: u8, class: u8) -> bool {
    CLASS[b as usize] & class != 0
}

/// Length of the run of `class` bytes at the start of `s`.
#[inline(always)]
pub fn run(s: &[u8], class: u8) -> usize {
    s.iter().position(|&b| !is(b, class)).unwrap_or(s.len())
}

/// Length of the run of header value bytes (HTAB, SP, VCHAR, obs-text) at the start of `s`.
/// Values are most of a request head, so eight bytes are checked at a time: a word passes
/// when none of its bytes is below 0x20 or equal to 0x7f (HTAB takes the byte loop).
#[inline]
pub fn value_run(s: &[u8]) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while let Some(chunk) = s.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w);
        // A byte below 0x20 (ASCII only: bytes >= 0x80 are obs-text and pass).
        let below = x.wrapping_sub(LO * 0x20) & !x & HI;
        // A byte equal to 0x7f.
        let y = x ^ (LO * 0x7f);
        let del = y.wrapping_sub(LO) & !y & HI;
        if below | del != 0 {
            break;
        }
        i += 8;
    }
    i + run(&s[i..], VALUE)
}

#[inline(always)]
pub fn hex(b: u8) -> Option<u64> {
    match b {
        b'0'..=b'9' => Some((b - b'0') as u64),
        b'a'..=b'f' => Some((b - b'a' + 10) as u64),
        b'A'..=b'F' => Some((b - b'A' + 10) as u64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_run_agrees_with_the_table() {
        for b in 0..=255u8 {
            for at in 0..20 {
                let mut s = vec![b'a'; 24];
                s[at] = b;
                let want = if is(b, VALUE) { 24 } else { at };
                assert_eq!(value_run(&s), want, "byte {b:#x} at {at}");
            }
        }
    }

    #[test]
    fn classes() {
        assert!(is(b'a', TOKEN) && !is(b' ', TOKEN) && !is(b':', TOKEN));
        assert!(is(b'\t', VALUE) && is(0x80, VALUE) && !is(0x7f, VALUE) && !is(0, VALUE));
        assert!(is(b'"', PATH) && !is(b'?', PATH) && is(b'?', QUERY) && !is(b'#', QUERY));
        assert!(is(b'#', FRAGMENT) && !is(0x80, FRAGMENT) && !is(b'\t', FRAGMENT));
        assert!(is(b'@', SERVER) && !is(b'"', SERVER) && !is(b'/', SERVER));
        assert!(is(0xe9, QDTEXT) && !is(b'"', QDTEXT) && !is(b'\\', QDTEXT) && !is(0, QDTEXT));
    }
}
