//! X25519MLKEM768, the hybrid post-quantum key exchange that node (OpenSSL 3.5, Node 22.20+,
//! 24 and 26) offers and accepts by default (draft-ietf-tls-ecdhe-mlkem, codepoint 0x11EC).
//! rustls has it only with the aws-lc-rs provider, which needs a C toolchain for every
//! cross-built target; here ML-KEM-768 comes from RustCrypto's pure-Rust `ml-kem` (FIPS 203)
//! and X25519 from the ring provider we already use.
//!
//! Shares and secret, ML-KEM first (the draft's §3 for this group): the client's share is the
//! encapsulation key (1184 bytes) then its X25519 share (32); the server's is the ciphertext
//! (1088) then its X25519 share; the shared secret is ML-KEM's 32 bytes then X25519's.

use ml_kem::{Decapsulate, Encapsulate, Kem, KeyExport, MlKem768, TryKeyInit};
use rustls::crypto::{
    ring, ActiveKeyExchange, CompletedKeyExchange, SharedSecret, SupportedKxGroup,
};
use rustls::{Error, NamedGroup, PeerMisbehaved, ProtocolVersion};

const EK_LEN: usize = 1184;
const CT_LEN: usize = 1088;
const X25519_LEN: usize = 32;

/// The group, for a provider's `kx_groups`.
pub static X25519MLKEM768: &dyn SupportedKxGroup = &Hybrid;

#[derive(Debug)]
struct Hybrid;

fn invalid() -> Error {
    Error::PeerMisbehaved(PeerMisbehaved::InvalidKeyShare)
}

/// `a` then `b`, as one share or secret.
fn concat(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    out.extend_from_slice(a);
    out.extend_from_slice(b);
    out
}

/// A share of exactly `first + 32` bytes, split after the ML-KEM part.
fn split(share: &[u8], first: usize) -> Option<(&[u8], &[u8])> {
    (share.len() == first + X25519_LEN).then(|| share.split_at(first))
}

impl SupportedKxGroup for Hybrid {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let classical = ring::kx_group::X25519.start()?;
        let (dk, ek) = MlKem768::generate_keypair();
        let pub_key = concat(&ek.to_bytes(), classical.pub_key());
        Ok(Box::new(Active {
            classical,
            dk: Box::new(dk),
            pub_key,
        }))
    }

    fn start_and_complete(&self, client_share: &[u8]) -> Result<CompletedKeyExchange, Error> {
        let (ek, x25519) = split(client_share, EK_LEN).ok_or_else(invalid)?;
        // FIPS 203 §7.2's input check (the modulus check) is new_from_slice's.
        let ek = <MlKem768 as Kem>::EncapsulationKey::new_from_slice(ek).map_err(|_| invalid())?;
        let classical = ring::kx_group::X25519.start_and_complete(x25519)?;
        let (ct, pq_secret) = ek.encapsulate();
        Ok(CompletedKeyExchange {
            group: NamedGroup::X25519MLKEM768,
            pub_key: concat(&ct, &classical.pub_key),
            secret: SharedSecret::from(concat(&pq_secret, classical.secret.secret_bytes())),
        })
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::X25519MLKEM768
    }

    /// A TLS 1.3 group only: TLS 1.2's ECDHE has no KEMs.
    fn usable_for_version(&self, version: ProtocolVersion) -> bool {
        version == ProtocolVersion::TLSv1_3
    }
}

/// The client's half: what `start` made, until the server's share comes.
struct Active {
    classical: Box<dyn ActiveKeyExchange>,
    dk: Box<<MlKem768 as Kem>::DecapsulationKey>,
    pub_key: Vec<u8>,
}

impl ActiveKeyExchange for Active {
    fn complete(self: Box<Self>, server_share: &[u8]) -> Result<SharedSecret, Error> {
        let (ct, x25519) = split(server_share, CT_LEN).ok_or_else(invalid)?;
        let pq_secret = self.dk.decapsulate_slice(ct).map_err(|_| invalid())?;
        let classical = self.classical.complete(x25519)?;
        Ok(SharedSecret::from(concat(
            &pq_secret,
            classical.secret_bytes(),
        )))
    }

    fn pub_key(&self) -> &[u8] {
        &self.pub_key
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::X25519MLKEM768
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_agree_on_ml_kem_then_x25519() {
        let client = X25519MLKEM768.start().unwrap();
        assert_eq!(client.pub_key().len(), EK_LEN + X25519_LEN);
        let server = X25519MLKEM768.start_and_complete(client.pub_key()).unwrap();
        assert_eq!(server.group, NamedGroup::X25519MLKEM768);
        assert_eq!(server.pub_key.len(), CT_LEN + X25519_LEN);
        let secret = client.complete(&server.pub_key).unwrap();
        assert_eq!(secret.secret_bytes(), server.secret.secret_bytes());
        assert_eq!(secret.secret_bytes().len(), 64);
    }

    #[test]
    fn shares_of_the_wrong_length_or_key_are_refused() {
        let client = X25519MLKEM768.start().unwrap();
        let share = client.pub_key();
        for bad in [&share[..share.len() - 1], &share[..X25519_LEN], &[][..]] {
            assert!(X25519MLKEM768.start_and_complete(bad).is_err());
        }
        // An encapsulation key whose first coefficient is q (3329) fails FIPS 203's modulus
        // check.
        let mut bad = share.to_vec();
        bad[0] = 0x01;
        bad[1] = (bad[1] & 0xf0) | 0x0d;
        assert!(X25519MLKEM768.start_and_complete(&bad).is_err());
        assert!(client.complete(&[0; CT_LEN]).is_err());
    }
}
