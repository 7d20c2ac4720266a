//! A TLS server session without I/O: ciphertext in (`read_tls`, from any reader: a socket, a
//! completion's buffer, a test's byte slice), plaintext and TLS events out (`next`,
//! `take_event`: the handshake done, key-log lines, a ClientHello for JS to decide, a
//! failure), plaintext in (`write_plain`) and ciphertext out (`write_tls`, to any writer).
//! Alerts OpenSSL would send in the clear are queued with the rest of the output. The
//! readiness rules (read until the socket would block, one recv per request) are the
//! driver's (`super::readiness`). Buffers are bounded: rustls keeps at most `BUFFER_LIMIT` of
//! output, and input is decrypted only as fast as it is taken.

use super::tls_config::TlsContext;
use super::tls_hello::{self, HelloName};
use super::tls_records::{RecordScan, Refused};
use super::tls_scope;
use rustls::server::{Accepted, Acceptor};
use rustls::ServerConnection;
use std::io::{self, ErrorKind, IoSlice, Read, Write};
use std::sync::Arc;

/// A source with nothing to read yet.
struct WouldBlock;

impl Read for WouldBlock {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(ErrorKind::WouldBlock.into())
    }
}

/// Most plaintext + ciphertext rustls holds for output before writes report a full buffer
/// (a peer that never reads costs this much, as the plain path's socket buffer does).
pub const BUFFER_LIMIT: usize = 64 * 1024;

/// How far the first bytes from the client are kept, to name what a non-TLS client sent.
const FIRST_BYTES: usize = 8;

/// Why a handshake or a record failed, as node's 'tlsClientError' / socket error tells it:
/// OpenSSL's error code and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFailure {
    pub code: &'static str,
    pub reason: &'static str,
    /// OpenSSL's packed error number (library SSL, reason) shown in its message.
    pub number: u32,
}

impl TlsFailure {
    /// OpenSSL's name for the library in the packed error number (ERR_GET_LIB).
    pub fn library(&self) -> &'static str {
        match self.number >> 23 {
            57 => "Provider routines",
            _ => "SSL routines",
        }
    }
}

impl std::fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.number == 0 {
            return f.write_str(self.reason);
        }
        write!(
            f,
            "error:{:08X}:{}::{}",
            self.number,
            self.library(),
            self.reason
        )
    }
}

/// What the session has for the connection after the ciphertext it was given.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// This much plaintext (never 0).
    Bytes(usize),
    /// A TLS event (`take_event`), to act on before any plaintext that follows it.
    Event,
    /// Nothing until more ciphertext comes.
    Empty,
    /// Nothing until JS answers the ClientHello (`answer_sni`): no input is taken meanwhile.
    Wait,
    /// The input ended (close_notify, or the socket's end after the handshake).
    End,
}

/// A TLS event the embedder acts on before it takes more plaintext.
#[derive(Debug, PartialEq, Eq)]
pub enum TlsEvent {
    /// The handshake completed: the embedder announces the secure connection before its
    /// first request. Once.
    HandshakeDone,
    /// Key-log lines the handshake made (node's 'keylog').
    Keylog(Vec<Vec<u8>>),
    /// The ClientHello waits for `answer_sni` (the server's SNICallback / ALPNCallback is
    /// asked: `sni_name`, `sni_protocols`).
    ClientHello,
    /// The session failed (its alert, if any, is queued for the peer): node's
    /// 'tlsClientError' during the handshake, a socket error after it.
    Failed(TlsFailure),
    /// The connection goes to node's TLS with every byte read so far (`take_read`), nothing
    /// processed or sent: its ClientHello names a server rustls refuses (not a DNS name, where
    /// OpenSSL takes any name), or `hand_off_now` said so.
    HandOff,
}

/// Where a handshake that waits for node's SNICallback / ALPNCallback is.
enum Sni {
    /// Reading the ClientHello.
    Reading(Box<Acceptor>),
    /// JS is choosing the context for this ClientHello (its server name, "" for none) and,
    /// with an ALPNCallback, the protocol among the client's (empty: not asked).
    Asking(Box<Accepted>, String, Vec<Vec<u8>>),
    /// The ClientHello was not taken: the next event reports it.
    Failed(rustls::Error),
}

/// What node's ALPNCallback chose, in JS's answer to a waiting ClientHello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlpnChoice {
    /// No ALPNCallback was asked: the context's ALPNProtocols.
    Config,
    /// The client's protocol at this index.
    Chosen(usize),
    /// None: OpenSSL fails the handshake with a no_application_protocol alert.
    Refused,
}

/// What JS learns when the handshake is done (node's TLSSocket getters).
pub struct SessionInfo {
    pub protocol: &'static str,
    pub cipher: (&'static str, &'static str),
    pub alpn: Option<Vec<u8>>,
    pub servername: Option<String>,
    pub resumed: bool,
    /// The client's chain (DER), when the server asked for one.
    pub peer_chain: Vec<Vec<u8>>,
    /// node's authorizationError, when the server asked for a certificate.
    pub authorization_error: Option<&'static str>,
    /// The client is to be closed now (rejectUnauthorized and a failing chain).
    pub reject: bool,
}

pub struct TlsSession {
    conn: ServerConnection,
    ctx: Arc<TlsContext>,
    first: [u8; FIRST_BYTES],
    first_len: usize,
    eof: bool,
    announced: bool,
    /// Key-log lines are collected (the server listened for 'keylog' when this began).
    keylog: bool,
    keylog_lines: Vec<Vec<u8>>,
    /// node's SNICallback / ALPNCallback: until JS has answered, `conn` is a placeholder
    /// never fed.
    sni: Option<Sni>,
    /// The ClientHello waits for JS and `take_event` has not said so yet.
    hello_untold: bool,
    /// The server has an SNICallback (JS is asked for a ClientHello that names a server).
    sni_callback: bool,
    /// The server has an ALPNCallback (JS is asked for a ClientHello that offers ALPN).
    alpn_callback: bool,
    /// The failure `take_event` reports next.
    failure: Option<TlsFailure>,
    /// Alerts OpenSSL sends in the clear where rustls sends none (or another one): they go
    /// out before anything rustls holds.
    clear_out: Vec<u8>,
    /// A failure OpenSSL reports without an alert: nothing rustls holds goes to the peer.
    muted: bool,
    /// Every byte read, until the ClientHello's server name is known (`tls_hello`).
    read: Option<Vec<u8>>,
    /// The ClientHello's server name as sent (rustls lowercases it, and drops an IP literal).
    sent_name: Option<String>,
    /// The connection is node's TLS's: `TlsEvent::HandOff`, once.
    hand_off: bool,
    /// `next` has the end or an event that the plaintext before it kept back.
    held: bool,
    /// The headers of the records read after the handshake (OpenSSL's errors for them).
    records: Option<RecordScan>,
}

/// Passes the bytes read after the handshake to the record scan.
struct Scanning<'a> {
    src: &'a mut dyn Read,
    scan: &'a mut RecordScan,
}

impl Read for Scanning<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.src.read(buf)?;
        self.scan.feed(&buf[..n]);
        Ok(n)
    }
}

/// Records the first bytes read (only until the handshake is done), and every byte until
/// the ClientHello's server name is known.
struct Recording<'a> {
    src: &'a mut dyn Read,
    first: &'a mut [u8; FIRST_BYTES],
    first_len: &'a mut usize,
    read: Option<&'a mut Vec<u8>>,
}

impl Read for Recording<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.src.read(buf)?;
        let take = (FIRST_BYTES - *self.first_len).min(n);
        self.first[*self.first_len..*self.first_len + take].copy_from_slice(&buf[..take]);
        *self.first_len += take;
        if let Some(read) = self.read.as_deref_mut() {
            read.extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }
}

impl TlsSession {
    pub fn new(ctx: Arc<TlsContext>) -> io::Result<TlsSession> {
        let mut conn = ServerConnection::new(ctx.config.clone()).map_err(io::Error::other)?;
        conn.set_buffer_limit(Some(BUFFER_LIMIT));
        Ok(TlsSession {
            conn,
            ctx,
            first: [0; FIRST_BYTES],
            first_len: 0,
            eof: false,
            announced: false,
            keylog: false,
            keylog_lines: Vec::new(),
            sni: None,
            hello_untold: false,
            sni_callback: false,
            alpn_callback: false,
            failure: None,
            clear_out: Vec::new(),
            muted: false,
            read: Some(Vec::new()),
            sent_name: None,
            hand_off: false,
            held: false,
            records: None,
        })
    }

    /// The server has an SNICallback (`sni`: a ClientHello that names a server waits for JS)
    /// and / or an ALPNCallback (`alpn`: a ClientHello that offers ALPN waits for JS).
    pub fn ask_sni(&mut self, sni: bool, alpn: bool) {
        self.sni_callback = sni;
        self.alpn_callback = alpn;
        self.sni = Some(Sni::Reading(Box::default()));
    }

    /// The server name JS is asked about ("" for none), while the handshake waits for its
    /// answer.
    pub fn sni_name(&self) -> Option<&str> {
        match &self.sni {
            Some(Sni::Asking(_, name, _)) => Some(name),
            _ => None,
        }
    }

    /// The client's ALPN protocols the ALPNCallback is asked about (empty: not asked).
    pub fn sni_protocols(&self) -> &[Vec<u8>] {
        match &self.sni {
            Some(Sni::Asking(_, _, protocols)) => protocols,
            _ => &[],
        }
    }

    /// JS's answer: the handshake goes on with `ctx`'s certificates (None: the server's own)
    /// and the ALPN protocol `alpn` says; the ServerHello is output to send. A failure is
    /// the next event.
    pub fn answer_sni(&mut self, ctx: Option<&TlsContext>, alpn: AlpnChoice) {
        let Some(Sni::Asking(accepted, _, protocols)) = self.sni.take() else {
            return;
        };
        let mut config = match ctx {
            Some(other) => self.ctx.config_with_keys(other),
            None => self.ctx.config.clone(),
        };
        let offered = match alpn {
            AlpnChoice::Config => None,
            AlpnChoice::Chosen(i) => protocols.get(i).cloned(),
            AlpnChoice::Refused => None,
        };
        if alpn != AlpnChoice::Config {
            // The connection's config offers exactly the chosen protocol; for none, one no
            // client can offer (ALPN names are never empty), so rustls fails the handshake
            // with no_application_protocol as OpenSSL does.
            let mut own = (*config).clone();
            own.alpn_protocols = vec![offered.unwrap_or_default()];
            config = Arc::new(own);
        }
        let keylog = self.keylog.then_some(&mut self.keylog_lines);
        let name = self.sent_name.as_deref();
        let made =
            tls_scope::with_connection(false, keylog, name, || accepted.into_connection(config));
        match made {
            Ok(conn) => {
                self.conn = conn;
                self.conn.set_buffer_limit(Some(BUFFER_LIMIT));
            }
            Err((e, mut alert)) => {
                let _ = alert.write_all(&mut self.clear_out);
                self.sni = Some(Sni::Failed(e));
            }
        }
    }

    /// A ClientHello read whole is decided: JS is asked, or (a ClientHello without a name)
    /// the handshake goes on at once.
    fn accept_hello(&mut self) {
        let Some(Sni::Reading(acceptor)) = self.sni.as_mut() else {
            return;
        };
        match acceptor.accept() {
            Ok(None) => {}
            Ok(Some(accepted)) => {
                let hello = accepted.client_hello();
                let name = self
                    .sent_name
                    .clone()
                    .or_else(|| hello.server_name().map(str::to_string));
                // OpenSSL calls the ALPN select callback only for a ClientHello with ALPN.
                let protocols: Vec<Vec<u8>> = match hello.alpn() {
                    Some(list) if self.alpn_callback => list.map(<[u8]>::to_vec).collect(),
                    _ => Vec::new(),
                };
                // node calls SNICallback only for a ClientHello with a name.
                let ask = (self.sni_callback && name.is_some()) || !protocols.is_empty();
                let name = name.unwrap_or_default();
                self.sni = Some(Sni::Asking(Box::new(accepted), name, protocols));
                if ask {
                    self.hello_untold = true;
                } else {
                    self.answer_sni(None, AlpnChoice::Config);
                }
            }
            Err((e, mut alert)) => {
                let _ = alert.write_all(&mut self.clear_out);
                self.sni = None;
                self.failure = Some(self.failed(e));
            }
        }
    }

    /// Collect key-log lines for JS (node's 'keylog', for connections begun while the server
    /// had a listener).
    pub fn set_keylog(&mut self, on: bool) {
        self.keylog = on;
    }

    /// `process_new_packets`, with this session's key-log lines collected when it logs.
    fn process(&mut self) -> Result<(), rustls::Error> {
        // Tickets as OpenSSL hands them out depend on whether this handshake resumed.
        let resumed = self.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
        let conn = &mut self.conn;
        let keylog = self.keylog.then_some(&mut self.keylog_lines);
        // addContext's names are matched during the handshake only.
        let name = self.sent_name.as_deref().filter(|_| conn.is_handshaking());
        tls_scope::with_connection(resumed, keylog, name, || conn.process_new_packets()).map(|_| ())
    }

    /// After a read while the ClientHello's server name is not known: learns it from the bytes
    /// read, and whether rustls may have them (false: the connection is node's TLS's).
    fn read_hello(&mut self) -> bool {
        let Some(read) = self.read.as_ref() else {
            return true;
        };
        match tls_hello::client_hello_name(read) {
            HelloName::Incomplete if read.len() <= tls_hello::MAX_HELLO => return true,
            HelloName::Name(Some(name)) if !tls_hello::rustls_takes(&name) => {
                self.sent_name = Some(String::from_utf8_lossy(&name).into_owned());
                self.hand_off = true;
                return false;
            }
            HelloName::Name(name) => {
                self.sent_name = name.map(|n| String::from_utf8_lossy(&n).into_owned());
            }
            HelloName::Incomplete | HelloName::Unreadable => {}
        }
        self.read = None;
        true
    }

    /// The connection goes to node's TLS before any byte is read (`TlsEvent::HandOff` is the
    /// first thing `next` reports): the server listens for what only OpenSSL tells, its
    /// session cache ('newSession' / 'resumeSession') or OCSP stapling ('OCSPRequest').
    pub fn hand_off_now(&mut self) {
        self.hand_off = true;
    }

    /// The bytes a connection handed off (`TlsEvent::HandOff`) read: node's TLS starts with them.
    pub fn take_read(&mut self) -> Vec<u8> {
        self.read.take().unwrap_or_default()
    }

    /// Takes one read of ciphertext from `src` and processes it (a failure is the next
    /// event). Ok(0): `src` ended. WouldBlock from `src` as it came; also while the
    /// ClientHello waits for JS (no input is taken then).
    pub fn read_tls(&mut self, src: &mut dyn Read) -> io::Result<usize> {
        if self.hand_off {
            return Err(ErrorKind::WouldBlock.into());
        }
        let mut rec = Recording {
            src,
            first: &mut self.first,
            first_len: &mut self.first_len,
            read: self.read.as_mut(),
        };
        let n = match self.sni.as_mut() {
            Some(Sni::Reading(acceptor)) => acceptor.read_tls(&mut rec)?,
            Some(_) => return Err(ErrorKind::WouldBlock.into()),
            None if self.announced => match self.records.as_mut() {
                Some(scan) => self.conn.read_tls(&mut Scanning { src, scan })?,
                None => self.conn.read_tls(src)?,
            },
            None => self.conn.read_tls(&mut rec)?,
        };
        if n == 0 {
            self.eof = true;
        }
        if !self.read_hello() {
            return Ok(n);
        }
        if self.sni.is_some() {
            self.accept_hello();
        } else if let Err(e) = self.process() {
            self.failure = Some(self.failed(e));
        } else if !self.announced && !self.conn.is_handshaking() {
            self.hold_if_refused();
        }
        Ok(n)
    }

    /// What the ciphertext taken so far gives: plaintext into `buf` (not empty), or an event
    /// to take first, or why there is nothing.
    pub fn next(&mut self, buf: &mut [u8]) -> io::Result<Next> {
        self.held = false;
        if self.has_event() {
            return Ok(Next::Event);
        }
        if self.hand_off {
            return Ok(Next::Wait);
        }
        match &self.sni {
            Some(Sni::Asking(..)) => return Ok(Next::Wait),
            Some(_) if self.eof => return Ok(self.ended()),
            Some(_) => return Ok(Next::Empty),
            None => {}
        }
        match self.conn.reader().read(buf) {
            Ok(0) => Ok(Next::End),
            Ok(n) => Ok(Next::Bytes(n)),
            Err(e) if e.kind() == ErrorKind::WouldBlock && self.eof => Ok(self.ended()),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(Next::Empty),
            // The socket ended without close_notify: the input ends there too.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => Ok(self.ended()),
            Err(e) => Err(e),
        }
    }

    /// The caller took plaintext and left what `next` said after it for its next read.
    pub fn hold_next(&mut self) {
        self.held = true;
    }

    /// Gives back the input buffer a large record grew, once every record in it was taken.
    /// rustls keeps its record buffer at the size the last records needed (a 16 KiB record
    /// leaves about 18 KiB) until its next read, which shrinks it to 4 KiB when it holds no
    /// partial record: on an idle keep-alive connection that next read may be hours away.
    /// A read from a source that would block is that shrink and nothing else.
    pub fn release_input(&mut self) {
        if self.sni.is_none() && self.announced && !self.hand_off {
            let _ = self.conn.read_tls(&mut WouldBlock);
        }
    }

    /// What `hold_next` left is still to be taken.
    pub fn holds_next(&self) -> bool {
        self.held
    }

    fn has_event(&mut self) -> bool {
        if matches!(self.sni, Some(Sni::Failed(_))) {
            if let Some(Sni::Failed(e)) = self.sni.take() {
                self.failure = Some(self.failed(e));
            }
        }
        self.failure.is_some()
            || (self.hand_off && self.read.is_some())
            || self.hello_untold
            || !self.keylog_lines.is_empty()
            || (self.sni.is_none() && !self.announced && !self.conn.is_handshaking())
    }

    /// The event `next` announced (failure, ClientHello, key-log lines, handshake done, in
    /// that order), each once.
    pub fn take_event(&mut self) -> Option<TlsEvent> {
        if !self.has_event() {
            return None;
        }
        if let Some(f) = self.failure.take() {
            return Some(TlsEvent::Failed(f));
        }
        if self.hand_off {
            return Some(TlsEvent::HandOff);
        }
        if std::mem::take(&mut self.hello_untold) {
            return Some(TlsEvent::ClientHello);
        }
        if !self.keylog_lines.is_empty() {
            return Some(TlsEvent::Keylog(std::mem::take(&mut self.keylog_lines)));
        }
        self.announced = true;
        self.records = Some(self.record_scan());
        Some(TlsEvent::HandshakeDone)
    }

    /// The input ended. Before the handshake finished that is node's 'tlsClientError'
    /// ECONNRESET "socket hang up" (onSocketClose in _tls_wrap.js).
    fn ended(&mut self) -> Next {
        if self.sni.is_some() || self.conn.is_handshaking() {
            self.sni = None;
            self.failure = Some(HANG_UP);
            return Next::Event;
        }
        Next::End
    }

    pub fn is_handshaking(&self) -> bool {
        self.sni.is_some() || self.conn.is_handshaking()
    }

    /// Some of the client's handshake came.
    pub fn had_input(&self) -> bool {
        self.first_len > 0
    }

    /// Ciphertext (or a clear alert) waits to be sent.
    pub fn wants_write(&self) -> bool {
        !self.clear_out.is_empty() || (!self.muted && self.conn.wants_write())
    }

    /// Sends some of what `wants_write` reports to `dst` (one write of it).
    pub fn write_tls(&mut self, dst: &mut dyn Write) -> io::Result<usize> {
        if !self.clear_out.is_empty() {
            let n = dst.write(&self.clear_out)?;
            self.clear_out.drain(..n);
            return Ok(n);
        }
        if self.muted {
            return Ok(0);
        }
        self.conn.write_tls(dst)
    }

    /// Takes plaintext to send, up to the buffer limit (0: full).
    pub fn write_plain(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.conn.writer().write_vectored(bufs)
    }

    /// Queues close_notify.
    pub fn close_notify(&mut self) {
        self.conn.send_close_notify();
    }

    /// The handshake just completed with a client certificate rejectUnauthorized refuses:
    /// nothing more is sent (node's onServerSocketSecure destroys the socket from OpenSSL's
    /// handshake-done callback, before a TLS 1.2 server's Finished leaves its buffer), and
    /// `session_info` says `reject`.
    fn hold_if_refused(&mut self) {
        if !(self.ctx.request_cert && self.ctx.reject_unauthorized) {
            return;
        }
        let chain: Vec<_> = self
            .conn
            .peer_certificates()
            .map(|certs| certs.iter().map(|c| c.clone().into_owned()).collect())
            .unwrap_or_default();
        if self.ctx.check_client(&chain).is_some() {
            self.muted = true;
        }
    }

    /// The record scan for this connection's version and suite.
    fn record_scan(&self) -> RecordScan {
        use rustls::CipherSuite as S;
        let gcm = matches!(
            self.conn.negotiated_cipher_suite().map(|s| s.suite()),
            Some(
                S::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
                    | S::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
                    | S::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
                    | S::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
            )
        );
        RecordScan::new(
            self.conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3),
            gcm,
        )
    }

    /// Queues what OpenSSL would send for `e` (an alert, or nothing) and names the failure.
    fn failed(&mut self, e: rustls::Error) -> TlsFailure {
        // A record OpenSSL refuses for its header, before it would decrypt it.
        let refused = self.records.as_ref().and_then(RecordScan::refused);
        if let Some(r) = refused {
            return match r {
                Refused::BadType => fail("ERR_SSL_BAD_RECORD_TYPE", "bad record type", 0x0A0001BB),
                Refused::WrongVersion => WRONG_VERSION,
                // OpenSSL 3.0's provider error (3.5's record layer says decryption failed:
                // JS words it for its Node).
                Refused::ShortAead => fail("ERR_SSL_INVALID_AAD", "invalid aad", 0x1C80006C),
                Refused::UnknownType => CIPHER_OPERATION_FAILED,
            };
        }
        let mut f = describe(&e, &self.first[..self.first_len]);
        // After a TLS 1.2 handshake, OpenSSL 3 opens AES-GCM records in its provider, whose
        // error a record that does not open is (a TLS 1.3 record's is the SSL library's).
        if f == DECRYPT_FAILED
            && !self.conn.is_handshaking()
            && self.conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_2)
        {
            f = CIPHER_OPERATION_FAILED;
        }
        if self.first_len >= 2 && self.first[1] != 3 {
            // OpenSSL's ssl3_get_record: a first record whose version is not 3.x does not look
            // like TLS (plain HTTP, garbage) and gets no alert (SSL_AD_NO_ALERT).
            self.muted = true;
        } else if f == NO_CERTIFICATE {
            // A server without a certificate: OpenSSL finds no TLS 1.2 suite it can serve, or
            // no TLS 1.3 signature, and sends handshake_failure, not rustls's access_denied.
            if self.conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_2) {
                f = fail("ERR_SSL_NO_SHARED_CIPHER", "no shared cipher", 0x0A0000C1);
            }
            self.muted = true;
            self.clear_out.extend_from_slice(&HANDSHAKE_FAILURE_ALERT);
        } else if let rustls::Error::AlertReceived(alert) = e {
            // OpenSSL answers no alert with one of its own. TLS 1.3's user_canceled is a
            // closure alert it passes over (RFC 8446 section 6.1): the client that sent it
            // goes next, a hang-up.
            if alert == rustls::AlertDescription::UserCanceled
                && self.conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3)
            {
                f = HANG_UP;
            }
        } else if matches!(e, rustls::Error::NoCertificatesPresented)
            && self.conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_2)
        {
            // SSL_VERIFY_FAIL_IF_NO_PEER_CERT without a client certificate: OpenSSL's TLS 1.2
            // server sends handshake_failure (certificate_required is TLS 1.3's, RFC 8446
            // 4.4.2.4), where rustls sends certificate_required for both.
            self.muted = true;
            self.clear_out.extend_from_slice(&HANDSHAKE_FAILURE_ALERT);
        } else if !self.conn.wants_write() && self.conn.is_handshaking() {
            // rustls sends nothing for some malformed handshakes (a message longer than it
            // takes); OpenSSL sends unexpected_message, in the clear before any keys.
            self.clear_out.extend_from_slice(&UNEXPECTED_MESSAGE_ALERT);
        }
        f
    }

    /// RFC 5705 keying material (node's exportKeyingMaterial); an error before the handshake
    /// is done.
    pub fn export_keying_material(
        &self,
        len: usize,
        label: &[u8],
        context: Option<&[u8]>,
    ) -> Result<Vec<u8>, rustls::Error> {
        self.conn
            .export_keying_material(vec![0; len], label, context)
    }

    pub fn session_info(&self) -> SessionInfo {
        let c = &self.conn;
        let protocol = c
            .protocol_version()
            .map_or("unknown", super::tls_config::protocol_name);
        let cipher = c
            .negotiated_cipher_suite()
            .map_or(("unknown", "unknown"), |s| {
                super::tls_config::cipher_names(s.suite())
            });
        let chain: Vec<_> = c
            .peer_certificates()
            .map(|certs| certs.iter().map(|c| c.clone().into_owned()).collect())
            .unwrap_or_default();
        let authorization_error = if self.ctx.request_cert {
            self.ctx.check_client(&chain)
        } else {
            None
        };
        SessionInfo {
            protocol,
            cipher,
            alpn: c.alpn_protocol().map(|p| p.to_vec()),
            servername: self
                .sent_name
                .clone()
                .or_else(|| c.server_name().map(str::to_string)),
            resumed: c.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
            peer_chain: if self.ctx.request_cert {
                chain.iter().map(|c| c.to_vec()).collect()
            } else {
                Vec::new()
            },
            reject: authorization_error.is_some() && self.ctx.reject_unauthorized,
            authorization_error,
        }
    }
}

/// node's 'tlsClientError' for a handshake that took longer than handshakeTimeout.
pub const HANDSHAKE_TIMEOUT: TlsFailure =
    fail("ERR_TLS_HANDSHAKE_TIMEOUT", "TLS handshake timeout", 0);

/// A fatal unexpected_message alert record, unencrypted (TLS 1.2 record version).
const UNEXPECTED_MESSAGE_ALERT: [u8; 7] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x0a];

/// A fatal handshake_failure alert record, unencrypted.
const HANDSHAKE_FAILURE_ALERT: [u8; 7] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28];

/// OpenSSL's error when the server has no certificate to sign with (tls_choose_sigalg).
const NO_CERTIFICATE: TlsFailure = fail(
    "ERR_SSL_NO_SUITABLE_SIGNATURE_ALGORITHM",
    "no suitable signature algorithm",
    0x0A000076,
);

const WRONG_VERSION: TlsFailure = fail(
    "ERR_SSL_WRONG_VERSION_NUMBER",
    "wrong version number",
    0x0A00010B,
);

const DECRYPT_FAILED: TlsFailure = fail(
    "ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC",
    "decryption failed or bad record mac",
    0x0A000119,
);

/// OpenSSL 3's provider error for a TLS 1.2 AES-GCM record that does not open.
const CIPHER_OPERATION_FAILED: TlsFailure = fail(
    "ERR_SSL_CIPHER_OPERATION_FAILED",
    "cipher operation failed",
    0x1C800066,
);

/// OpenSSL's reason for each alert the peer may send (its number is SSL_AD_REASON_OFFSET,
/// 1000, plus the alert's), as node reports a received fatal alert.
const ALERTS: [(u8, &str, &str); 33] = [
    (
        10,
        "ERR_SSL_SSLV3_ALERT_UNEXPECTED_MESSAGE",
        "sslv3 alert unexpected message",
    ),
    (
        20,
        "ERR_SSL_SSLV3_ALERT_BAD_RECORD_MAC",
        "sslv3 alert bad record mac",
    ),
    (
        21,
        "ERR_SSL_TLSV1_ALERT_DECRYPTION_FAILED",
        "tlsv1 alert decryption failed",
    ),
    (
        22,
        "ERR_SSL_TLSV1_ALERT_RECORD_OVERFLOW",
        "tlsv1 alert record overflow",
    ),
    (
        30,
        "ERR_SSL_SSLV3_ALERT_DECOMPRESSION_FAILURE",
        "sslv3 alert decompression failure",
    ),
    (
        40,
        "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE",
        "sslv3 alert handshake failure",
    ),
    (
        41,
        "ERR_SSL_SSLV3_ALERT_NO_CERTIFICATE",
        "sslv3 alert no certificate",
    ),
    (
        42,
        "ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE",
        "sslv3 alert bad certificate",
    ),
    (
        43,
        "ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE",
        "sslv3 alert unsupported certificate",
    ),
    (
        44,
        "ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED",
        "sslv3 alert certificate revoked",
    ),
    (
        45,
        "ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED",
        "sslv3 alert certificate expired",
    ),
    (
        46,
        "ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN",
        "sslv3 alert certificate unknown",
    ),
    (
        47,
        "ERR_SSL_SSLV3_ALERT_ILLEGAL_PARAMETER",
        "sslv3 alert illegal parameter",
    ),
    (
        48,
        "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA",
        "tlsv1 alert unknown ca",
    ),
    (
        49,
        "ERR_SSL_TLSV1_ALERT_ACCESS_DENIED",
        "tlsv1 alert access denied",
    ),
    (
        50,
        "ERR_SSL_TLSV1_ALERT_DECODE_ERROR",
        "tlsv1 alert decode error",
    ),
    (
        51,
        "ERR_SSL_TLSV1_ALERT_DECRYPT_ERROR",
        "tlsv1 alert decrypt error",
    ),
    (
        60,
        "ERR_SSL_TLSV1_ALERT_EXPORT_RESTRICTION",
        "tlsv1 alert export restriction",
    ),
    (
        70,
        "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION",
        "tlsv1 alert protocol version",
    ),
    (
        71,
        "ERR_SSL_TLSV1_ALERT_INSUFFICIENT_SECURITY",
        "tlsv1 alert insufficient security",
    ),
    (
        80,
        "ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR",
        "tlsv1 alert internal error",
    ),
    (
        86,
        "ERR_SSL_TLSV1_ALERT_INAPPROPRIATE_FALLBACK",
        "tlsv1 alert inappropriate fallback",
    ),
    (
        90,
        "ERR_SSL_TLSV1_ALERT_USER_CANCELLED",
        "tlsv1 alert user cancelled",
    ),
    (
        100,
        "ERR_SSL_TLSV1_ALERT_NO_RENEGOTIATION",
        "tlsv1 alert no renegotiation",
    ),
    (
        109,
        "ERR_SSL_TLSV13_ALERT_MISSING_EXTENSION",
        "tlsv13 alert missing extension",
    ),
    (
        110,
        "ERR_SSL_TLSV1_UNSUPPORTED_EXTENSION",
        "tlsv1 unsupported extension",
    ),
    (
        111,
        "ERR_SSL_TLSV1_CERTIFICATE_UNOBTAINABLE",
        "tlsv1 certificate unobtainable",
    ),
    (
        112,
        "ERR_SSL_TLSV1_UNRECOGNIZED_NAME",
        "tlsv1 unrecognized name",
    ),
    (
        113,
        "ERR_SSL_TLSV1_BAD_CERTIFICATE_STATUS_RESPONSE",
        "tlsv1 bad certificate status response",
    ),
    (
        114,
        "ERR_SSL_TLSV1_BAD_CERTIFICATE_HASH_VALUE",
        "tlsv1 bad certificate hash value",
    ),
    (
        115,
        "ERR_SSL_TLSV1_ALERT_UNKNOWN_PSK_IDENTITY",
        "tlsv1 alert unknown psk identity",
    ),
    (
        116,
        "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED",
        "tlsv13 alert certificate required",
    ),
    (
        120,
        "ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL",
        "tlsv1 alert no application protocol",
    ),
];

/// OpenSSL's error for a fatal alert the peer sent (OpenSSL 3.5 words the "sslv3 alert" ones
/// "ssl/tls alert": JS renames them for its Node). An alert it has no reason for ends the
/// handshake as a hang-up (node's 'socket hang up').
fn alert_received(alert: u8) -> TlsFailure {
    ALERTS
        .iter()
        .find(|(n, _, _)| *n == alert)
        .map_or(HANG_UP, |&(n, code, reason)| {
            fail(code, reason, 0x0A00_0000 + 1000 + n as u32)
        })
}

/// node's error for a client gone before the handshake finished.
pub const HANG_UP: TlsFailure = fail("ECONNRESET", "socket hang up", 0);

/// A reset after part of the handshake came: Node 24+ reports the read error ('read
/// ECONNRESET', errno, syscall), Node 20 and 22 'socket hang up'; JS words it for its Node.
pub const RESET_IN_HANDSHAKE: TlsFailure = fail("ECONNRESET", "read ECONNRESET", 0);

const fn fail(code: &'static str, reason: &'static str, number: u32) -> TlsFailure {
    TlsFailure {
        code,
        reason,
        number,
    }
}

/// OpenSSL's error for what rustls rejected (node's `err.code` is `ERR_SSL_` + the reason).
pub fn describe(e: &rustls::Error, first: &[u8]) -> TlsFailure {
    use rustls::{Error as E, InvalidMessage as M, PeerIncompatible as P, PeerMisbehaved as B};
    let http = [
        &b"GET "[..],
        b"POST ",
        b"HEAD ",
        b"PUT ",
        b"DELETE ",
        b"OPTIONS ",
        b"PATCH ",
        b"CONNECT ",
        b"TRACE ",
    ];
    match e {
        E::InvalidMessage(M::InvalidContentType | M::UnknownProtocolVersion)
        | E::InvalidMessage(_)
            if http
                .iter()
                .any(|m| first.starts_with(&m[..m.len().min(first.len())]))
                && first.len() >= 4
                && !matches!(e, E::InvalidMessage(M::MessageTooLarge)) =>
        {
            if first.starts_with(b"CONNECT ") {
                fail(
                    "ERR_SSL_HTTPS_PROXY_REQUEST",
                    "https proxy request",
                    0x0A00009B,
                )
            } else {
                fail("ERR_SSL_HTTP_REQUEST", "http request", 0x0A00009C)
            }
        }
        E::InvalidMessage(M::UnknownProtocolVersion | M::InvalidContentType) => WRONG_VERSION,
        E::InvalidMessage(M::MessageTooLarge) => fail(
            "ERR_SSL_PACKET_LENGTH_TOO_LONG",
            "packet length too long",
            0x0A0000C6,
        ),
        E::PeerIncompatible(P::Tls12NotOffered | P::Tls12NotOfferedOrEnabled)
        | E::PeerIncompatible(P::SupportedVersionsExtensionRequired) => fail(
            "ERR_SSL_UNSUPPORTED_PROTOCOL",
            "unsupported protocol",
            0x0A000102,
        ),
        E::PeerIncompatible(P::NoCipherSuitesInCommon) => {
            fail("ERR_SSL_NO_SHARED_CIPHER", "no shared cipher", 0x0A0000C1)
        }
        E::PeerIncompatible(P::NoKxGroupsInCommon | P::NoEcPointFormatsInCommon) => fail(
            "ERR_SSL_NO_SUITABLE_KEY_SHARE",
            "no suitable key share",
            0x0A000065,
        ),
        E::PeerIncompatible(P::NoSignatureSchemesInCommon) => fail(
            "ERR_SSL_NO_SUITABLE_SIGNATURE_ALGORITHM",
            "no suitable signature algorithm",
            0x0A000076,
        ),
        E::NoCertificatesPresented => fail(
            "ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE",
            "peer did not return a certificate",
            0x0A0000C7,
        ),
        // rustls's error when the certificate resolver has nothing (a server made without one).
        E::General(m) if m == "no server certificate chain resolved" => NO_CERTIFICATE,
        E::NoApplicationProtocol => fail(
            "ERR_SSL_NO_APPLICATION_PROTOCOL",
            "no application protocol",
            0x0A0000EB,
        ),
        E::DecryptError => DECRYPT_FAILED,
        E::AlertReceived(a) => alert_received(u8::from(*a)),
        // rustls refuses a TLS 1.2 client's renegotiation with a warning, and a second one
        // with this: node's error for a client that renegotiates past its limit.
        E::PeerMisbehaved(B::TooManyRenegotiationRequests) => fail(
            "ERR_TLS_SESSION_ATTACK",
            "TLS session renegotiation attack detected",
            0,
        ),
        E::PeerMisbehaved(_) => fail(
            "ERR_SSL_UNEXPECTED_MESSAGE",
            "unexpected message",
            0x0A0000F4,
        ),
        _ => fail(
            "ERR_SSL_UNEXPECTED_MESSAGE",
            "unexpected message",
            0x0A0000F4,
        ),
    }
}

#[cfg(test)]
mod tests;
