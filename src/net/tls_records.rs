//! The headers of the records a client sends after the handshake, as OpenSSL's record layer
//! checks them before decrypting (ssl3_get_record): a record it refuses for its header gets
//! another error than one that does not decrypt, where rustls reports every one of them as a
//! record that does not decrypt. Pure functions over the bytes as read.

/// Why OpenSSL refuses a record for its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// TLS 1.3: a record type other than application_data (RFC 8446 section 5.2).
    BadType,
    /// A record version other than the connection's (0x0303 for TLS 1.2 and 1.3).
    WrongVersion,
    /// TLS 1.2 AES-GCM: shorter than its explicit nonce and tag (RFC 5288 section 3).
    ShortAead,
    /// TLS 1.2 AES-GCM: a type TLS does not define, which OpenSSL decrypts (and fails to)
    /// where rustls refuses it unread.
    UnknownType,
}

/// Follows the record stream read after the handshake (records split across reads too) and
/// keeps the first record whose header OpenSSL refuses. rustls fails at the first record it
/// cannot take, and a record refused for its header is one, so when the connection fails the
/// first refused header seen is the failing record's (a record of the same read before it
/// that does not decrypt is the one case it misnames).
#[derive(Debug)]
pub struct RecordScan {
    /// The connection is TLS 1.3.
    tls13: bool,
    /// The connection is TLS 1.2 with an AES-GCM suite.
    gcm12: bool,
    /// Bytes of the current record's body still to come.
    left: usize,
    header: [u8; 5],
    /// Bytes of the next header seen so far.
    have: usize,
    refused: Option<Refused>,
}

impl RecordScan {
    /// For a connection whose handshake is done: `tls13` its version, `gcm12` TLS 1.2 with an
    /// AES-GCM suite.
    pub fn new(tls13: bool, gcm12: bool) -> RecordScan {
        RecordScan {
            tls13,
            gcm12,
            left: 0,
            header: [0; 5],
            have: 0,
            refused: None,
        }
    }

    /// Takes the next bytes read.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && self.refused.is_none() {
            if self.left > 0 {
                let skip = self.left.min(bytes.len());
                self.left -= skip;
                bytes = &bytes[skip..];
                continue;
            }
            let take = (5 - self.have).min(bytes.len());
            self.header[self.have..self.have + take].copy_from_slice(&bytes[..take]);
            self.have += take;
            bytes = &bytes[take..];
            if self.have < 5 {
                return;
            }
            self.have = 0;
            let h = self.header;
            self.left = usize::from(u16::from_be_bytes([h[3], h[4]]));
            self.refused = refused(h[0], [h[1], h[2]], self.left, self.tls13, self.gcm12);
        }
    }

    /// The first refused header, if any.
    pub fn refused(&self) -> Option<Refused> {
        self.refused
    }
}

/// OpenSSL's verdict on one record header: TLS 1.3 checks the type first, then the version;
/// TLS 1.2 the version, then (in the AEAD) the length.
fn refused(typ: u8, version: [u8; 2], len: usize, tls13: bool, gcm12: bool) -> Option<Refused> {
    const APPLICATION_DATA: u8 = 23;
    // GCM's explicit nonce (8) and tag (16).
    const GCM_OVERHEAD: usize = 24;
    if tls13 && typ != APPLICATION_DATA {
        return Some(Refused::BadType);
    }
    if version != [3, 3] {
        return Some(Refused::WrongVersion);
    }
    if gcm12 && len < GCM_OVERHEAD {
        return Some(Refused::ShortAead);
    }
    // change_cipher_spec, alert, handshake, application_data (RFC 5246 section 6.2.1).
    if gcm12 && !(20..=23).contains(&typ) {
        return Some(Refused::UnknownType);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(typ: u8, version: [u8; 2], len: usize) -> Vec<u8> {
        let mut r = vec![typ, version[0], version[1]];
        r.extend_from_slice(&(len as u16).to_be_bytes());
        r.resize(5 + len, 1);
        r
    }

    fn scan(bytes: &[u8], tls13: bool, gcm12: bool) -> Option<Refused> {
        let mut s = RecordScan::new(tls13, gcm12);
        s.feed(bytes);
        s.refused()
    }

    #[test]
    fn valid_records_pass() {
        let mut bytes = record(23, [3, 3], 40);
        bytes.extend(record(23, [3, 3], 17));
        assert_eq!(scan(&bytes, true, false), None);
        assert_eq!(scan(&record(23, [3, 3], 24), false, true), None);
        // Renegotiation records are encrypted handshake records in TLS 1.2.
        assert_eq!(scan(&record(22, [3, 3], 40), false, true), None);
    }

    #[test]
    fn headers_openssl_refuses() {
        assert_eq!(
            scan(&record(22, [3, 3], 4), true, false),
            Some(Refused::BadType)
        );
        assert_eq!(
            scan(&record(20, [3, 1], 1), true, false),
            Some(Refused::BadType)
        );
        assert_eq!(
            scan(&record(23, [3, 1], 30), true, false),
            Some(Refused::WrongVersion)
        );
        assert_eq!(
            scan(&record(23, [3, 1], 4), false, true),
            Some(Refused::WrongVersion)
        );
        assert_eq!(
            scan(&record(99, [3, 3], 1), false, true),
            Some(Refused::ShortAead)
        );
        assert_eq!(
            scan(&record(23, [3, 3], 23), false, true),
            Some(Refused::ShortAead)
        );
        // ChaCha20-Poly1305 has no explicit nonce: its lengths are not GCM's.
        assert_eq!(scan(&record(23, [3, 3], 23), false, false), None);
        assert_eq!(
            scan(&record(99, [3, 3], 30), false, true),
            Some(Refused::UnknownType)
        );
    }

    #[test]
    fn records_split_across_reads() {
        let mut bytes = record(23, [3, 3], 40);
        bytes.extend(record(22, [3, 3], 4));
        for cut in 0..bytes.len() {
            let mut s = RecordScan::new(true, false);
            s.feed(&bytes[..cut]);
            s.feed(&bytes[cut..]);
            assert_eq!(s.refused(), Some(Refused::BadType), "{cut}");
        }
        // The first refused header is kept.
        let mut s = RecordScan::new(true, false);
        s.feed(&record(23, [3, 1], 30));
        s.feed(&record(22, [3, 3], 4));
        assert_eq!(s.refused(), Some(Refused::WrongVersion));
    }
}
