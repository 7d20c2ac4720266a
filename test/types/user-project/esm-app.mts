// An ES module app's TypeScript (compile-only; see cjs-app.ts): named, default and namespace
// imports of every entry.
import fastHttp, {
    Agent, createServer, get, globalAgent, https as viaProperty, isFastHttpServer, request,
    type FastHttpServerInfo, type IncomingHttpHeaders, type Server,
} from 'fast-http';
import * as namespace from 'fast-http';
import fastHttps, { createServer as createHttpsServer, request as httpsRequest } from 'fast-http/https';
import 'fast-http/register';
import * as registerNamespace from 'fast-http/register';
import type * as http from 'node:http';
import type * as https from 'node:https';

const server: Server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = req.headers;
    res.end(JSON.stringify(headers));
});
const info: FastHttpServerInfo | undefined = server.fastHttp;
const fast: boolean = isFastHttpServer(server) && namespace.native;
const agent: http.Agent = globalAgent;
const pooled = new Agent({ keepAlive: true, maxSockets: 8 });
const req: http.ClientRequest = get({ host: '127.0.0.1', agent: pooled }, (res) => res.resume());
request('http://127.0.0.1:1/').end();
const same: typeof fastHttps = viaProperty;
const tlsServer: https.Server = createHttpsServer({ key: 'k', cert: 'c' });
const reason: string | undefined = fastHttps.createServer().fastHttp?.reason;
httpsRequest({ host: '127.0.0.1' }).end();
const viaDefault: number = fastHttp.maxHeaderSize;

// @ts-expect-error no such export
namespace.notAnExport;
// @ts-expect-error fast-http/register exports nothing
registerNamespace.patch;

void [info, fast, agent, req, same, tlsServer, reason, viaDefault];
