//! node's `pfx` option: a PKCS#12 archive opened into the private key and certificates
//! OpenSSL's PKCS12_parse gives node (which pairs them: JS matches the key with its
//! certificate as it does for key / cert).

use p12_keystore::Pkcs12Archive;

/// A decoded archive: its first private key (PKCS#8 DER, the one PKCS12_parse keeps) and
/// every certificate (DER), in the archive's order.
pub struct Decoded {
    pub key: Vec<u8>,
    pub certs: Vec<Vec<u8>>,
}

/// Opens `pfx` with `passphrase` (the archive's MAC is checked with it). Err when it does
/// not decode or has no key: node's createSecureContext has refused what OpenSSL cannot
/// open, so an Err here is an archive this decoder does not support (node serves it).
pub fn decode(pfx: &[u8], passphrase: &str) -> Result<Decoded, String> {
    let archive = Pkcs12Archive::from_pkcs12(pfx, passphrase).map_err(|e| format!("pfx: {e}"))?;
    let key = archive
        .keys
        .first()
        .ok_or("pfx: no private key")?
        .key
        .as_der()
        .to_vec();
    let certs = archive
        .certs
        .iter()
        .map(|c| c.cert.as_der().to_vec())
        .collect();
    Ok(Decoded { key, certs })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivatePkcs8KeyDer};

    const PFX: &[u8] = include_bytes!("../../test/fixtures/tls/server-rsa.pfx");
    const KEY: &[u8] = include_bytes!("../../test/fixtures/tls/server-rsa-key.pem");
    const CERT: &[u8] = include_bytes!("../../test/fixtures/tls/server-rsa-cert.pem");
    const CA: &[u8] = include_bytes!("../../test/fixtures/tls/ca-cert.pem");

    fn der(pem: &[u8]) -> Vec<u8> {
        CertificateDer::from_pem_slice(pem).unwrap().to_vec()
    }

    #[test]
    fn opens_key_and_certificates() {
        let d = decode(PFX, "sample").unwrap();
        let key = PrivatePkcs8KeyDer::from_pem_slice(KEY).unwrap();
        assert_eq!(d.key, key.secret_pkcs8_der());
        assert_eq!(d.certs.len(), 2);
        assert!(d.certs.contains(&der(CERT)));
        assert!(d.certs.contains(&der(CA)));
    }

    #[test]
    fn wrong_passphrase_or_bytes_are_errors() {
        assert!(decode(PFX, "wrong").is_err());
        assert!(decode(PFX, "").is_err());
        assert!(decode(b"not a pfx", "sample").is_err());
        assert!(decode(&PFX[..PFX.len() / 2], "sample").is_err());
    }

    #[test]
    fn its_key_signs_for_its_certificate() {
        // The pair JS builds from a decoded archive is one rustls takes.
        let d = decode(PFX, "sample").unwrap();
        let leaf = d.certs.iter().find(|c| **c == der(CERT)).unwrap();
        assert!(crate::net::tls_config::certified_key(leaf, &d.key).is_ok());
    }
}
