// Type definitions for fast-http.
//
// fast-http is a drop-in replacement for the *server* half of node:http, so
// its public types are deliberately the node:http types (from @types/node)
// rather than a parallel hierarchy: every fast-http class is declared as a
// subclass of its node:http counterpart, and every generic parameter has the
// same constraint as in @types/node. That way
//   - code written against `import * as http from 'node:http'` compiles
//     unchanged when the import is switched to 'fast-http';
//   - a fast-http `Server` can be passed anywhere an `http.Server` is
//     expected (ws, socket.io, graceful-shutdown helpers, test utilities ...);
//   - handlers typed as `(req: http.IncomingMessage, res: http.ServerResponse)`
//     are accepted as fast-http request listeners, and vice versa.
//
// The subclasses add no members but Server's `fastHttp`: they exist so that
// the names exported by fast-http (and shown in editor tooltips) are
// fast-http's own, and so that `instanceof` against fast-http's runtime
// classes type-checks. The rest of node:http's exports are node's own, as at
// runtime. `fast-http/https` is https.d.ts, `fast-http/register` register.d.ts.

/// <reference types="node" />

import * as http from 'node:http';

// Everything else node:http exports (Agent, globalAgent, get, request, ClientRequest,
// OutgoingMessage, METHODS, STATUS_CODES, maxHeaderSize, validateHeaderName, ..., and the
// types: RequestOptions, AgentOptions, IncomingHttpHeaders, ...) is node's own, at runtime
// and here: the declarations below take precedence over these for the names they declare.
export * from 'node:http';

/**
 * What served a server: `server.fastHttp`. `{ native: true }` on fast-http's servers;
 * `{ native: false, reason }` on an https server that node's own https serves because of an
 * option fast-http's TLS does not implement (the reason names it). Absent on node's own
 * servers otherwise (e.g. where the addon did not load).
 */
export interface FastHttpServerInfo {
    readonly native: boolean;
    readonly reason?: string;
}

/**
 * The request object handed to request listeners. Same API as
 * `http.IncomingMessage`; can be subclassed and passed to
 * {@link createServer} via `options.IncomingMessage`.
 */
export declare class IncomingMessage extends http.IncomingMessage {}

/**
 * The response object handed to request listeners. Same API as
 * `http.ServerResponse`; can be subclassed and passed to
 * {@link createServer} via `options.ServerResponse`.
 */
export declare class ServerResponse<
    Request extends http.IncomingMessage = IncomingMessage,
> extends http.ServerResponse<Request> {}

/**
 * Options accepted by {@link createServer} and the {@link Server}
 * constructor: exactly those of `http.ServerOptions`.
 */
export interface ServerOptions<
    Request extends typeof http.IncomingMessage = typeof IncomingMessage,
    Response extends typeof http.ServerResponse<InstanceType<Request>> = typeof ServerResponse,
> extends http.ServerOptions<Request, Response> {}

/** A `'request'` event listener: same shape as `http.RequestListener`. */
export type RequestListener<
    Request extends typeof http.IncomingMessage = typeof IncomingMessage,
    Response extends typeof http.ServerResponse<InstanceType<Request>> = typeof ServerResponse,
> = http.RequestListener<Request, Response>;

/**
 * An HTTP server backed by fast-http's native core. It *is an* `http.Server`
 * as far as the type system is concerned (same events, methods and
 * properties), so it can be used wherever one is expected.
 */
export declare class Server<
    Request extends typeof http.IncomingMessage = typeof IncomingMessage,
    Response extends typeof http.ServerResponse<InstanceType<Request>> = typeof ServerResponse,
> extends http.Server<Request, Response> {
    /** `{ native: true }` on fast-http's servers (absent where the addon did not load). */
    readonly fastHttp?: FastHttpServerInfo;
    constructor(requestListener?: RequestListener<Request, Response>);
    constructor(options: ServerOptions<Request, Response>, requestListener?: RequestListener<Request, Response>);
}

/**
 * Returns a new {@link Server}. The optional `requestListener` is added to
 * the `'request'` event. Overloads mirror `http.createServer`.
 */
export declare function createServer<
    Request extends typeof http.IncomingMessage = typeof IncomingMessage,
    Response extends typeof http.ServerResponse<InstanceType<Request>> = typeof ServerResponse,
>(requestListener?: RequestListener<Request, Response>): Server<Request, Response>;
export declare function createServer<
    Request extends typeof http.IncomingMessage = typeof IncomingMessage,
    Response extends typeof http.ServerResponse<InstanceType<Request>> = typeof ServerResponse,
>(
    options: ServerOptions<Request, Response>,
    requestListener?: RequestListener<Request, Response>,
): Server<Request, Response>;

/**
 * Whether `server` is served by fast-http's native core: `false` for a
 * node:http server, and for every server where the addon did not load
 * (`native === false`: `createServer` then returns node:http's own).
 */
export declare function isFastHttpServer(server: unknown): boolean;

/**
 * node:https's API with its server on fast-http's native TLS: the same module as
 * `fast-http/https`. Options the native TLS does not implement (TLS 1.0 / 1.1,
 * secureOptions, PSK, cipher strings it cannot map exactly, ...:
 * docs/compatibility.md) give node:https's own server, whose `fastHttp.reason`
 * says why.
 */
export declare const https: typeof import('./https');

/**
 * Whether the native addon loaded. When it did not (Windows, a platform
 * without a prebuilt binary, a failed build), `createServer`, `Server`,
 * `IncomingMessage` and `ServerResponse` are node:http's own, after one
 * warning line on stderr; with `FAST_HTTP_REQUIRE_NATIVE=1` the import throws
 * `ERR_FAST_HTTP_NO_ADDON` instead.
 */
export declare const native: boolean;
