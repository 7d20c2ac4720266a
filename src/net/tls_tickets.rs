//! Session resumption with node's settings: tickets sealed with keys JS can read and set
//! (node's ticketKeys, getTicketKeys / setTicketKeys: two servers given the same keys take
//! each other's tickets, as a cluster's workers do), valid for node's sessionTimeout.

use super::tls_scope::{self, Handshake};
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use rustls::server::{ProducesTickets, StoresServerSessions};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// node's ticket keys: 16 bytes naming the key, then 32 of key material (OpenSSL splits them
/// into an HMAC and an AES key; here they are one AES-256-GCM key).
pub const KEYS_LEN: usize = 48;
const NAME_LEN: usize = 16;
const STAMP_LEN: usize = 8;

/// OpenSSL's default session timeout (node's sessionTimeout default), seconds.
pub const DEFAULT_TIMEOUT: u32 = 300;

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn fresh(stamp: &[u8], timeout: u32) -> bool {
    let Ok(stamp) = <[u8; STAMP_LEN]>::try_from(stamp) else {
        return false;
    };
    now_secs().saturating_sub(u64::from_be_bytes(stamp)) < u64::from(timeout)
}

struct Keys {
    raw: [u8; KEYS_LEN],
    key: LessSafeKey,
}

impl Keys {
    fn new(raw: [u8; KEYS_LEN]) -> Option<Keys> {
        let unbound = UnboundKey::new(&AES_256_GCM, &raw[NAME_LEN..]).ok()?;
        Some(Keys {
            raw,
            key: LessSafeKey::new(unbound),
        })
    }
}

/// Seals tickets as `key name || nonce || AES-256-GCM(issued-at || session)`.
pub struct Ticketer {
    keys: Mutex<Keys>,
    timeout: u32,
    rng: SystemRandom,
}

impl std::fmt::Debug for Ticketer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticketer").finish_non_exhaustive()
    }
}

impl Ticketer {
    /// With `keys` (node's ticketKeys), else random ones.
    pub fn new(keys: Option<&[u8]>, timeout: u32) -> Result<Ticketer, String> {
        let rng = SystemRandom::new();
        let raw = match keys {
            Some(k) => <[u8; KEYS_LEN]>::try_from(k)
                .map_err(|_| "Session ticket keys must be a 48-byte buffer".to_string())?,
            None => {
                let mut raw = [0; KEYS_LEN];
                rng.fill(&mut raw).map_err(|_| "no random bytes")?;
                raw
            }
        };
        let keys = Keys::new(raw).ok_or("bad ticket keys")?;
        Ok(Ticketer {
            keys: Mutex::new(keys),
            timeout,
            rng,
        })
    }

    /// node's server.getTicketKeys().
    pub fn get_keys(&self) -> [u8; KEYS_LEN] {
        self.keys.lock().map_or([0; KEYS_LEN], |k| k.raw)
    }

    /// node's server.setTicketKeys(): tickets sealed with other keys are not taken any more.
    pub fn set_keys(&self, raw: &[u8]) -> Result<(), String> {
        let raw = <[u8; KEYS_LEN]>::try_from(raw)
            .map_err(|_| "Session ticket keys must be a 48-byte buffer".to_string())?;
        let keys = Keys::new(raw).ok_or("bad ticket keys")?;
        if let Ok(mut k) = self.keys.lock() {
            *k = keys;
        }
        Ok(())
    }
}

impl ProducesTickets for Ticketer {
    fn enabled(&self) -> bool {
        tls_scope::handshake() != Handshake::Opened
    }

    fn lifetime(&self) -> u32 {
        self.timeout
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        if tls_scope::handshake() == Handshake::Resumed {
            return None;
        }
        let keys = self.keys.lock().ok()?;
        let mut nonce = [0; NONCE_LEN];
        self.rng.fill(&mut nonce).ok()?;
        let name = &keys.raw[..NAME_LEN];
        let mut out = Vec::with_capacity(NAME_LEN + NONCE_LEN + STAMP_LEN + plain.len() + 16);
        out.extend_from_slice(name);
        out.extend_from_slice(&nonce);
        let mut sealed = Vec::with_capacity(STAMP_LEN + plain.len() + 16);
        sealed.extend_from_slice(&now_secs().to_be_bytes());
        sealed.extend_from_slice(plain);
        keys.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(name),
                &mut sealed,
            )
            .ok()?;
        out.extend_from_slice(&sealed);
        Some(out)
    }

    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        let keys = self.keys.lock().ok()?;
        let (name, rest) = cipher.split_at_checked(NAME_LEN)?;
        if name != &keys.raw[..NAME_LEN] {
            return None;
        }
        let (nonce, sealed) = rest.split_at_checked(NONCE_LEN)?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut buf = sealed.to_vec();
        let plain = keys
            .key
            .open_in_place(nonce, Aad::from(name), &mut buf)
            .ok()?;
        let (stamp, session) = plain.split_at_checked(STAMP_LEN)?;
        let session = fresh(stamp, self.timeout).then(|| session.to_vec())?;
        tls_scope::ticket_opened();
        Some(session)
    }
}

/// node's contexts keep no session cache (SSL_SESS_CACHE_NO_INTERNAL) yet hand out session
/// ids (TLSv1.2) and stateful tickets (TLSv1.3) that clients keep: this takes every session
/// and finds none, so clients get them as from node and never resume with them.
#[derive(Debug)]
pub struct NoInternalCache;

impl StoresServerSessions for NoInternalCache {
    fn put(&self, _key: Vec<u8>, _value: Vec<u8>) -> bool {
        true
    }

    fn get(&self, _key: &[u8]) -> Option<Vec<u8>> {
        None
    }

    fn take(&self, _key: &[u8]) -> Option<Vec<u8>> {
        None
    }

    fn can_cache(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_round_trip_with_the_same_keys_only() {
        let a = Ticketer::new(Some(&[7; KEYS_LEN]), 300).unwrap();
        let b = Ticketer::new(Some(&[7; KEYS_LEN]), 300).unwrap();
        let c = Ticketer::new(None, 300).unwrap();
        let t = a.encrypt(b"session").unwrap();
        assert_eq!(b.decrypt(&t).as_deref(), Some(&b"session"[..]));
        assert_eq!(c.decrypt(&t), None);
        let mut bad = t.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert_eq!(a.decrypt(&bad), None);
        assert_eq!(a.decrypt(&t[..10]), None);
        b.set_keys(&c.get_keys()).unwrap();
        assert_eq!(b.decrypt(&t), None);
        assert!(b.set_keys(&[0; 47]).is_err());
    }

    #[test]
    fn expired_tickets_are_not_taken() {
        let a = Ticketer::new(None, 0).unwrap();
        let t = a.encrypt(b"session").unwrap();
        assert_eq!(a.decrypt(&t), None);
    }
}
