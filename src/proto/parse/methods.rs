//! Request methods: the names the running Node knows (`http.METHODS`) plus the ones llhttp
//! reads and then rejects, matched the way llhttp's method trie matches them.

/// Methods llhttp knows besides node's http.METHODS (RTSP, ICE, HTTP/2's preface). llhttp
/// reads them as methods, then rejects them for HTTP/x.x.
const LLHTTP_OTHER_METHODS: [&[u8]; 13] = [
    b"DESCRIBE",
    b"ANNOUNCE",
    b"SETUP",
    b"PLAY",
    b"PAUSE",
    b"TEARDOWN",
    b"GET_PARAMETER",
    b"SET_PARAMETER",
    b"REDIRECT",
    b"RECORD",
    b"FLUSH",
    b"PRI",
    b"SOURCE",
];

/// llhttp METHODS_RTSP: the methods an `RTSP/x.x` request line may carry.
const RTSP_METHODS: [&[u8]; 14] = [
    b"OPTIONS",
    b"DESCRIBE",
    b"ANNOUNCE",
    b"SETUP",
    b"PLAY",
    b"PAUSE",
    b"TEARDOWN",
    b"GET_PARAMETER",
    b"SET_PARAMETER",
    b"REDIRECT",
    b"RECORD",
    b"FLUSH",
    b"GET",
    b"POST",
];

pub(super) const P_HTTP: u8 = 1;
pub(super) const P_RTSP: u8 = 2;
pub(super) const P_ICE: u8 = 4;

#[derive(Debug, Clone)]
pub(super) struct MethodName {
    pub(super) name: Vec<u8>,
    /// Index in node's table, if node knows the method.
    pub(super) index: Option<u16>,
    /// Protocols (P_*) the method may be used with.
    pub(super) protocols: u8,
}

/// Looks up request methods by name. Built from the method list of the running Node
/// (`http.METHODS`), so the accepted set follows the Node version.
#[derive(Debug, Default, Clone)]
pub struct Methods {
    /// Node's methods first (by index), then llhttp's others.
    pub(super) all: Vec<MethodName>,
    /// Indexes into `all` by name length (the lookup of every request).
    by_len: Vec<Vec<usize>>,
    pub(super) connect: Option<u16>,
    pub(super) pri: Option<usize>,
}

impl Methods {
    pub fn new<I: IntoIterator<Item = Vec<u8>>>(names: I) -> Self {
        let mut all: Vec<MethodName> = names
            .into_iter()
            .enumerate()
            .map(|(i, name)| MethodName {
                index: u16::try_from(i).ok(),
                protocols: P_HTTP,
                name,
            })
            .collect();
        for other in LLHTTP_OTHER_METHODS {
            if !all.iter().any(|m| m.name == other) {
                all.push(MethodName {
                    name: other.to_vec(),
                    index: None,
                    protocols: 0,
                });
            }
        }
        for m in &mut all {
            if RTSP_METHODS.contains(&m.name.as_slice()) {
                m.protocols |= P_RTSP;
            }
            match m.name.as_slice() {
                b"SOURCE" => m.protocols |= P_ICE,
                b"PRI" => m.protocols |= P_HTTP,
                _ => {}
            }
        }
        let connect = all
            .iter()
            .find(|m| m.name == b"CONNECT")
            .and_then(|m| m.index);
        let pri = all.iter().position(|m| m.name == b"PRI");
        let mut by_len: Vec<Vec<usize>> = Vec::new();
        for (i, m) in all.iter().enumerate() {
            if by_len.len() <= m.name.len() {
                by_len.resize(m.name.len() + 1, Vec::new());
            }
            by_len[m.name.len()].push(i);
        }
        Methods {
            all,
            by_len,
            connect,
            pri,
        }
    }

    pub(super) fn exact(&self, m: &[u8]) -> Option<usize> {
        self.by_len
            .get(m.len())?
            .iter()
            .copied()
            .find(|&i| self.all[i].name == m)
    }

    /// Matches a method at the start of `b` the way llhttp's method trie does: bytes are
    /// taken while some method continues with them; then the bytes taken must be a whole
    /// method, followed by SP.
    pub(super) fn matches(&self, b: &[u8]) -> MethodMatch {
        // Fast path: a known method followed by SP.
        if let Some(sp) = b.iter().take(16).position(|&c| c == b' ') {
            if let Some(i) = self.exact(&b[..sp]) {
                return MethodMatch::Found(i, sp);
            }
        }
        let mut k = 0;
        loop {
            let Some(&c) = b.get(k) else {
                return MethodMatch::NeedMore;
            };
            let continues = self
                .all
                .iter()
                .any(|n| n.name.len() > k && n.name[..k] == b[..k] && n.name[k] == c);
            if continues {
                k += 1;
                continue;
            }
            return match self.exact(&b[..k]) {
                Some(i) if k > 0 => MethodMatch::Found(i, k),
                _ => MethodMatch::Invalid(k),
            };
        }
    }
}

pub(super) enum MethodMatch {
    NeedMore,
    /// The method (index in `Methods::all`) and its length.
    Found(usize, usize),
    /// No method; the offset of the byte that does not fit.
    Invalid(usize),
}
