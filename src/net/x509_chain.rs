//! A client's certificate chain checked as OpenSSL's X509_verify_cert checks it for node's
//! server (purpose sslclient, no flags), for the chains webpki cannot take: X.509 v1
//! certificates (no extensions; what `openssl x509 -req` makes without an extension file).
//! node's verify callback accepts every error and reports the last one OpenSSL recorded
//! (SSL_get_verify_result), so every step runs and the last failure is the answer.
//!
//! The steps, in OpenSSL 3's order: build the chain (trusted issuers first, then the ones the
//! client sent), check each certificate's CA flags and the sslclient purpose, then from the
//! top down each signature and validity period.

use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::{FromDer, X509Version};

/// Chains longer than this stop (OpenSSL's default verify depth is 100).
const MAX_DEPTH: usize = 100;

/// Whether OpenSSL's path is the one for this chain: a certificate webpki does not read (not
/// v3) is in it.
pub fn wants_openssl_path(certs: &[&[u8]]) -> bool {
    certs
        .iter()
        .any(|der| match X509Certificate::from_der(der) {
            Ok((_, c)) => c.version() != X509Version::V3,
            Err(_) => false,
        })
}

/// OpenSSL's verify result for `end` with the certificates the client sent after it
/// (`sent`), against `trusted` (the server's `ca`, or its default roots), at `now` (Unix
/// seconds): None when it verifies, else the X509_V_ERR name node reports.
pub fn verify(end: &[u8], sent: &[&[u8]], trusted: &[&[u8]], now: i64) -> Option<&'static str> {
    let Ok((_, leaf)) = X509Certificate::from_der(end) else {
        return Some("CERT_REJECTED");
    };
    let sent = parse(sent);
    let trusted = parse(trusted);
    let mut errors: Vec<&'static str> = Vec::new();

    // build_chain: (certificate, came from the trust store).
    let mut chain: Vec<(&X509Certificate<'_>, bool)> = vec![(&leaf, false)];
    let mut anchored = false;
    while chain.len() < MAX_DEPTH {
        let (cur, _) = chain[chain.len() - 1];
        if self_issued(cur) {
            // A self-issued certificate the client sent is trusted when the store has it.
            anchored =
                chain[chain.len() - 1].1 || trusted.iter().any(|t| t.as_ref() == cur.as_ref());
            break;
        }
        let valid = |c: &&&X509Certificate<'_>| c.validity().is_valid_at(at(now));
        let from_store: Vec<&X509Certificate<'_>> =
            trusted.iter().filter(|t| issued_by(cur, t)).collect();
        if let Some(t) = from_store.iter().find(valid).or(from_store.first()) {
            chain.push((t, true));
            continue;
        }
        let from_peer: Vec<&X509Certificate<'_>> = sent
            .iter()
            .filter(|s| issued_by(cur, s) && !chain.iter().any(|(c, _)| c.as_ref() == s.as_ref()))
            .collect();
        match from_peer.iter().find(valid).or(from_peer.first()) {
            Some(s) => chain.push((s, false)),
            None => break,
        }
    }
    let (top, top_trusted) = chain[chain.len() - 1];
    if !anchored {
        errors.push(if self_issued(top) {
            if chain.len() == 1 {
                "DEPTH_ZERO_SELF_SIGNED_CERT"
            } else {
                "SELF_SIGNED_CERT_IN_CHAIN"
            }
        } else if top_trusted {
            "UNABLE_TO_GET_ISSUER_CERT"
        } else if chain.len() == 1 {
            "UNABLE_TO_VERIFY_LEAF_SIGNATURE"
        } else {
            "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"
        });
    }

    // check_chain_extensions / check_purpose: issuers must be CAs; the leaf and the issuers
    // the client sent must allow client authentication.
    for (i, (c, from_store)) in chain.iter().enumerate() {
        if i > 0 && !is_ca(c) {
            errors.push("INVALID_CA");
        }
        if !from_store && !allows_client_auth(c, i > 0) {
            errors.push("INVALID_PURPOSE");
        }
    }

    // internal_verify, from the top down: each signature by the certificate above it (a
    // self-issued top's own is not checked), then each validity period.
    let mut n = chain.len() - 1;
    let mut issuer = top;
    if !self_issued(top) {
        if n == 0 {
            errors.push("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
            return errors.last().copied();
        }
        n -= 1;
    }
    loop {
        let (c, _) = chain[n];
        if !std::ptr::eq(c, issuer) && c.verify_signature(Some(issuer.public_key())).is_err() {
            errors.push("CERT_SIGNATURE_FAILURE");
        }
        let v = c.validity();
        if v.not_before.timestamp() > now {
            errors.push("CERT_NOT_YET_VALID");
        } else if v.not_after.timestamp() < now {
            errors.push("CERT_HAS_EXPIRED");
        }
        if n == 0 {
            break;
        }
        issuer = c;
        n -= 1;
    }
    errors.last().copied()
}

fn parse<'a>(list: &[&'a [u8]]) -> Vec<X509Certificate<'a>> {
    list.iter()
        .filter_map(|d| X509Certificate::from_der(d).ok().map(|(_, c)| c))
        .collect()
}

fn at(now: i64) -> x509_parser::time::ASN1Time {
    x509_parser::time::ASN1Time::from_timestamp(now)
        .unwrap_or_else(|_| x509_parser::time::ASN1Time::now())
}

/// X509_check_issued: `parent`'s subject names `child`'s issuer, their key identifiers (when
/// both have one) agree, and `parent` may sign certificates (keyUsage, when it has one).
fn issued_by(child: &X509Certificate<'_>, parent: &X509Certificate<'_>) -> bool {
    if child.issuer().as_raw() != parent.subject().as_raw() {
        return false;
    }
    if let Ok(Some(ku)) = parent.key_usage() {
        if !ku.value.key_cert_sign() {
            return false;
        }
    }
    let akid = child
        .extensions()
        .iter()
        .find_map(|e| match e.parsed_extension() {
            x509_parser::extensions::ParsedExtension::AuthorityKeyIdentifier(a) => {
                a.key_identifier.as_ref().map(|k| k.0)
            }
            _ => None,
        });
    let skid = parent
        .extensions()
        .iter()
        .find_map(|e| match e.parsed_extension() {
            x509_parser::extensions::ParsedExtension::SubjectKeyIdentifier(k) => Some(k.0),
            _ => None,
        });
    match (akid, skid) {
        (Some(a), Some(s)) => a == s,
        _ => true,
    }
}

fn self_issued(c: &X509Certificate<'_>) -> bool {
    issued_by(c, c)
}

/// X509_check_ca (without X509_V_FLAG_X509_STRICT): basicConstraints' cA when there is
/// one; else a self-signed v1 certificate (a v1 root), or one whose keyUsage allows
/// keyCertSign.
fn is_ca(c: &X509Certificate<'_>) -> bool {
    let ku = c.key_usage().ok().flatten();
    if ku.as_ref().is_some_and(|k| !k.value.key_cert_sign()) {
        return false;
    }
    match c.basic_constraints() {
        Ok(Some(bc)) => bc.value.ca,
        Ok(None) => (c.version() == X509Version::V1 && self_issued(c)) || ku.is_some(),
        Err(_) => false,
    }
}

/// X509_PURPOSE_SSL_CLIENT: an extendedKeyUsage, when there is one, names clientAuth (or
/// any); a leaf's keyUsage, when there is one, allows digitalSignature or keyAgreement.
fn allows_client_auth(c: &X509Certificate<'_>, ca: bool) -> bool {
    if let Ok(Some(eku)) = c.extended_key_usage() {
        if !(eku.value.client_auth || eku.value.any) {
            return false;
        }
    }
    if ca {
        return true;
    }
    match c.key_usage() {
        Ok(Some(ku)) => ku.value.digital_signature() || ku.value.key_agreement(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;

    fn cert(name: &str) -> Vec<u8> {
        let path = format!("{}/test/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"));
        CertificateDer::from_pem_file(path).unwrap().to_vec()
    }

    // 2027-01-01, inside every fixture's validity but the expired ones'.
    const NOW: i64 = 1_798_761_600;

    #[test]
    fn v1_chains_verify_as_openssl_says() {
        let (ca, v1_ca, other) = (
            cert("ca-cert.pem"),
            cert("v1-ca-cert.pem"),
            cert("other-ca-cert.pem"),
        );
        let v1 = cert("client-v1-cert.pem");
        assert_eq!(verify(&v1, &[], &[&ca], NOW), None);
        assert_eq!(verify(&v1, &[&ca], &[&ca], NOW), None);
        let by_v1 = cert("client-v1-by-v1-ca-cert.pem");
        assert_eq!(verify(&by_v1, &[], &[&v1_ca], NOW), None);
        assert_eq!(
            verify(&cert("client-by-v1-ca-cert.pem"), &[], &[&v1_ca], NOW),
            None
        );
        let foreign = cert("client-v1-other-ca-cert.pem");
        assert_eq!(
            verify(&foreign, &[], &[&ca], NOW),
            Some("UNABLE_TO_VERIFY_LEAF_SIGNATURE")
        );
        assert_eq!(
            verify(&foreign, &[&other], &[&ca], NOW),
            Some("SELF_SIGNED_CERT_IN_CHAIN")
        );
        assert_eq!(
            verify(&cert("client-v1-expired-cert.pem"), &[], &[&ca], NOW),
            Some("CERT_HAS_EXPIRED")
        );
        assert_eq!(verify(&v1, &[], &[&ca], 0), Some("CERT_NOT_YET_VALID"));
        // A CA of another name is not the issuer.
        assert_eq!(
            verify(&v1, &[], &[&v1_ca], NOW),
            Some("UNABLE_TO_VERIFY_LEAF_SIGNATURE")
        );
    }

    #[test]
    fn a_forged_issuer_fails_its_signature() {
        // A flipped bit in the CA's signature.
        let ca = cert("ca-cert.pem");
        let v1 = cert("client-v1-cert.pem");
        let mut forged = v1.clone();
        let last = forged.len() - 1;
        forged[last] ^= 1;
        assert_eq!(
            verify(&forged, &[], &[&ca], NOW),
            Some("CERT_SIGNATURE_FAILURE")
        );
    }

    #[test]
    fn only_chains_with_a_v1_certificate_take_this_path() {
        assert!(wants_openssl_path(&[&cert("client-v1-cert.pem")]));
        assert!(!wants_openssl_path(&[
            &cert("client-cert.pem"),
            &cert("ca-cert.pem")
        ]));
        assert!(wants_openssl_path(&[
            &cert("client-by-v1-ca-cert.pem"),
            &cert("v1-ca-cert.pem")
        ]));
    }
}
