//! What rustls's shared callbacks need to know of the connection being processed. A config
//! (with its key log and ticketer) is shared by every connection of a context, and rustls
//! calls them synchronously inside its processing, so the connection's facts are set here
//! for the length of one processing call (`with_connection`) and read by the callbacks.

use std::cell::{Cell, RefCell};

/// Where the handshake being processed stands with tickets (`tls_tickets`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Handshake {
    /// No connection is being processed: tickets as rustls asks for them.
    Outside,
    /// No ticket of ours has been opened for this handshake (yet).
    Fresh,
    /// This ClientHello's ticket was opened (node's ticket keys are current, as node's
    /// ticket-key callback takes no other): OpenSSL resumes without a new ticket, so in
    /// TLSv1.2 the ServerHello does not promise one (tickets read as disabled here).
    Opened,
    /// The handshake resumed: OpenSSL sends a resumed TLSv1.3 handshake no NewSessionTicket
    /// (`s->hit && !s->ext.ticket_expected`), so none is sealed.
    Resumed,
}

thread_local! {
    static HANDSHAKE: Cell<Handshake> = const { Cell::new(Handshake::Outside) };
    /// The key-log lines of the connection being processed, while it logs.
    static KEYLOG: RefCell<Option<Vec<Vec<u8>>>> = const { RefCell::new(None) };
    /// The server name the processed connection's ClientHello sent, as sent.
    static SENT_NAME: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` (rustls processing one connection's input) with that connection's facts:
/// `resumed` whether its handshake resumed already, `keylog` the lines it collects when
/// the server listens for 'keylog', and `name` the server name its ClientHello sent.
pub fn with_connection<R>(
    resumed: bool,
    keylog: Option<&mut Vec<Vec<u8>>>,
    name: Option<&str>,
    f: impl FnOnce() -> R,
) -> R {
    // Set only while a handshake is processed (records after it pass no name).
    let name_before = name.map(|name| SENT_NAME.with(|n| n.replace(Some(name.to_string()))));
    let state = if resumed {
        Handshake::Resumed
    } else {
        Handshake::Fresh
    };
    let before = HANDSHAKE.with(|h| h.replace(state));
    let r = match keylog {
        None => f(),
        Some(lines) => {
            KEYLOG.with(|k| *k.borrow_mut() = Some(std::mem::take(lines)));
            let r = f();
            *lines = KEYLOG.with(|k| k.borrow_mut().take()).unwrap_or_default();
            r
        }
    };
    HANDSHAKE.with(|h| h.set(before));
    if let Some(before) = name_before {
        SENT_NAME.with(|n| *n.borrow_mut() = before);
    }
    r
}

/// The server name the processed connection's ClientHello sent, as sent (rustls's is
/// lowercased, and none for an IP literal).
pub fn sent_name() -> Option<String> {
    SENT_NAME.with(|n| n.borrow().clone())
}

/// The processed connection's ticket state.
pub fn handshake() -> Handshake {
    HANDSHAKE.with(Cell::get)
}

/// A ticket of ours was opened for the processed (fresh) handshake.
pub fn ticket_opened() {
    HANDSHAKE.with(|h| {
        if h.get() == Handshake::Fresh {
            h.set(Handshake::Opened);
        }
    });
}

/// The `KeyLog` of every context: lines go to the connection being processed, if it logs.
#[derive(Debug)]
pub struct ThreadKeyLog;

impl rustls::KeyLog for ThreadKeyLog {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        // rustls derives the early traffic secret of every resumed TLS 1.3 handshake; OpenSSL
        // logs it only when it accepts early data, which this server never does.
        if label == "CLIENT_EARLY_TRAFFIC_SECRET" {
            return;
        }
        KEYLOG.with(|k| {
            if let Some(lines) = k.borrow_mut().as_mut() {
                lines.push(keylog_line(label, client_random, secret));
            }
        });
    }

    fn will_log(&self, _label: &str) -> bool {
        KEYLOG.with(|k| k.borrow().is_some())
    }
}

/// NSS key-log format, as OpenSSL writes it for node's 'keylog': `LABEL <client random hex>
/// <secret hex>\n`.
pub fn keylog_line(label: &str, client_random: &[u8], secret: &[u8]) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut line = Vec::with_capacity(label.len() + 3 + 2 * (client_random.len() + secret.len()));
    line.extend_from_slice(label.as_bytes());
    for part in [client_random, secret] {
        line.push(b' ');
        for b in part {
            line.push(HEX[(b >> 4) as usize]);
            line.push(HEX[(b & 15) as usize]);
        }
    }
    line.push(b'\n');
    line
}
