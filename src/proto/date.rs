//! The `Date:` header line (RFC 9110 §6.6.1, IMF-fixdate), rebuilt at most once a second.

use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug)]
pub struct DateCache {
    second: u64,
    line: Vec<u8>,
    /// The clock was read in the current event batch: every response of one batch gets
    /// the same line without another clock read.
    checked: bool,
}

impl Default for DateCache {
    fn default() -> Self {
        DateCache {
            second: u64::MAX,
            line: Vec::with_capacity(40),
            checked: false,
        }
    }
}

impl DateCache {
    /// The line as of the last `refresh`.
    pub fn current(&self) -> &[u8] {
        &self.line
    }

    /// A new event batch starts: the next `refresh` reads the clock again.
    pub fn expire(&mut self) {
        self.checked = false;
    }

    /// Rebuilds the line if the second changed (reading the clock once per batch).
    pub fn refresh(&mut self) {
        if self.checked {
            return;
        }
        self.checked = true;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        if now != self.second {
            self.second = now;
            self.line.clear();
            self.line.extend_from_slice(b"Date: ");
            format_imf_fixdate(now, &mut self.line);
            self.line.extend_from_slice(b"\r\n");
        }
    }
}

/// Appends the IMF-fixdate form of `secs` since the Unix epoch.
pub fn format_imf_fixdate(secs: u64, out: &mut Vec<u8>) {
    const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };

    out.extend_from_slice(DAYS[(days % 7) as usize]);
    out.extend_from_slice(b", ");
    push2(out, d as u64);
    out.push(b' ');
    out.extend_from_slice(MONTHS[(month - 1) as usize]);
    out.push(b' ');
    out.extend_from_slice(year.to_string().as_bytes());
    out.push(b' ');
    push2(out, h);
    out.push(b':');
    push2(out, m);
    out.push(b':');
    push2(out, s);
    out.extend_from_slice(b" GMT");
}

fn push2(out: &mut Vec<u8>, v: u64) {
    out.push(b'0' + (v / 10) as u8);
    out.push(b'0' + (v % 10) as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(secs: u64) -> String {
        let mut v = Vec::new();
        format_imf_fixdate(secs, &mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn known_dates() {
        assert_eq!(fmt(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(fmt(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(fmt(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(fmt(1_796_014_800), "Mon, 30 Nov 2026 05:00:00 GMT");
    }

    #[test]
    fn cache_has_crlf() {
        let mut c = DateCache::default();
        c.refresh();
        let l = c.current().to_vec();
        assert!(l.starts_with(b"Date: ") && l.ends_with(b" GMT\r\n"));
        assert_eq!(l.len(), 37);
    }

    #[test]
    fn clock_read_once_until_expired() {
        let mut c = DateCache::default();
        c.refresh();
        // A line from another second stays until the batch ends...
        c.line.clear();
        c.line.extend_from_slice(b"old");
        c.refresh();
        assert_eq!(c.current(), b"old");
        // ...and the next batch reads the clock (the second differs from the cached one).
        c.second = 0;
        c.expire();
        c.refresh();
        assert!(c.current().starts_with(b"Date: "));
    }
}
