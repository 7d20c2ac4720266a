// Type definitions for fast-http/https (also `require('fast-http').https`).
//
// node:https's module with its server on fast-http's native TLS: `Server` and
// `createServer` are declared as node:https's (a subclass, with the same
// generic parameters and overloads), everything else is node:https's own, at
// runtime and here.

/// <reference types="node" />

import * as http from 'node:http';
import * as https from 'node:https';
import type { FastHttpServerInfo } from './index';

export * from 'node:https';
export type { FastHttpServerInfo } from './index';

/** Options of {@link createServer} and {@link Server}: exactly node:https's. */
export interface ServerOptions<
    Request extends typeof http.IncomingMessage = typeof http.IncomingMessage,
    Response extends typeof http.ServerResponse<InstanceType<Request>> = typeof http.ServerResponse,
> extends https.ServerOptions<Request, Response> {}

/**
 * An https server: fast-http's on its native TLS, or node:https's own for
 * options that TLS does not implement (then `fastHttp` is
 * `{ native: false, reason }`, the reason naming the option).
 */
export declare class Server<
    Request extends typeof http.IncomingMessage = typeof http.IncomingMessage,
    Response extends typeof http.ServerResponse<InstanceType<Request>> = typeof http.ServerResponse,
> extends https.Server<Request, Response> {
    /** What serves this server (absent where the addon did not load). */
    readonly fastHttp?: FastHttpServerInfo;
    constructor(requestListener?: http.RequestListener<Request, Response>);
    constructor(
        options: ServerOptions<Request, Response>,
        requestListener?: http.RequestListener<Request, Response>,
    );
}

/** Returns a new {@link Server}; overloads mirror `https.createServer`. */
export declare function createServer<
    Request extends typeof http.IncomingMessage = typeof http.IncomingMessage,
    Response extends typeof http.ServerResponse<InstanceType<Request>> = typeof http.ServerResponse,
>(requestListener?: http.RequestListener<Request, Response>): Server<Request, Response>;
export declare function createServer<
    Request extends typeof http.IncomingMessage = typeof http.IncomingMessage,
    Response extends typeof http.ServerResponse<InstanceType<Request>> = typeof http.ServerResponse,
>(
    options: ServerOptions<Request, Response>,
    requestListener?: http.RequestListener<Request, Response>,
): Server<Request, Response>;
