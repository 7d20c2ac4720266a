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

/// Counts the heap bytes each thread holds, so a test can see what one connection keeps
/// (the lib's tests run on many threads; a thread's own count is not disturbed by them).
struct Counting;

thread_local! {
    static LIVE: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
}

fn count(delta: isize) {
    // During a thread's teardown the count is gone: nothing measures then.
    let _ = LIVE.try_with(|l| l.set(l.get() + delta));
}

// SAFETY: every call forwards to the system allocator with the caller's arguments unchanged;
// the count is a thread-local Cell that allocates nothing.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        count(-(layout.size() as isize));
        // SAFETY: `ptr` came from this allocator (System) with `layout`.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator (System) with `layout`; the caller
        // guarantees `size` is valid for it.
        let p = unsafe { std::alloc::System.realloc(ptr, layout, size) };
        if !p.is_null() {
            count(size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Heap bytes this thread allocated and has not freed.
pub fn live_bytes() -> isize {
    LIVE.with(|l| l.get())
}
