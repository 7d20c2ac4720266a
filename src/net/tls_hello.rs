//! The server name a client's first flight sends, read from the bytes as they came: rustls
//! gives a name only when it is a DNS name it accepts, lowercased, where node's OpenSSL gives
//! any name as sent (RFC 6066 section 3). Pure functions over byte slices.

/// What the bytes a connection sent so far say of its ClientHello's server name.
#[derive(Debug, PartialEq, Eq)]
pub enum HelloName {
    /// The ClientHello has not come whole yet.
    Incomplete,
    /// Not a ClientHello this reads (rustls's errors are the ones to report).
    Unreadable,
    /// The ClientHello came: its host_name, if it sent one.
    Name(Option<Vec<u8>>),
}

/// A ClientHello larger than this is left to rustls (its own limit is lower).
pub const MAX_HELLO: usize = 1 << 16;

const RECORD_HANDSHAKE: u8 = 22;
const CLIENT_HELLO: u8 = 1;
const EXT_SERVER_NAME: u16 = 0;
const HOST_NAME: u8 = 0;

/// The server name of the ClientHello at the start of `stream` (TLS records as read from the
/// socket; the ClientHello may span records, RFC 8446 section 5.1).
pub fn client_hello_name(stream: &[u8]) -> HelloName {
    // The handshake message's bytes, when one record holds it whole (the common case: no
    // copy), else gathered from the records.
    let mut gathered: Vec<u8> = Vec::new();
    let mut at = 0;
    let mut first: Option<&[u8]> = None;
    loop {
        let Some(header) = stream.get(at..at + 5) else {
            return HelloName::Incomplete;
        };
        if header[0] != RECORD_HANDSHAKE || header[1] != 3 {
            return HelloName::Unreadable;
        }
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        let Some(fragment) = stream.get(at + 5..at + 5 + len) else {
            return HelloName::Incomplete;
        };
        at += 5 + len;
        let message: &[u8] = match first {
            None => {
                first = Some(fragment);
                fragment
            }
            Some(f) => {
                if gathered.is_empty() {
                    gathered.extend_from_slice(f);
                }
                gathered.extend_from_slice(fragment);
                &gathered
            }
        };
        if message.len() < 4 {
            if at > MAX_HELLO {
                return HelloName::Unreadable;
            }
            continue;
        }
        if message[0] != CLIENT_HELLO {
            return HelloName::Unreadable;
        }
        let body_len =
            usize::from(message[1]) << 16 | usize::from(message[2]) << 8 | usize::from(message[3]);
        if body_len + 4 > MAX_HELLO {
            return HelloName::Unreadable;
        }
        if message.len() < body_len + 4 {
            continue;
        }
        let body = &message[4..4 + body_len];
        return match hello_name(body) {
            Some(name) => HelloName::Name(name.map(<[u8]>::to_vec)),
            None => HelloName::Unreadable,
        };
    }
}

/// A reader of a handshake message's fields (RFC 8446 section 3).
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([b[0], b[1]]))
    }

    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(usize::from(n))
    }

    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }
}

/// A ClientHello body's host_name: Some(None) when it sends none, None when it does not read.
fn hello_name(body: &[u8]) -> Option<Option<&[u8]>> {
    let mut r = Reader(body);
    r.take(2 + 32)?; // legacy_version, random
    r.vec8()?; // legacy_session_id
    r.vec16()?; // cipher_suites
    r.vec8()?; // legacy_compression_methods
    if r.0.is_empty() {
        // A ClientHello without extensions (TLS 1.2 allows it).
        return Some(None);
    }
    let mut extensions = Reader(r.vec16()?);
    while !extensions.0.is_empty() {
        let typ = extensions.u16()?;
        let data = extensions.vec16()?;
        if typ != EXT_SERVER_NAME {
            continue;
        }
        // RFC 6066 section 3: ServerName server_name_list<1..2^16-1>; the first host_name.
        let mut list = Reader(Reader(data).vec16()?);
        // An unknown name type's length cannot be known: nothing after it reads.
        if list.0.is_empty() || list.u8()? != HOST_NAME {
            return Some(None);
        }
        return Some(Some(list.vec16()?));
    }
    Some(None)
}

/// Whether rustls takes `name` as a ClientHello's server name: a DNS name it accepts, or an IP
/// literal (which it reads as no name). Any other name it refuses with illegal_parameter.
pub fn rustls_takes(name: &[u8]) -> bool {
    use rustls_pki_types::ServerName;
    matches!(
        ServerName::try_from(name),
        Ok(ServerName::DnsName(_) | ServerName::IpAddress(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello record with `extensions` (type, data) in one record.
    fn hello(extensions: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7; 32]);
        body.extend_from_slice(&[32]);
        body.extend_from_slice(&[9; 32]);
        body.extend_from_slice(&[0, 2, 0x13, 0x01]);
        body.extend_from_slice(&[1, 0]);
        let mut ext = Vec::new();
        for (typ, data) in extensions {
            ext.extend_from_slice(&typ.to_be_bytes());
            ext.extend_from_slice(&(data.len() as u16).to_be_bytes());
            ext.extend_from_slice(data);
        }
        body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
        body.extend_from_slice(&ext);
        let mut message = vec![CLIENT_HELLO, 0];
        message.extend_from_slice(&(body.len() as u16).to_be_bytes());
        message.extend_from_slice(&body);
        records(&message, usize::MAX)
    }

    fn records(message: &[u8], size: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for chunk in message.chunks(size.min(message.len())) {
            out.extend_from_slice(&[RECORD_HANDSHAKE, 3, 1]);
            out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
            out.extend_from_slice(chunk);
        }
        out
    }

    fn sni(name: &[u8]) -> (u16, Vec<u8>) {
        let mut entry = vec![HOST_NAME];
        entry.extend_from_slice(&(name.len() as u16).to_be_bytes());
        entry.extend_from_slice(name);
        let mut data = (entry.len() as u16).to_be_bytes().to_vec();
        data.extend_from_slice(&entry);
        (EXT_SERVER_NAME, data)
    }

    fn name(n: &[u8]) -> HelloName {
        HelloName::Name(Some(n.to_vec()))
    }

    #[test]
    fn names_as_sent() {
        let bytes = hello(&[(10, vec![0, 2, 0, 29]), sni(b"Sni.0")]);
        assert_eq!(client_hello_name(&bytes), name(b"Sni.0"));
        assert_eq!(client_hello_name(&hello(&[])), HelloName::Name(None));
        let ip = hello(&[sni(b"127.0.0.1")]);
        assert_eq!(client_hello_name(&ip), name(b"127.0.0.1"));
    }

    #[test]
    fn every_prefix_is_incomplete() {
        let bytes = hello(&[sni(b"example.com")]);
        for n in 0..bytes.len() {
            assert_eq!(client_hello_name(&bytes[..n]), HelloName::Incomplete, "{n}");
        }
    }

    #[test]
    fn a_hello_across_records() {
        let one = hello(&[sni(b"a.123"), (43, vec![2, 3, 4])]);
        let message = &one[5..];
        for size in [1, 3, 4, 50, 100] {
            let bytes = records(message, size);
            assert_eq!(client_hello_name(&bytes), name(b"a.123"), "{size}");
        }
    }

    #[test]
    fn what_does_not_read() {
        assert_eq!(
            client_hello_name(b"GET / HTTP/1.1\r\n"),
            HelloName::Unreadable
        );
        let mut bytes = hello(&[sni(b"x")]);
        bytes[5] = 2;
        assert_eq!(client_hello_name(&bytes), HelloName::Unreadable);
        // A server_name extension whose list overruns it.
        let bad = hello(&[(EXT_SERVER_NAME, vec![0, 9, 0, 0, 1])]);
        assert_eq!(client_hello_name(&bad), HelloName::Unreadable);
    }

    #[test]
    fn names_rustls_refuses() {
        assert!(rustls_takes(b"example.com"));
        assert!(rustls_takes(b"My_Host.Example.COM"));
        assert!(rustls_takes(b"127.0.0.1"));
        assert!(!rustls_takes(b"sni.0"));
        assert!(!rustls_takes(b"a.123"));
        assert!(!rustls_takes(b"with space.example"));
        assert!(!rustls_takes(format!("{}.com", "x".repeat(64)).as_bytes()));
    }
}
