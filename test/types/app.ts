// Compile-only program (never executed): uses fast-http the way real apps
// use node:http, and must type-check under test/types/tsconfig.json.
// `// @ts-expect-error` lines double as negative checks: if the typings ever
// became too loose to reject them, tsc fails with "Unused '@ts-expect-error'".

// Apps opt into replacing node:http's server with a side-effect import (or
// `node -r fast-http/register`). TypeScript doesn't require side-effect
// imports to resolve; once lib/register.d.ts exists it is checked too.
import 'fast-http-native/register';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import * as fastHttp from 'fast-http-native';
import {
    createServer,
    IncomingMessage,
    isFastHttpServer,
    METHODS,
    maxHeaderSize,
    native,
    Server,
    ServerResponse,
    STATUS_CODES,
    validateHeaderName,
    validateHeaderValue,
} from 'fast-http-native';
import type {
    IncomingHttpHeaders,
    OutgoingHttpHeaders,
    RequestListener,
    ServerOptions,
} from 'fast-http-native';

// --- createServer(listener) and the request/response API -----------------

const server = createServer((req, res) => {
    const method: string | undefined = req.method;
    const url: string | undefined = req.url;
    const host: string | undefined = req.headers.host;
    const custom: string | string[] | undefined = req.headers['x-custom'];
    const cookies: string[] | undefined = req.headers['set-cookie'];
    const raw: string[] = req.rawHeaders;
    const version: string = req.httpVersion;
    const remote: string | undefined = req.socket.remoteAddress;
    void [method, url, host, custom, cookies, raw, version, remote];

    res.statusCode = 200;
    res.statusMessage = 'OK';
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('Set-Cookie', ['a=1', 'b=2']);
    res.setHeader('Content-Length', 5).setHeader('X-Chained', 'yes');
    const ct = res.getHeader('content-type');
    const names: string[] = res.getHeaderNames();
    if (!res.headersSent && res.hasHeader('x-chained')) res.removeHeader('x-chained');
    void [ct, names];
    res.write('he', 'utf8', (err) => {
        if (err) console.error(err.message);
    });
    res.end('llo', () => {});
});

createServer((req, res) => {
    // writeHead overloads, including chaining off the returned `this`.
    if (req.url === '/a') {
        res.writeHead(404, { 'content-type': 'text/plain', 'x-list': ['a', 'b'], 'content-length': 0 }).end();
    } else if (req.url === '/b') {
        res.writeHead(200, 'Fine', [['content-type', 'text/plain']]).end(Buffer.from('ok'));
    } else {
        res.writeHead(204);
        res.end();
    }
    // The response knows its request.
    const sameReq: IncomingMessage = res.req;
    void sameReq;
});

// Request bodies are async-iterable Readables.
createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ body, trailers: req.trailers }));
});

// --- listen variants --------------------------------------------------------

server.listen(3000);
server.listen(3000, '127.0.0.1');
server.listen(3000, '127.0.0.1', () => {});
server.listen(0, () => {
    const address = server.address();
    if (address !== null && typeof address === 'object') {
        const info: AddressInfo = address;
        console.log(`http://127.0.0.1:${info.port}/`);
    }
});
server.listen({ port: 0, host: 'localhost', exclusive: false }, () => {});
server.listen('/tmp/fast-http.sock');
server.listen(8080, '::', 511, () => {});

// --- Server properties, events and shutdown ---------------------------------

server.keepAliveTimeout = 5_000;
server.headersTimeout = 60_000;
server.requestTimeout = 300_000;
server.maxHeadersCount = null;
server.maxRequestsPerSocket = 100;
server.setTimeout(120_000, (socket: Socket) => socket.destroy());

server.on('request', (req, res) => {
    const h: IncomingHttpHeaders = req.headers;
    void h;
    res.end();
});
server.on('clientError', (err: Error, socket: Duplex) => {
    if (err.message) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
});
server.on('upgrade', (req, socket, head) => {
    const upgrade: string | undefined = req.headers.upgrade;
    void [upgrade, head.length];
    socket.destroy();
});
server.on('checkContinue', (req, res) => {
    res.writeContinue();
    req.pipe(res);
});
server.once('listening', () => {});
server.on('error', (err) => console.error(err.message));

server.close((err?: Error) => {
    if (err) console.error(err);
});
server.closeIdleConnections();
server.closeAllConnections();
const listening: boolean = server.listening;
void listening;

// --- createServer(options, listener) and the Server class -------------------

const options: ServerOptions = {
    keepAliveTimeout: 10_000,
    headersTimeout: 20_000,
    requestTimeout: 30_000,
    maxHeaderSize: 32 * 1024,
    noDelay: true,
    requireHostHeader: false,
    joinDuplicateHeaders: true,
};
const withOptions = createServer(options, (_req, res) => res.end('ok'));
const withOptionsOnly = createServer({ keepAlive: true });
const viaClass = new Server((_req, res) => res.end());
const viaClassWithOptions = new Server({ highWaterMark: 64 * 1024 }, (_req, res) => res.end());
const viaClassBare = new Server();
const serverInstance: Server = withOptions;
void [withOptionsOnly, viaClass, viaClassWithOptions, viaClassBare, serverInstance];

// A separately declared listener, typed with fast-http's alias.
const listener: RequestListener = (_req, res) => {
    const headers: OutgoingHttpHeaders = { 'content-type': 'text/plain' };
    res.writeHead(200, headers).end('typed');
};
createServer(listener);

// --- custom IncomingMessage / ServerResponse subclasses (generic params) -----

class AppRequest extends IncomingMessage {
    user: string | undefined;
    get isJson(): boolean {
        return (this.headers['content-type'] ?? '').startsWith('application/json');
    }
}

class AppResponse<Request extends AppRequest = AppRequest> extends ServerResponse<Request> {
    json(value: unknown): void {
        const body = JSON.stringify(value);
        this.setHeader('content-type', 'application/json');
        this.setHeader('content-length', Buffer.byteLength(body));
        this.end(body);
    }
}

// Request/Response are inferred from the options object...
const appServer = createServer(
    { IncomingMessage: AppRequest, ServerResponse: AppResponse },
    (req, res) => {
        req.user = 'ann';
        res.json({ user: req.user, json: req.isJson, sameReq: res.req === req });
    },
);
appServer.on('request', (req, res) => {
    const user: string | undefined = req.user;
    res.json({ user });
});
const typedAppServer: Server<typeof AppRequest, typeof AppResponse> = appServer;
void typedAppServer;

// ...or given explicitly, including on the class.
const explicit = new Server<typeof AppRequest, typeof AppResponse>(
    { IncomingMessage: AppRequest, ServerResponse: AppResponse },
);
explicit.on('request', (req, res) => res.json({ user: req.user }));

// Only the request class customised; the response stays the default.
createServer({ IncomingMessage: AppRequest }, (req, res) => {
    req.user = 'bob';
    res.end(req.user);
});

// Subclasses of node's own classes are accepted too (apps written for node:http).
class NodeStyleRequest extends http.IncomingMessage {
    requestId = 0;
}
createServer({ IncomingMessage: NodeStyleRequest }, (req, res) => {
    res.end(String(req.requestId));
});

// --- interoperability with node:http types ----------------------------------

// A fast-http server is an http.Server ...
function attach(target: http.Server): http.Server {
    return target.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => res.end());
}
attach(createServer());
attach(appServer);
const asNodeServer: http.Server = new Server();
void asNodeServer;

// ... handlers written against node:http work as fast-http listeners ...
function nodeHandler(req: http.IncomingMessage, res: http.ServerResponse): void {
    res.end(req.url);
}
createServer(nodeHandler);
createServer({ requestTimeout: 1000 }, nodeHandler);
const nodeTypedListener: http.RequestListener = nodeHandler;
createServer(nodeTypedListener);

// ... and fast-http's objects satisfy node:http parameter types.
createServer((req, res) => nodeHandler(req, res));

// The namespace import has the same shape as node:http's server half.
const nsServer: http.Server = fastHttp.createServer();
const sameOptions: http.ServerOptions = options;
void [nsServer, sameOptions];

// --- module-level exports -----------------------------------------------------

const reason: string | undefined = STATUS_CODES[404];
const reasonByString: string | undefined = STATUS_CODES['200'];
const methods: string[] = METHODS;
const maxSize: number = maxHeaderSize;
validateHeaderName('x-ok');
validateHeaderValue('x-ok', 'value');
void [reason, reasonByString, methods, maxSize];
// Which server an app got: fast-http's, or node:http's where no addon loads.
const servedNatively: boolean = isFastHttpServer(appServer);
const nodeServerIsNot: boolean = isFastHttpServer(http.createServer());
const addonLoaded: boolean = native;
void [servedNatively, nodeServerIsNot, addonLoaded];

// --- things that must be rejected ---------------------------------------------

createServer((req, res) => {
    // @ts-expect-error status code must be a number
    res.writeHead('200');
    // @ts-expect-error headers may be absent: string | undefined, not string
    const host: string = req.headers.host;
    // @ts-expect-error not a property of the default request class
    void req.user;
    void host;
});
// @ts-expect-error option values are type-checked
createServer({ keepAliveTimeout: '5s' });
// @ts-expect-error IncomingMessage option must be an IncomingMessage class
createServer({ IncomingMessage: Date });
// @ts-expect-error server timeouts are numbers
server.keepAliveTimeout = '5s';
// @ts-expect-error no such server method
server.closeEverything();
