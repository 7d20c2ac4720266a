//! Every crossing between JS and the addon, declared once: the functions JS calls (with
//! their named arguments), the object arguments, the callbacks JS registers, the objects the
//! addon hands to JS, and the named constants. `super::contract`'s macros make the Rust that
//! reads and builds them and the description `scripts/check-contract.js` renders as
//! `lib/internal/native.d.ts`.

use super::contract::values::{
    Bytes, Chunk, Id, JsObject, JsStr, Latin1, OrFalse, Rest, SharedF64, Text,
};
use super::contract::{
    callbacks, constants, exports, js_object, js_record, NamedType, Returns, ToJs,
};
use super::napi::{self, Env, Value};
use super::{response, server, socket};
use std::net::SocketAddr;

exports! {
    /// Registers the callbacks, the request methods (by parser index) and node's status
    /// lines ([code, reason] pairs), the array batches of events share with JS
    /// (lib/internal/events.js) and the one ended responses wait in
    /// (lib/http/response-batch.js); starts the reactor on this thread.
    fn init(Init {
        callbacks: Registered, methods: Vec<Latin1>, status_codes: Vec<(u32, Latin1)>,
        events: SharedF64, responses: SharedF64
    }) -> "void" => super::init;
    /// A server; with `same_as_last` it starts with the settings of the last `server_config`
    /// (JS has checked they are the ones it wants).
    fn server_create(ServerCreate { same_as_last: bool }) -> "number" => server::create;
    /// A TLS context; throws ERR_FAST_HTTP_TLS with the reason when rustls refuses it.
    fn tls_context_create(TlsContextCreate { spec: TlsSpec }) -> "number"
        => server::tls_context_create;
    /// [key, ...certs] of a PKCS#12 archive (PKCS#8 DER, DER certificates), or undefined.
    fn tls_decode_pfx(TlsDecodePfx { pfx: &'a [u8], passphrase: Option<JsStr> })
        -> "Buffer[] | undefined" => server::tls_decode_pfx;
    fn tls_context_free(TlsContextFree { ctx: u32 }) -> "void" => server::tls_context_free;
    /// The server's next connections are TLS with this context.
    fn server_set_tls(ServerSetTls { sid: u32, ctx: u32 }) -> "void" => server::server_set_tls;
    /// node's server.addContext.
    fn tls_add_context(TlsAddContext { ctx: u32, servername: JsStr, exact_case: bool, other: u32 })
        -> "void"
        => server::tls_add_context;
    /// The SNICallback / ALPNCallback of a connection answered: a context handle,
    /// SNI_SERVER_CONTEXT or SNI_FAILED; the index of the client's protocol chosen,
    /// ALPN_NOT_ASKED or ALPN_NONE.
    fn tls_sni_answer(TlsSniAnswer { id: Id, ctx: f64, alpn: f64 }) -> "void"
        => server::tls_sni_answer;
    fn tls_get_ticket_keys(TlsGetTicketKeys { ctx: u32 }) -> "Buffer"
        => server::tls_get_ticket_keys;
    fn tls_set_ticket_keys(TlsSetTicketKeys { ctx: u32, keys: &'a [u8] }) -> "void"
        => server::tls_set_ticket_keys;
    /// RFC 5705 keying material of a connection whose handshake is done.
    fn tls_export_keying_material(TlsExportKeyingMaterial {
        id: Id, length: f64, label: JsStr, context: Option<&'a [u8]>
    }) -> "Buffer" => socket::tls_export_keying_material;
    /// Applies every option present.
    fn server_config(ServerConfig { sid: u32, options: ServerOptions }) -> "void"
        => server::config;
    /// Listener-presence bits, as JS listeners come and go.
    fn server_flags(ServerFlags { sid: u32, mask: u32, value: u32 }) -> "void" => server::flags;
    fn listen_tcp(ListenTcp {
        sid: u32, ip: JsStr, port: u32, backlog: u32, reuse_port: bool, ipv6_only: bool
    }) -> "ListenAddress | number" => server::listen_tcp;
    fn listen_unix(ListenUnix { sid: u32, path: JsStr, backlog: u32 }) -> "number"
        => server::listen_unix;
    /// listen({ fd }), listen(handle), a cluster's shared handle.
    fn adopt_listener(AdoptListener { sid: u32, fd: f64, backlog: u32, dup: bool })
        -> "ListenAddress | string | number" => server::adopt_listener;
    /// A connection accepted elsewhere (a cluster primary's round-robin hand-off).
    fn adopt_connection(AdoptConnection { sid: u32, fd: f64 })
        -> "[id: number, wantsConnectionEvent: boolean] | [SocketAddresses] | [] | number"
        => server::adopt_connection;
    fn server_close(ServerClose { sid: u32 }) -> "number" => server::close;
    fn server_free(ServerFree { sid: u32 }) -> "number" => server::free;
    fn server_ref(ServerRef { sid: u32, on: bool }) -> "void" => server::set_ref;
    fn server_conns(ServerConns { sid: u32, idle_only: bool }) -> "number[]" => server::conns;
    /// A whole response in one call: status line, the app's header lines, node's automatic
    /// headers (`flags`), the body framed; `life` says how it ends (RESPONSE_* bits).
    fn respond(Respond {
        id: Id, seq: u32, status: u32, reason: Option<JsStr>, header_lines: JsStr,
        body: Option<Chunk<'a>>, flags: u32, trailers: Option<JsStr>, life: u32
    }) -> "void" => response::respond;
    /// Responses JS queued during a batch, in the order they ended, from the `first`-th on:
    /// each one's numbers in the responses array (RESPONSES_START on, RESPONSE_NUMBERS each:
    /// connection, seq, status or SENT_HEAD, flags, life) and its four values here: reason,
    /// header lines (or node's head text), body, trailers.
    fn respond_batch(RespondBatch { first: u32, values: Rest }) -> "void"
        => response::respond_batch;
    /// A response whose head node serialized, with its whole body.
    fn send(SendWithHead {
        id: Id, seq: u32, head: JsStr, body: Option<Chunk<'a>>, flags: u32,
        trailers: Option<JsStr>, life: u32
    }) -> "void" => response::send;
    /// A response written through the socket is complete.
    fn finish(Finish { id: Id, seq: u32, close: bool }) -> "void" => response::finish;
    /// One chunk of the socket's own writes; with `defer` it waits for `flush` unless the
    /// queue passes the high-water mark. Returns what is unsent, -1 when closed.
    fn raw(Raw { id: Id, data: Chunk<'a>, latin1: bool, high_water_mark: f64, defer: bool })
        -> "number" => socket::raw;
    fn flush(Flush { id: Id, high_water_mark: f64 }) -> "number" => socket::flush;
    /// The process is about to exit: what was ended goes to the kernel now.
    fn flush_all(FlushAll {}) -> "void" => socket::flush_all;
    /// The responses handed over so far in this batch go to the kernel now, not at its end
    /// (their batch has run long: lib/internal/response-batch.js).
    fn write_batch(WriteBatch {}) -> "void" => socket::write_batch;
    fn pause(Pause { id: Id, paused: bool }) -> "void" => socket::pause;
    /// Bytes handed to socket.push() in HTTP mode, parsed as if read.
    fn inject(Inject { id: Id, bytes: &'a [u8] }) -> "void" => socket::inject;
    /// server.shouldUpgradeCallback's answer.
    fn decide_upgrade(DecideUpgrade { id: Id, upgrade: bool }) -> "void"
        => socket::decide_upgrade;
    fn discard_body(DiscardBody { id: Id }) -> "void" => socket::discard_body;
    /// A handler JS ran from its tick queue threw: the request's, or a 'data' listener of
    /// its body (`body`), at `at` in the bytes being parsed.
    fn handler_threw(HandlerThrew { id: Id, at: u32, body: bool }) -> "void"
        => socket::handler_threw;
    /// An exception reached node's uncaught path ('uncaughtExceptionMonitor').
    fn note_uncaught(NoteUncaught {}) -> "void" => socket::note_uncaught;
    fn tap(Tap { id: Id, on: bool }) -> "void" => socket::tap;
    /// Closes now (RST with `reset`); `assigned`: the seq of the response the socket
    /// belongs to in JS, or NO_RESPONSE.
    fn destroy(Destroy { id: Id, reset: bool, assigned: f64 }) -> "void" => socket::destroy;
    fn shutdown(Shutdown { id: Id }) -> "void" => socket::shutdown;
    /// onClosePhase(token) runs as a close callback; false when no loop takes it.
    fn close_phase(ClosePhase { token: f64 }) -> "boolean" => super::close_phase;
    fn set_timeout(SetTimeout { id: Id, ms: f64 }) -> "void" => socket::set_timeout;
    fn set_no_delay(SetNoDelay { id: Id, on: bool }) -> "void" => socket::set_no_delay;
    fn set_keep_alive(SetKeepAlive { id: Id, on: bool, delay_secs: u32 }) -> "void"
        => socket::set_keep_alive;
    fn conn_ref(ConnRef { id: Id, on: bool }) -> "void" => socket::conn_ref;
    /// JS holds (or dropped) a socket object; returns whether the connection is open.
    fn watch(Watch { id: Id, on: bool }) -> "boolean" => socket::watch;
    fn info(Info { id: Id }) -> "SocketAddresses | undefined" => socket::info;
    fn io_stats(IoStats { id: Id })
        -> "[bytesRead: number, bytesWritten: number, queued: number] | undefined"
        => socket::io_stats;
    fn stats(Stats {}) -> "[serversCreated: number, connectionsAccepted: number, \
        requestsDispatched: number, tlsHandshakes: number, driver: string]" => super::stats, uncounted;
    fn counters(Counters {})
        -> "[nativeToJs: number, jsToNative: number, writeCalls: number, readCalls: number]"
        => super::counters, uncounted;
    #[cfg(feature = "test-hooks")]
    /// The next request for `url` panics inside its batch.
    fn test_panic_on(TestPanicOn { url: JsStr }) -> "void" => super::test_panic_on;
}

js_object! {
    /// `server_config`'s options: a field present is applied.
    pub struct ServerOptions {
        max_header_size: Option<f64>,
        keep_alive_timeout: Option<f64>,
        timeout: Option<f64>,
        headers_timeout: Option<f64>,
        request_timeout: Option<f64>,
        check_interval: Option<f64>,
        flags: Option<u32>,
        keep_alive_delay: Option<u32>,
        max_connections: Option<f64>,
        max_header_lines: Option<u32>,
        keep_alive_line: Option<Latin1>,
        handshake_timeout: Option<f64>,
    }
}

js_object! {
    /// A TLS context's settings (lib/https/options.js makes them from node's options).
    pub struct TlsSpec {
        pairs: Vec<(Bytes, Bytes)>,
        ca: Vec<Bytes>,
        roots: Option<Vec<Bytes>>,
        request_cert: bool,
        reject_unauthorized: bool,
        min_version: u32,
        max_version: u32,
        alpn: Vec<Latin1>,
        tickets: bool,
        ciphers: Option<Vec<String>>,
        honor_cipher_order: Option<bool>,
        groups: Option<Vec<String>>,
        session_timeout: Option<f64>,
        ticket_keys: Option<Bytes>,
    }
}

js_record! {
    /// A completed handshake, as the socket's TLS getters answer from it.
    pub struct TlsSession<'a> {
        protocol: &'a str,
        cipher_name: &'a str,
        standard_name: &'a str,
        alpn_protocol: OrFalse<Text<'a>>,
        servername: OrFalse<Text<'a>>,
        resumed: bool,
        peer_chain: Vec<&'a [u8]>,
        authorization_error: OrFalse<&'a str>,
    }
}

/// A connection's addresses, as net's 'drop' and the socket's getters take them.
pub struct Addresses {
    pub local: Option<SocketAddr>,
    pub peer: Option<SocketAddr>,
}

impl ToJs for Addresses {
    fn ts() -> String {
        "SocketAddresses".into()
    }
    fn to_js(&self, env: Env) -> Value {
        let mut parts = Vec::with_capacity(6);
        for a in [self.local, self.peer] {
            match a {
                Some(a) => {
                    parts.push(napi::utf8(env, &a.ip().to_string()));
                    parts.push(napi::u32v(env, a.port() as u32));
                    parts.push(napi::utf8(env, if a.is_ipv6() { "IPv6" } else { "IPv4" }));
                }
                None => parts.extend([napi::undefined(env); 3]),
            }
        }
        napi::array(env, &parts)
    }
}

/// What `new_resource` returns: a connection's async resource.
pub struct AsyncResource;

impl Returns for AsyncResource {
    fn ts() -> String {
        "object".into()
    }
}

callbacks! {
    /// A request head.
    event Request<'a> => on_request {
        sid: u32, id: Id, seq: u32, method: u32, url: Text<'a>, header_block: Text<'a>,
        flags: u32, body: Option<&'a [u8]>, head_end: u32
    } -> ();
    /// A piece of a body, ending at `at` in the bytes being parsed.
    event Body<'a> => on_body { id: Id, seq: u32, chunk: &'a [u8], at: u32 } -> ();
    event BodyEnd<'a> => on_body_end { id: Id, seq: u32, trailer_block: Option<Text<'a>> }
        -> ();
    event Drain => on_drain { id: Id } -> ();
    event Close => on_close { id: Id, errno: i32 } -> ();
    /// A connection JS never saw failed.
    event Reset => on_reset { sid: u32, id: Id, errno: i32 } -> ();
    event Timeout => on_timeout { id: Id, sid: u32 } -> ();
    /// A parse error or a request timeout ('clientError').
    event ClientError<'a> => on_client_error {
        sid: u32, id: Id, code: &'a str, reason: &'a str, raw_packet: Option<&'a [u8]>,
        bytes_parsed: u32
    } -> ();
    event Connection => on_connection { sid: u32, id: Id } -> ();
    /// A connection closed at accept: the server is at maxConnections.
    event Dropped => on_drop { sid: u32, addresses: Addresses } -> ();
    /// Bytes of an upgraded connection, or tapped HTTP bytes.
    event Data<'a> => on_data { id: Id, chunk: &'a [u8] } -> ();
    /// The peer ended its side.
    event End => on_end { id: Id } -> ();
    /// A closed server's last connection is gone.
    event ServerDrained => on_server_drained { sid: u32 } -> ();
    /// FIN went out after socket.end().
    event Shutdown => on_shutdown { id: Id } -> ();
    /// fast-http panicked serving `sid` (-1: unknown).
    event InternalError<'a> => on_internal_error { sid: i32, message: &'a str } -> ();
    /// An Upgrade request whose body went through it upgrades; `head`: what followed it.
    event Upgrade<'a> => on_upgrade { id: Id, seq: u32, head: Option<&'a [u8]> } -> ();
    /// The TLS handshake completed.
    direct Secure<'a> => on_secure { sid: u32, id: Id, session: TlsSession<'a> } -> ();
    /// A TLS connection failed before its handshake did.
    direct TlsClientError<'a> => on_tls_client_error {
        sid: u32, id: Id, code: &'a str, message: &'a str
    } -> ();
    /// A TLS connection's record failed after its handshake: the socket's error.
    direct TlsError<'a> => on_tls_error { id: Id, code: &'a str, message: &'a str } -> ();
    /// One NSS key-log line of a TLS handshake.
    direct Keylog<'a> => on_keylog { sid: u32, id: Id, line: &'a [u8] } -> ();
    /// The handshake waits for the SNICallback / ALPNCallback (`protocols` as on the wire).
    direct SniRequest<'a> => on_sni_request {
        sid: u32, id: Id, servername: &'a str, protocols: &'a [u8]
    } -> ();
    /// Node's TLS serves the connection (its ClientHello named a server rustls refuses, or the
    /// server listens for what only OpenSSL tells) from descriptor `fd` (JS's to close),
    /// starting with the bytes `read` from it.
    direct TlsHandOff<'a> => on_tls_hand_off { sid: u32, id: Id, fd: i32, read: &'a [u8] } -> ();
    /// A new connection's async resource (`sid` -1 when its server is gone).
    direct NewResource => new_resource { sid: f64, id: Id } -> AsyncResource;
    /// The close callback `close_phase(token)` armed.
    direct ClosePhase => on_close_phase { token: f64 } -> ();
    /// The batch is about to write: JS hands over the responses it queued (`respond_batch`).
    direct TakeResponses => take_responses {} -> ();
}

/// The object arguments, for the TypeScript declarations.
pub const OBJECTS: &[(&str, &[super::contract::Field])] = &[
    ("ServerOptions", ServerOptions::FIELDS),
    ("TlsSpec", TlsSpec::FIELDS),
];

/// Named types the declarations use.
pub const TYPES: &[NamedType] = &[
    NamedType {
        name: "TlsSession",
        ts: TlsSession::declared,
    },
    NamedType {
        name: "ListenAddress",
        ts: || "[address: string, port: number, family: string]".into(),
    },
    NamedType {
        name: "SocketAddresses",
        ts: || {
            "[localAddress?: string, localPort?: number, localFamily?: string, \
             remoteAddress?: string, remotePort?: number, remoteFamily?: string]"
                .into()
        },
    },
];

constants! {
    /// tls_sni_answer: the connection fails (JS tells 'tlsClientError').
    SNI_FAILED = -1;
    /// tls_sni_answer: the server's own context.
    SNI_SERVER_CONTEXT = 0;
    /// tls_sni_answer: no ALPNCallback was asked (the context's ALPNProtocols hold).
    ALPN_NOT_ASKED = -1;
    /// tls_sni_answer: the ALPNCallback chose none (no_application_protocol).
    ALPN_NONE = -2;
    /// destroy: the socket belongs to no response.
    NO_RESPONSE = -1;
    /// The events array: where the addon writes its group number (a new one wherever JS
    /// ran its ticks since the last call: lib/http/native-events.js's queue policy).
    EVENTS_GROUP = 0;
    /// The events array: how many events a call carries (of onBatch: how many groups); JS
    /// writes back whether it holds events in its tick queue.
    EVENTS_COUNT = 1;
    /// The events array: JS writes back whether onEvents' connection may have its groups
    /// in batches (its resource carries the context's async ids).
    EVENTS_READY = 2;
    /// The events array: the group of onBatch's whose events or ticks run (JS writes it).
    EVENTS_PROGRESS = 3;
    /// The events array: where onBatch's first group starts.
    EVENTS_AT = 4;
    /// The events array: where the first event of onEvents starts (its kind, then its
    /// numbers).
    EVENTS_START = 5;
    /// The responses array: how many responses JS has queued (JS writes it).
    RESPONSES_COUNT = 0;
    /// The responses array: BATCH_OPEN or BATCH_LAST_READ while the addon runs a batch,
    /// which takes the queued responses before it writes (the addon writes it); 0 where JS
    /// must respond at once.
    RESPONSES_OPEN = 1;
    /// RESPONSES_OPEN: a batch is open.
    BATCH_OPEN = 1;
    /// RESPONSES_OPEN: a batch is open and reads the last connection its poll found ready:
    /// JS hands its queue over when its tick queue has run (no later read would join it),
    /// and the batch need not ask.
    BATCH_LAST_READ = 2;
    /// The responses array: when (JS's `performance.now()`) the batch's first response not
    /// yet written was queued, 0 for none (JS writes it; the addon clears it when it writes
    /// the batch's responses).
    RESPONSES_HELD_AT = 2;
    /// The responses array: where the first queued response's numbers start.
    RESPONSES_START = 3;
    /// The responses array: the numbers of one response.
    RESPONSE_NUMBERS = 5;
    /// respond_batch: in place of a status, the response's head is node's text.
    SENT_HEAD = -1;
}

/// What `init` registers: the functions events are handed to (`onEvents` for one
/// connection's group, `onBatch` for many connections' groups, which lib/internal/events.js
/// makes from the event handlers) and each direct callback, held by
/// reference (None at an event's place).
pub struct Registered {
    pub on_events: ::napi::sys::napi_ref,
    /// The function many connections' groups are handed to in one call.
    pub on_batch: ::napi::sys::napi_ref,
    pub direct: Vec<Option<::napi::sys::napi_ref>>,
}

impl super::contract::FromJs for Registered {
    fn ts() -> String {
        "Registered".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<Registered, super::contract::Misfit> {
        use super::contract::{camel, values, Misfit};
        let obj = JsObject::from_js(env, v).map_err(|_| Misfit::wrong::<Registered>(env, v))?;
        let function = |name: String| {
            let f = napi::get_named(env, obj.0, &name);
            if napi::is_function(env, f) {
                return Ok(f);
            }
            Err(Misfit {
                path: format!(".{name}"),
                what: values::Why::Type {
                    want: "a function".into(),
                    got: values::kind_name(values::typeof_(env, f)),
                },
            })
        };
        let on_events = function("onEvents".into())?;
        let on_batch = function("onBatch".into())?;
        let mut direct = Vec::with_capacity(CALLBACKS.len());
        for c in CALLBACKS {
            direct.push(if c.event {
                None
            } else {
                Some(function(camel(c.name))?)
            });
        }
        Ok(Registered {
            on_events: napi::reference(env, on_events),
            on_batch: napi::reference(env, on_batch),
            direct: direct
                .into_iter()
                .map(|f| f.map(|f| napi::reference(env, f)))
                .collect(),
        })
    }
}
