//! What the transport's tests share: the fixture certificates, a server spec, rustls clients.

use super::tls_config::{TlsSpec, TLS12, TLS13};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};
use std::sync::Arc;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/test/fixtures/tls/");

pub fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIX}{name}")).unwrap()
}

/// An RSA server that offers TLS 1.2 and 1.3 with tickets.
pub fn spec() -> TlsSpec {
    TlsSpec {
        pairs: vec![(
            fixture("server-rsa-cert.pem"),
            fixture("server-rsa-key.pem"),
        )],
        min_version: TLS12,
        max_version: TLS13,
        tickets: true,
        reject_unauthorized: true,
        ..TlsSpec::default()
    }
}

/// The fixtures' CA.
pub fn roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(&fixture("ca-cert.pem")).unwrap())
        .unwrap();
    roots
}

/// A client with rustls's ring provider (the crate builds two: none is the process's default).
fn client_builder(
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier> {
    ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(versions)
        .unwrap()
}

pub fn client_config(versions: &[&'static rustls::SupportedProtocolVersion]) -> ClientConfig {
    client_builder(versions)
        .with_root_certificates(roots())
        .with_no_client_auth()
}

/// A TLS 1.3 client that presents `cert` / `key`.
pub fn client_auth_config(cert: &str, key: &str) -> ClientConfig {
    let chain = vec![CertificateDer::from_pem_slice(&fixture(cert)).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(&fixture(key)).unwrap();
    client_builder(&[&rustls::version::TLS13])
        .with_root_certificates(roots())
        .with_client_auth_cert(chain, key)
        .unwrap()
}

pub fn client(cfg: ClientConfig) -> ClientConnection {
    ClientConnection::new(Arc::new(cfg), ServerName::try_from("localhost").unwrap()).unwrap()
}

/// A rustls client's first flight naming `localhost`, with that name replaced by `name` (as
/// long): what a client naming a server rustls would not send looks like.
pub fn hello_naming(name: &[u8]) -> Vec<u8> {
    let mut c = client(client_config(&[&rustls::version::TLS13]));
    let mut bytes = Vec::new();
    while c.wants_write() {
        c.write_tls(&mut bytes).unwrap();
    }
    let at = bytes
        .windows(9)
        .position(|w| w == b"localhost")
        .expect("the name in the hello");
    bytes[at..at + name.len()].copy_from_slice(name);
    bytes
}
