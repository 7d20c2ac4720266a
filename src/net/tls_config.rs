//! A server's TLS settings as rustls sees them: certificate/key pairs (several, chosen by the
//! client's signature schemes, and per server name for node's addContext), client
//! certificates (node's requestCert / rejectUnauthorized / ca), protocol versions, ALPN and
//! session resumption. Built from PEM (or DER) bytes, as node's tls.createSecureContext takes.

use super::tls_tickets::{NoInternalCache, Ticketer, DEFAULT_TIMEOUT};
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{aws_lc_rs, ring, CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, ServerConfig};
use rustls::{SignatureScheme, SupportedProtocolVersion};
use std::sync::{Arc, Mutex};

/// What node's tls.createServer options say, in bytes and flags.
#[derive(Default, Clone)]
pub struct TlsSpec {
    /// (certificate chain, private key) pairs, PEM or DER each.
    pub pairs: Vec<(Vec<u8>, Vec<u8>)>,
    /// Trusted CAs for client certificates (PEM blobs, or DER).
    pub ca: Vec<Vec<u8>>,
    /// Trusted for client certificates too, but not named in the CertificateRequest: node's
    /// default CAs (OpenSSL's store without a `ca`, which it does not list as client CAs).
    pub roots: Vec<Vec<u8>>,
    pub request_cert: bool,
    pub reject_unauthorized: bool,
    /// 0x0303 (TLSv1.2) or 0x0304 (TLSv1.3).
    pub min_version: u16,
    pub max_version: u16,
    /// ALPNProtocols, in the server's order of preference.
    pub alpn: Vec<Vec<u8>>,
    /// Session tickets (node's default; off with SSL_OP_NO_TICKET).
    pub tickets: bool,
    /// The suites (IANA names), in the server's order of preference; empty: node's default
    /// list (those of it rustls has, in its order).
    pub ciphers: Vec<String>,
    /// The server's suite order wins over the client's (node's honorCipherOrder, true
    /// unless set false).
    pub honor_cipher_order: bool,
    /// Key exchange groups ('X25519MLKEM768', 'X25519', 'P-256', 'P-384'), in order; empty:
    /// the three classical ones (OpenSSL 3.0's default; JS names the hybrid first where
    /// node's OpenSSL offers it by default).
    pub groups: Vec<String>,
    /// node's sessionTimeout, seconds: how long a ticket resumes (None: node's 300).
    pub session_timeout: Option<u32>,
    /// node's ticketKeys (48 bytes); None: random keys of this context's own.
    pub ticket_keys: Option<Vec<u8>>,
}

pub const TLS12: u16 = 0x0303;
pub const TLS13: u16 = 0x0304;

/// A built secure context: its keys (what addContext shares) and the rustls config.
pub struct TlsContext {
    pub keys: Vec<Arc<CertifiedKey>>,
    pub config: Arc<ServerConfig>,
    /// Verifies a client's chain after a handshake that did not (rejectUnauthorized false),
    /// to tell JS `authorizationError` as node does.
    pub checker: Option<Arc<dyn ClientCertVerifier>>,
    pub request_cert: bool,
    pub reject_unauthorized: bool,
    /// The certificates client chains are checked against (`ca`, else the default roots),
    /// for the chains OpenSSL's path checks (`super::x509_chain`).
    trusted: Vec<CertificateDer<'static>>,
    /// Seals this context's tickets (its keys are node's getTicketKeys / setTicketKeys).
    pub ticketer: Arc<Ticketer>,
    sni: Arc<SniResolver>,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(base_provider())
}

/// ring's suites (record ciphers, and the SHA-384 of a TLS 1.3 handshake's transcript and key
/// schedule, which aws-lc hashes no faster on this CPU: both take their portable code) with
/// aws-lc-rs's signatures and key exchange: an RSA 2048 signature (every RSA handshake) costs
/// 245 µs there against ring's 563, an X25519 exchange 32 µs against 59, as with OpenSSL
/// (one core of this machine; bench/README, "Handshakes").
fn base_provider() -> CryptoProvider {
    let fast = aws_lc_rs::default_provider();
    CryptoProvider {
        kx_groups: vec![
            aws_lc_rs::kx_group::X25519,
            aws_lc_rs::kx_group::SECP256R1,
            aws_lc_rs::kx_group::SECP384R1,
        ],
        key_provider: fast.key_provider,
        ..ring::default_provider()
    }
}

/// tls.DEFAULT_CIPHERS's suites that rustls has, in its order (its HIGH brings the ChaCha20
/// ones last).
const NODE_DEFAULT_SUITES: [&str; 9] = [
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
];

/// The provider with the spec's suites and groups.
fn provider_for(spec: &TlsSpec) -> Result<CryptoProvider, String> {
    let mut p = base_provider();
    let names: Vec<&str> = if spec.ciphers.is_empty() {
        NODE_DEFAULT_SUITES.to_vec()
    } else {
        spec.ciphers.iter().map(String::as_str).collect()
    };
    {
        p.cipher_suites = names
            .iter()
            .map(|name| {
                ring::ALL_CIPHER_SUITES
                    .iter()
                    .find(|s| cipher_names(s.suite()).1 == *name)
                    .copied()
                    .ok_or_else(|| format!("unknown cipher suite {name}"))
            })
            .collect::<Result<_, _>>()?;
    }
    if !spec.groups.is_empty() {
        p.kx_groups = spec
            .groups
            .iter()
            .map(|name| match name.as_str() {
                "X25519MLKEM768" => Ok(aws_lc_rs::kx_group::X25519MLKEM768),
                "X25519" => Ok(aws_lc_rs::kx_group::X25519),
                "P-256" => Ok(aws_lc_rs::kx_group::SECP256R1),
                "P-384" => Ok(aws_lc_rs::kx_group::SECP384R1),
                _ => Err(format!("unknown group {name}")),
            })
            .collect::<Result<_, _>>()?;
    }
    Ok(p)
}

/// The protocol versions of the spec's range that its suites allow, as node's
/// createSecureContext settles them: a list without TLSv1.3 suites keeps OpenSSL's default
/// ones, and one without TLSv1.2 suites raises the range to TLSv1.3 (TLSv1.2 alone without
/// suites is an error here; OpenSSL fails each handshake instead).
fn versions_for(
    spec: &TlsSpec,
    p: &mut CryptoProvider,
) -> Result<Vec<&'static SupportedProtocolVersion>, String> {
    use rustls::CipherSuite as C;
    let is13 =
        |s: &rustls::SupportedCipherSuite| matches!(s, rustls::SupportedCipherSuite::Tls13(_));
    if !p.cipher_suites.iter().any(is13) {
        for want in [
            C::TLS13_AES_256_GCM_SHA384,
            C::TLS13_CHACHA20_POLY1305_SHA256,
            C::TLS13_AES_128_GCM_SHA256,
        ] {
            let found = ring::ALL_CIPHER_SUITES.iter().find(|s| s.suite() == want);
            p.cipher_suites.extend(found);
        }
    }
    let has12 = p.cipher_suites.iter().any(|s| !is13(s));
    let in_range = |v: u16| v >= spec.min_version && v <= spec.max_version;
    let mut wanted = Vec::new();
    if in_range(TLS13) {
        wanted.push(&rustls::version::TLS13);
    }
    if in_range(TLS12) && (has12 || wanted.is_empty()) {
        if !has12 {
            return Err("no cipher match".into());
        }
        wanted.push(&rustls::version::TLS12);
    }
    if wanted.is_empty() {
        return Err("no protocol version".into());
    }
    Ok(wanted)
}

fn algorithms() -> WebPkiSupportedAlgorithms {
    ring::default_provider().signature_verification_algorithms
}

fn certs(bytes: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    if bytes.first() == Some(&0x30) {
        return Ok(vec![CertificateDer::from(bytes.to_vec())]);
    }
    let certs = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cert: {e}"))?;
    if certs.is_empty() {
        return Err("cert: no certificate found".into());
    }
    Ok(certs)
}

fn key(bytes: &[u8]) -> Result<PrivateKeyDer<'static>, String> {
    if bytes.first() == Some(&0x30) {
        return PrivateKeyDer::try_from(bytes.to_vec()).map_err(|e| format!("key: {e}"));
    }
    PrivateKeyDer::from_pem_slice(bytes).map_err(|e| format!("key: {e}"))
}

/// A certificate chain with its signing key, checked to belong together (OpenSSL's
/// SSL_CTX_check_private_key: node throws "key values mismatch").
pub fn certified_key(cert: &[u8], key_bytes: &[u8]) -> Result<Arc<CertifiedKey>, String> {
    let chain = certs(cert)?;
    let signer =
        aws_lc_rs::sign::any_supported_type(&key(key_bytes)?).map_err(|e| e.to_string())?;
    let ck = CertifiedKey::new(chain, signer);
    // Only a key that is not the certificate's is refused: a certificate webpki cannot parse
    // (X.509 v1, as some of node's test fixtures are) is OpenSSL's to serve all the same.
    if let Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) =
        ck.keys_match()
    {
        return Err("key values mismatch".into());
    }
    Ok(Arc::new(ck))
}

/// The first pair whose key signs with a scheme the client offered: an ECDSA and an RSA pair
/// serve clients of either kind, as OpenSSL's per-type certificates do.
fn pick(keys: &[Arc<CertifiedKey>], hello: &ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
    let offered = hello.signature_schemes();
    keys.iter()
        .find(|k| k.key.choose_scheme(offered).is_some())
        .or_else(|| keys.first())
        .cloned()
}

/// node's `^` + hostname with `*` as `[^.]*` + `$` (with the `i` flag from Node 22:
/// `exact_case` false).
fn name_matches(pattern: &str, name: &str, exact_case: bool) -> bool {
    let (p, n) = if exact_case {
        (pattern.to_string(), name.to_string())
    } else {
        (pattern.to_ascii_lowercase(), name.to_ascii_lowercase())
    };
    let mut parts = p.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = n.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i == parts.len() - 1;
        // `*` takes the shortest run of non-dots after which the rest can match.
        let mut found = None;
        for (at, _) in rest
            .char_indices()
            .chain(std::iter::once((rest.len(), ' ')))
        {
            if rest[..at].contains('.') {
                break;
            }
            let tail = &rest[at..];
            if (last && tail == *part) || (!last && tail.starts_with(part)) {
                found = Some(at + part.len());
                break;
            }
        }
        match found {
            Some(end) => rest = &rest[end..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Chooses the certificate: a context added for the client's server name (the last one that
/// matches, as node's SNICallback), else the server's own.
#[derive(Debug)]
struct SniResolver {
    own: Vec<Arc<CertifiedKey>>,
    /// addContext's (hostname, whether its case must match, keys).
    added: Mutex<Vec<Added>>,
}

type Added = (String, bool, Vec<Arc<CertifiedKey>>);

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let added = self.added.lock().ok()?;
        if !added.is_empty() {
            // node matches the name as the client sent it (an IP literal too).
            let name =
                super::tls_scope::sent_name().or_else(|| hello.server_name().map(str::to_string));
            if let Some(name) = name {
                let found = added
                    .iter()
                    .rev()
                    .find(|(p, exact, _)| name_matches(p, &name, *exact));
                if let Some((_, _, keys)) = found {
                    return pick(keys, &hello);
                }
            }
        }
        pick(&self.own, &hello)
    }
}

/// The certificates node's SNICallback chose for one connection.
#[derive(Debug)]
struct Chosen(Vec<Arc<CertifiedKey>>);

impl ResolvesServerCert for Chosen {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        pick(&self.0, &hello)
    }
}

/// rejectUnauthorized false: the handshake takes any client certificate the client proves
/// it holds (the signatures are checked); whether it chains to `ca` is told afterwards.
#[derive(Debug)]
struct Lenient {
    /// rejectUnauthorized: node's SSL_VERIFY_FAIL_IF_NO_PEER_CERT, a client without a
    /// certificate fails the handshake (certificate_required / handshake_failure alert).
    mandatory: bool,
    hints: Vec<DistinguishedName>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for Lenient {
    fn offer_client_auth(&self) -> bool {
        true
    }
    fn client_auth_mandatory(&self) -> bool {
        self.mandatory
    }
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.hints
    }
    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
            .or_else(|e| signed_by_key(message, cert, dss, e))
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
            .or_else(|e| signed_by_key(message, cert, dss, e))
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A handshake signature checked with the certificate's public key alone, when webpki cannot
/// take the certificate (X.509 v1, as some of node's test clients have): OpenSSL takes any
/// certificate whose key made the signature. `err` (webpki's) stands for anything else.
fn signed_by_key(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    err: rustls::Error,
) -> Result<HandshakeSignatureValid, rustls::Error> {
    use ::ring::signature as sig;
    if !matches!(err, rustls::Error::InvalidCertificate(_)) {
        return Err(err);
    }
    let alg: &dyn sig::VerificationAlgorithm = match dss.scheme {
        SignatureScheme::RSA_PKCS1_SHA256 => &sig::RSA_PKCS1_2048_8192_SHA256,
        SignatureScheme::RSA_PKCS1_SHA384 => &sig::RSA_PKCS1_2048_8192_SHA384,
        SignatureScheme::RSA_PKCS1_SHA512 => &sig::RSA_PKCS1_2048_8192_SHA512,
        SignatureScheme::RSA_PSS_SHA256 => &sig::RSA_PSS_2048_8192_SHA256,
        SignatureScheme::RSA_PSS_SHA384 => &sig::RSA_PSS_2048_8192_SHA384,
        SignatureScheme::RSA_PSS_SHA512 => &sig::RSA_PSS_2048_8192_SHA512,
        SignatureScheme::ECDSA_NISTP256_SHA256 => &sig::ECDSA_P256_SHA256_ASN1,
        SignatureScheme::ECDSA_NISTP384_SHA384 => &sig::ECDSA_P384_SHA384_ASN1,
        SignatureScheme::ED25519 => &sig::ED25519,
        _ => return Err(err),
    };
    let Some(key) = public_key(cert) else {
        return Err(err);
    };
    match sig::UnparsedPublicKey::new(alg, key).verify(message, dss.signature()) {
        Ok(()) => Ok(HandshakeSignatureValid::assertion()),
        Err(_) => Err(err),
    }
}

/// The subjectPublicKey bits of a certificate (what ring's keys are made from).
fn public_key(cert: &[u8]) -> Option<&[u8]> {
    let (_, cert, _) = der(cert)?;
    let (_, tbs, _) = der(cert)?;
    let mut f = tbs;
    if f.first() == Some(&0xa0) {
        f = der(f)?.2;
    }
    // serial, signature algorithm, issuer, validity, subject, then subjectPublicKeyInfo.
    for _ in 0..5 {
        f = der(f)?.2;
    }
    let (_, spki, _) = der(f)?;
    let (_, bits, _) = der(der(spki)?.2)?;
    // A BIT STRING's first byte counts its unused bits: none in a key.
    bits.strip_prefix(&[0])
}

fn roots(ca: &[Vec<u8>]) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    for blob in ca {
        for c in certs(blob)? {
            store.add(c).map_err(|e| format!("ca: {e}"))?;
        }
    }
    Ok(store)
}

fn strict_verifier(
    store: RootCertStore,
    optional: bool,
) -> Result<Arc<dyn ClientCertVerifier>, String> {
    let b = WebPkiClientVerifier::builder_with_provider(Arc::new(store), provider());
    let b = if optional {
        b.allow_unauthenticated()
    } else {
        b
    };
    b.build().map_err(|e| format!("ca: {e}"))
}

impl TlsContext {
    pub fn new(spec: &TlsSpec) -> Result<TlsContext, String> {
        // No pairs: node's server made without key / cert, whose handshakes all fail.
        let keys = spec
            .pairs
            .iter()
            .map(|(c, k)| certified_key(c, k))
            .collect::<Result<Vec<_>, _>>()?;
        let mut suites = provider_for(spec)?;
        let versions = versions_for(spec, &mut suites)?;
        let mut store = roots(&spec.ca)?;
        let trusted: Vec<CertificateDer<'static>> = spec
            .ca
            .iter()
            .chain(&spec.roots)
            .flat_map(|blob| certs(blob).unwrap_or_default())
            .collect();
        let hints: Vec<DistinguishedName> = store.subjects();
        for blob in &spec.roots {
            // OpenSSL loads its default store leniently too: one it cannot use is skipped.
            store.add_parsable_certificates(certs(blob).unwrap_or_default());
        }
        // node asks for a client certificate but takes whatever comes (OpenSSL's verify
        // callback always accepts); the chain is checked after the handshake, and with
        // rejectUnauthorized a failing one closes the socket then (onServerSocketSecure).
        let (verifier, checker): (Arc<dyn ClientCertVerifier>, _) = if !spec.request_cert {
            (WebPkiClientVerifier::no_client_auth(), None)
        } else {
            let checker = if store.is_empty() {
                None
            } else {
                Some(strict_verifier(store, true)?)
            };
            let lenient = Lenient {
                mandatory: spec.reject_unauthorized,
                hints,
                algorithms: algorithms(),
            };
            (Arc::new(lenient) as Arc<dyn ClientCertVerifier>, checker)
        };
        let sni = Arc::new(SniResolver {
            own: keys.clone(),
            added: Mutex::new(Vec::new()),
        });
        let mut config = ServerConfig::builder_with_provider(Arc::new(suites))
            .with_protocol_versions(&versions)
            .map_err(|e| e.to_string())?
            .with_client_cert_verifier(verifier)
            .with_cert_resolver(sni.clone());
        config.alpn_protocols = spec.alpn.clone();
        // node's tls.Server sets OpenSSL's server preference unless honorCipherOrder is false.
        config.ignore_client_order = spec.honor_cipher_order;
        let timeout = spec.session_timeout.unwrap_or(DEFAULT_TIMEOUT);
        let ticketer = Arc::new(Ticketer::new(spec.ticket_keys.as_deref(), timeout)?);
        if spec.tickets {
            config.ticketer = ticketer.clone();
        }
        // node's contexts keep no session cache of their own (SSL_SESS_CACHE_NO_INTERNAL):
        // without tickets a session resumes only through the app's 'newSession' /
        // 'resumeSession' listeners.
        config.session_storage = Arc::new(NoInternalCache);
        config.key_log = Arc::new(super::tls_scope::ThreadKeyLog);
        // No 0-RTT: early data is never accepted (node does not do it either).
        config.max_early_data_size = 0;
        Ok(TlsContext {
            keys,
            config: Arc::new(config),
            checker,
            request_cert: spec.request_cert,
            reject_unauthorized: spec.reject_unauthorized,
            trusted,
            ticketer,
            sni,
        })
    }

    /// node's server.addContext(hostname, context): connections naming `hostname` (with `*`
    /// wildcards; `exact_case` as Node 20's) get `other`'s certificates.
    pub fn add_context(&self, hostname: &str, exact_case: bool, other: &TlsContext) {
        if let Ok(mut added) = self.sni.added.lock() {
            added.push((hostname.to_string(), exact_case, other.keys.clone()));
        }
    }

    /// This context's settings with `other`'s certificates (what node's SNICallback chose).
    pub fn config_with_keys(&self, other: &TlsContext) -> Arc<ServerConfig> {
        let mut config = (*self.config).clone();
        config.cert_resolver = Arc::new(Chosen(other.keys.clone()));
        Arc::new(config)
    }

    /// node's `authorizationError` for a client chain the handshake took without checking.
    pub fn check_client(&self, chain: &[CertificateDer<'static>]) -> Option<&'static str> {
        let Some((end, rest)) = chain.split_first() else {
            // OpenSSL's verify result without a peer certificate (node keeps it as is).
            return Some("UNABLE_TO_GET_ISSUER_CERT");
        };
        let now = UnixTime::now();
        let sent: Vec<&[u8]> = chain.iter().map(|c| c.as_ref()).collect();
        if super::x509_chain::wants_openssl_path(&sent) {
            // A chain with an X.509 v1 certificate, which webpki does not read: OpenSSL's
            // checks, as node's server has them.
            let trusted: Vec<&[u8]> = self.trusted.iter().map(|c| c.as_ref()).collect();
            let secs = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
            return super::x509_chain::verify(end, &sent[1..], &trusted, secs);
        }
        let err = match &self.checker {
            Some(v) => v.verify_client_cert(end, rest, now).err()?,
            None => rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        };
        Some(openssl_code(&err, end, rest))
    }
}

/// The OpenSSL X509_V_ERR name node reports for a chain webpki rejected.
fn openssl_code(
    err: &rustls::Error,
    end: &CertificateDer<'static>,
    rest: &[CertificateDer<'static>],
) -> &'static str {
    use rustls::CertificateError as E;
    // OpenSSL looks for the issuer first: a lone self-issued certificate that is not trusted
    // fails there, whatever else is wrong with it.
    if rest.is_empty() && self_issued(end) {
        return "DEPTH_ZERO_SELF_SIGNED_CERT";
    }
    match err {
        rustls::Error::InvalidCertificate(e) => match e {
            E::Expired | E::ExpiredContext { .. } => "CERT_HAS_EXPIRED",
            E::NotValidYet | E::NotValidYetContext { .. } => "CERT_NOT_YET_VALID",
            E::Revoked => "CERT_REVOKED",
            E::BadSignature => "CERT_SIGNATURE_FAILURE",
            E::UnknownIssuer if rest.is_empty() => "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
            E::UnknownIssuer if ends_self_issued(end, rest) => "SELF_SIGNED_CERT_IN_CHAIN",
            E::UnknownIssuer => "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
            E::InvalidPurpose | E::InvalidPurposeContext { .. } => "INVALID_PURPOSE",
            // A certificate webpki cannot read (X.509 v1): OpenSSL's verdict is where its
            // chain ends, as for an unknown issuer.
            E::BadEncoding | E::Other(_) if rest.is_empty() => "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
            E::BadEncoding | E::Other(_) if ends_self_issued(end, rest) => {
                "SELF_SIGNED_CERT_IN_CHAIN"
            }
            E::BadEncoding | E::Other(_) => "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
            _ => "CERT_REJECTED",
        },
        _ => "CERT_REJECTED",
    }
}

/// One DER element at the start of `d`: (tag, contents, rest).
fn der(d: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, d) = d.split_first()?;
    let (&first, mut d) = d.split_first()?;
    let len = if first < 0x80 {
        first as usize
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || d.len() < n {
            return None;
        }
        let len = d[..n].iter().fold(0usize, |a, &b| (a << 8) | b as usize);
        d = &d[n..];
        len
    };
    (d.len() >= len).then(|| (tag, &d[..len], &d[len..]))
}

/// The certificate names itself as its issuer.
/// A certificate's (issuer, subject) names, DER.
fn names(cert: &[u8]) -> Option<(&[u8], &[u8])> {
    let (_, cert, _) = der(cert)?;
    let (_, tbs, _) = der(cert)?;
    let mut f = tbs;
    // [0] version is optional; then serial, signature algorithm, issuer, validity, subject.
    if f.first() == Some(&0xa0) {
        f = der(f)?.2;
    }
    let f = der(f)?.2;
    let f = der(f)?.2;
    let (_, issuer, f) = der(f)?;
    let f = der(f)?.2;
    let (_, subject, _) = der(f)?;
    Some((issuer, subject))
}

fn self_issued(cert: &CertificateDer<'static>) -> bool {
    names(cert).is_some_and(|(issuer, subject)| issuer == subject)
}

/// Whether the chain OpenSSL builds from `end` through the certificates the peer sent ends
/// in a self-issued one (which, untrusted, is its SELF_SIGNED_CERT_IN_CHAIN).
fn ends_self_issued(end: &CertificateDer<'static>, rest: &[CertificateDer<'static>]) -> bool {
    let mut current: &[u8] = end;
    for _ in 0..rest.len() {
        let Some((issuer, _)) = names(current) else {
            return false;
        };
        let Some(next) = rest
            .iter()
            .find(|c| names(c).is_some_and(|(_, subject)| subject == issuer))
        else {
            return false;
        };
        if self_issued(next) {
            return true;
        }
        current = next;
    }
    false
}

/// The protocol names node's getProtocol() gives.
pub fn protocol_name(v: rustls::ProtocolVersion) -> &'static str {
    match v {
        rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3",
        rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2",
        _ => "unknown",
    }
}

/// A suite's (OpenSSL name, IANA name): node's getCipher() `name` and `standardName`.
pub fn cipher_names(s: rustls::CipherSuite) -> (&'static str, &'static str) {
    use rustls::CipherSuite as C;
    match s {
        C::TLS13_AES_128_GCM_SHA256 => ("TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"),
        C::TLS13_AES_256_GCM_SHA384 => ("TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384"),
        C::TLS13_CHACHA20_POLY1305_SHA256 => (
            "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_CHACHA20_POLY1305_SHA256",
        ),
        C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => (
            "ECDHE-ECDSA-AES128-GCM-SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        ),
        C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => (
            "ECDHE-ECDSA-AES256-GCM-SHA384",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        ),
        C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => (
            "ECDHE-ECDSA-CHACHA20-POLY1305",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        ),
        C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => (
            "ECDHE-RSA-AES128-GCM-SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        ),
        C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => (
            "ECDHE-RSA-AES256-GCM-SHA384",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        ),
        C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => (
            "ECDHE-RSA-CHACHA20-POLY1305",
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        ),
        _ => ("unknown", "unknown"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_names() {
        assert!(name_matches("*.example.com", "a.example.com", false));
        assert!(name_matches("*.example.com", ".example.com", false));
        assert!(!name_matches("*.example.com", "a.b.example.com", false));
        assert!(name_matches("Example.COM", "example.com", false));
        assert!(!name_matches("Example.COM", "example.com", true));
        assert!(name_matches("*.Example.com", "A.Example.com", true));
        assert!(!name_matches("example.com", "example.co", false));
        assert!(name_matches("a*c.com", "abbc.com", false));
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/test/fixtures/tls/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn cert(name: &str) -> CertificateDer<'static> {
        CertificateDer::from_pem_slice(&fixture(name)).unwrap()
    }

    #[test]
    fn a_v1_certificates_key_checks_its_signatures() {
        // webpki does not read the v1 certificate; its key, read here, checks what it signed.
        let v1 = cert("client-v1-cert.pem");
        let key = PrivateKeyDer::from_pem_slice(&fixture("client-v1-key.pem")).unwrap();
        let pair = ::ring::signature::RsaKeyPair::from_pkcs8(key.secret_der()).unwrap();
        let mut signature = vec![0; pair.public().modulus_len()];
        let rng = ::ring::rand::SystemRandom::new();
        pair.sign(
            &::ring::signature::RSA_PSS_SHA256,
            &rng,
            b"signed",
            &mut signature,
        )
        .unwrap();
        let public = public_key(&v1).unwrap();
        let verify = |m: &[u8]| {
            ::ring::signature::UnparsedPublicKey::new(
                &::ring::signature::RSA_PSS_2048_8192_SHA256,
                public,
            )
            .verify(m, &signature)
        };
        assert!(verify(b"signed").is_ok());
        assert!(verify(b"forged").is_err());
        // Another certificate's key is another key.
        assert_ne!(public_key(&cert("client-cert.pem")), Some(public));
    }

    #[test]
    fn chains_ending_self_issued() {
        let (client, ca) = (cert("client-cert.pem"), cert("ca-cert.pem"));
        assert!(ends_self_issued(&client, std::slice::from_ref(&ca)));
        assert!(!ends_self_issued(&client, &[]));
        // A self-issued certificate that is not the issuer is not in the chain.
        assert!(!ends_self_issued(&client, &[cert("self-signed-cert.pem")]));
    }
}
