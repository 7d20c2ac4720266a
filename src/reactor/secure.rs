//! The reactor's TLS room: what a TLS connection's session reports (`net::tls::TlsEvent`)
//! becomes the embedder's events here (node's 'keylog', SNICallback / ALPNCallback,
//! 'secureConnection', 'tlsClientError'), and what JS answers or asks of a session comes in
//! here. No other room names a TLS type: they see a read that has an event for this room
//! (`net::transport::Got::Event`) and call `on_event`.

use super::secure_setup::{protocol, Context, Protocol};
use super::state::{with, Deferred, Reactor};
use crate::net::tls::{
    AlpnChoice, SessionInfo, TlsEvent, TlsFailure, HANDSHAKE_TIMEOUT, HANG_UP, RESET_IN_HANDSHAKE,
};

/// What the room tells the embedder (part of `super::sink::Sink`).
pub trait SecureSink {
    /// The TLS handshake of connection `id` completed, before its first request (node's
    /// 'secureConnection').
    fn secure(sid: u32, id: u64, info: &SessionInfo);
    /// A TLS connection failed before its handshake completed: a bad handshake, a client gone
    /// or too slow (node's 'tlsClientError'). The connection is closed next.
    fn tls_client_error(sid: u32, id: u64, e: &TlsFailure);
    /// A record of connection `id` failed after its handshake: the socket's error (node's
    /// TLSSocket emits OpenSSL's). The connection is closed next.
    fn tls_error(id: u64, e: &TlsFailure);
    /// One NSS key-log line of connection `id`'s handshake (node's 'keylog').
    fn keylog(sid: u32, id: u64, line: &[u8]);
    /// Connection `id`'s ClientHello named `servername` and the server has an SNICallback,
    /// or it offered `protocols` (ALPN, non-empty when asked) and the server has an
    /// ALPNCallback: the handshake waits for `Reactor::sni_answer`.
    fn sni_request(sid: u32, id: u64, servername: &str, protocols: &[Vec<u8>]);
    /// Node's TLS serves connection `id` (its ClientHello names a server rustls refuses, or
    /// the server listens for what only OpenSSL tells) from socket `fd` (the caller's now),
    /// starting with the bytes `read` from it so far.
    fn tls_hand_off(sid: u32, id: u64, fd: i32, read: &[u8]);
}

/// Acts on the event connection `id`'s session announced. Returns whether reading goes on.
pub(super) fn on_event<S: SecureSink>(id: u64) -> bool {
    let found = with(|r| {
        let c = r.conn(id)?;
        let t = c.stream.tls_mut()?;
        let event = t.take_event()?;
        Some((c.server, event, t.is_handshaking()))
    })
    .flatten();
    let Some((sid, event, handshaking)) = found else {
        return true;
    };
    match event {
        // Before 'secureConnection', as OpenSSL's keylog callback runs inside the handshake.
        TlsEvent::Keylog(lines) => {
            for line in lines {
                S::keylog(sid, id, &line);
            }
            true
        }
        TlsEvent::ClientHello => {
            let asked = with(|r| {
                let t = r.conn(id)?.stream.tls()?;
                Some((t.sni_name()?.to_string(), t.sni_protocols().to_vec()))
            })
            .flatten();
            if let Some((name, protocols)) = asked {
                S::sni_request(sid, id, &name, &protocols);
            }
            false
        }
        TlsEvent::HandshakeDone => on_secure::<S>(sid, id),
        TlsEvent::HandOff => {
            let read = with(|r| Some(r.conn(id)?.stream.tls_mut()?.take_read())).flatten();
            let fd = with(|r| r.release_socket(id)).flatten();
            if let (Some(read), Some(fd)) = (read, fd) {
                S::tls_hand_off(sid, id, fd, &read);
            }
            false
        }
        TlsEvent::Failed(f) if handshaking => {
            S::tls_client_error(sid, id, &f);
            with(|r| r.close_conn(id, 0));
            false
        }
        // A record that fails after the handshake: OpenSSL's error is the socket's.
        TlsEvent::Failed(f) => {
            S::tls_error(id, &f);
            with(|r| r.close_conn(id, 0));
            false
        }
    }
}

/// The handshake completed: JS hears of it ('secureConnection') before the first request, and
/// what rustls has to send (session tickets) goes with the batch. A client certificate
/// rejectUnauthorized refuses ends the connection instead, as node's onServerSocketSecure
/// destroys the socket from OpenSSL's handshake-done callback: what the handshake left to
/// send (a TLS 1.2 server's Finished, so the client never sees it complete) is dropped, no
/// alert goes, and the server tells 'tlsClientError' ECONNRESET (its socket closed before
/// the handshake released it). Returns whether it goes on.
fn on_secure<S: SecureSink>(sid: u32, id: u64) -> bool {
    let info = with(|r| {
        r.stats.tls_handshakes += 1;
        let now = r.now;
        let c = r.conn(id)?;
        let info = c.stream.tls()?.session_info();
        if info.reject {
            return Some(Err(()));
        }
        // The HTTP parser's clock starts here, as node's does at 'secureConnection'.
        if c.http.req_start == 0 && !c.http.is_upgraded() {
            c.http.req_start = now.max(1);
        }
        match protocol(info.alpn.as_deref()) {
            Protocol::Http1 => {}
        }
        r.after_write(id);
        Some(Ok(info))
    })
    .flatten();
    match info {
        Some(Ok(info)) => {
            S::secure(sid, id, &info);
            true
        }
        Some(Err(())) => {
            S::tls_client_error(sid, id, &HANG_UP);
            with(|r| r.forget(id, 0));
            false
        }
        None => false,
    }
}

/// A read of connection `id` failed (`errno`). A reset after part of the handshake came is
/// node's 'tlsClientError' (its wording is the Node version's, JS's to choose); a reset
/// before any byte is the connection's close, which JS reports the same way for every Node.
/// Returns whether it was handled here.
pub(super) fn on_read_error<S: SecureSink>(id: u64, errno: i32) -> bool {
    let sid = with(|r| {
        let c = r.conn(id)?;
        let t = c.stream.tls()?;
        (errno == -libc::ECONNRESET && t.is_handshaking() && t.had_input()).then_some(c.server)
    })
    .flatten();
    let Some(sid) = sid else { return false };
    S::tls_client_error(sid, id, &RESET_IN_HANDSHAKE);
    with(|r| r.close_conn(id, 0));
    true
}

/// node's tls.Server: a handshake not done by handshakeTimeout is a 'tlsClientError'. node does
/// not close the socket for it: https's listener destroys it unless the app listens to
/// 'clientError' (then the app decides, as for any clientError).
pub(super) fn on_handshake_deadline<S: SecureSink>(id: u64) {
    let sid = with(|r| {
        let c = r.conn(id)?;
        c.stream.tls()?.is_handshaking().then_some(c.server)
    })
    .flatten();
    if let Some(sid) = sid {
        S::tls_client_error(sid, id, &HANDSHAKE_TIMEOUT);
    }
}

impl Reactor {
    /// Server `sid`'s connections from now on are TLS with `ctx` (https.createServer,
    /// setSecureContext), or plain (None).
    pub fn set_server_context(&mut self, sid: u32, ctx: Option<Context>) {
        if let Some(s) = self.server(sid) {
            s.tls = ctx;
        }
    }

    /// JS answered a TLS connection's SNICallback: the handshake goes on with `ctx`'s
    /// certificates (None: the server's own), or (Err) the connection closes (JS tells
    /// 'tlsClientError' with the callback's error, as node's loadSNI destroys the socket).
    pub fn sni_answer(&mut self, id: u64, ctx: Result<Option<Context>, ()>, alpn: AlpnChoice) {
        let Some(c) = self.conn(id) else { return };
        let Some(t) = c.stream.tls_mut() else { return };
        if t.sni_name().is_none() {
            return;
        }
        match ctx {
            Err(()) => self.close_conn(id, 0),
            Ok(ctx) => {
                t.answer_sni(ctx.as_deref(), alpn);
                // The ServerHello goes out with the batch: the client waits for it.
                self.after_write(id);
                self.defer(Deferred::Resume(id));
            }
        }
    }

    /// RFC 5705 keying material of connection `id` (node's tlsSocket.exportKeyingMaterial).
    pub fn keying_material(
        &mut self,
        id: u64,
        len: usize,
        label: &[u8],
        context: Option<&[u8]>,
    ) -> Result<Vec<u8>, &'static str> {
        let c = self.conn(id).ok_or("the connection is closed")?;
        let t = c.stream.tls().ok_or("not a TLS connection")?;
        t.export_keying_material(len, label, context)
            .map_err(|_| "the TLS handshake is not complete")
    }
}

#[cfg(test)]
mod tests;
