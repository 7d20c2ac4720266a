//! What the reactor tells its embedder (the N-API binding) and asks of it. The reactor knows
//! nothing of JS: it calls these with plain values and borrowed bytes, never while it holds
//! a borrow of itself, since the embedder may call back into it.

/// Set in a dispatched request's flags when JS runs it from its tick queue, at the end of the
/// group of calls (`Sink::boundary`): a throw there reaches V8's message listener with the
/// throw's position (node's source excerpt and caret), where a throw inside an N-API call
/// keeps only the error. JS queues whatever of the connection follows it until the group's
/// next boundary, and tells the reactor of a throw (`Reactor::handler_threw`).
pub const F_QUEUED: u32 = 1 << 26;

/// A request head, its byte ranges resolved.
pub struct Request<'a> {
    pub sid: u32,
    pub id: u64,
    pub seq: u32,
    pub method: u16,
    pub url: &'a [u8],
    pub headers: &'a [u8],
    pub flags: u32,
    pub body: Option<&'a [u8]>,
    /// Where the head ends in the bytes being parsed (node's error position when the
    /// request's handler throws).
    pub head_end: u32,
}

/// A parse or timeout error on a connection ('clientError').
pub struct ClientError<'a> {
    pub sid: u32,
    pub id: u64,
    pub code: &'static str,
    pub reason: &'static str,
    /// The bytes being parsed when it failed (node's `err.rawPacket`).
    pub packet: Option<&'a [u8]>,
    /// node's `err.bytesParsed`.
    pub at: u32,
}

/// The embedder. All functions run on the loop's thread. What the TLS room tells it is
/// `SecureSink`.
pub trait Sink: super::secure::SecureSink {
    /// Held while a group of events for connection `id` (or none) is delivered; dropping it
    /// ends the group (where JS runs its ticks and promise jobs, as after one node:http read).
    type Scope;

    fn scope(id: Option<u64>) -> Option<Self::Scope>;
    /// Ends the group of calls so far and starts the next one in the same scope: node runs
    /// ticks and promise jobs after each of its parser's body and message-complete callbacks.
    /// Returns true when they threw (the exception went to node's uncaught path).
    fn boundary(scope: &mut Self::Scope) -> bool;
    /// Whether JS was called since the current scope opened or its last boundary: what it
    /// queued for its ticks then runs before anything queued now (see F_QUEUED).
    fn touched() -> bool;
    fn connection(sid: u32, id: u64);
    /// A connection was closed at accept: the server is at maxConnections.
    fn drop(sid: u32, local: Option<std::net::SocketAddr>, peer: Option<std::net::SocketAddr>);
    /// Returns true when JS threw (node's parser fails the connection then); a request with
    /// F_QUEUED cannot throw here.
    fn request(req: &Request<'_>) -> bool;
    /// Returns true when JS threw (node's parser fails the connection then). `at`: where the
    /// piece ends in the bytes being parsed. With `queue`, JS queues it as an F_QUEUED
    /// request, until the boundary that follows.
    fn body(id: u64, seq: u32, chunk: &[u8], at: u32, queue: bool) -> bool;
    fn body_end(id: u64, seq: u32, trailers: Option<&[u8]>);
    /// Upgrade request `seq`, whose body went through the request, upgrades now: `head` is
    /// what followed its body in the read, or None when the body is still coming.
    fn upgrade(id: u64, seq: u32, head: Option<&[u8]>);
    /// Bytes of an upgraded connection, or bytes an app listens for with 'data' (`tap`).
    fn data(id: u64, chunk: &[u8]);
    /// With `queue`, JS queues it as an F_QUEUED request, until the scope's next boundary or
    /// end.
    fn client_error(e: &ClientError<'_>, queue: bool);
    /// The output written after JS saw a full buffer is gone.
    fn drain(id: u64);
    fn close(id: u64, errno: i32);
    /// A connection JS holds nothing for failed with `errno` (a reset before any request).
    fn reset(sid: u32, id: u64, errno: i32);
    /// The peer ended its side.
    fn end(id: u64);
    /// FIN went out after JS ended the socket.
    fn shutdown(id: u64);
    /// Called in a scope of the connection's own: JS queues it until the scope ends.
    fn timeout(id: u64, sid: u32);
    /// A closed server's last connection is gone.
    fn server_drained(sid: u32);
    /// A bug: code of this crate panicked while serving `sid` (when known). The reactor has
    /// closed what the panic concerned; the embedder makes it a JS error.
    fn internal_error(sid: Option<u32>, message: &str);
    /// Connection `id` is gone: whatever the embedder keeps for it can go.
    fn released(id: u64);
}
