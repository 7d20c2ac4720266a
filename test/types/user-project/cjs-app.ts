// A CommonJS app's TypeScript (compile-only), as test/install/types.test.js checks it with
// `tsc --strict` against the package as npm installs it (under the README's alias, fast-http).
// Under --strict an entry without typings is an error (TS7016); the @ts-expect-error lines
// fail as unused if an entry's types degraded to any.
import fastHttp = require('fast-http');
import fastHttps = require('fast-http/https');
import register = require('fast-http/register');
import * as http from 'node:http';
import * as https from 'node:https';

const server: http.Server = fastHttp.createServer((req, res) => {
    res.end(req.url);
});
const info: fastHttp.FastHttpServerInfo | undefined = server instanceof fastHttp.Server
    ? server.fastHttp : undefined;
const isFast: boolean = fastHttp.isFastHttpServer(server);
const native: boolean = fastHttp.native;

// node:http's client half, from fast-http.
const agent: http.Agent = fastHttp.globalAgent;
fastHttp.globalAgent = new fastHttp.Agent({ keepAlive: true });
const req: http.ClientRequest = fastHttp.get('http://127.0.0.1:1/', (res: http.IncomingMessage) => {
    res.resume();
});
const posted: fastHttp.ClientRequest = fastHttp.request({ method: 'POST', host: '127.0.0.1' });
const max: number = fastHttp.maxHeaderSize;
const codes: Record<number, string | undefined> = fastHttp.STATUS_CODES;
fastHttp.validateHeaderName('x-name');
const options: fastHttp.RequestOptions = { host: 'example.com', path: '/' };

// fast-http/https, also fast-http's `https`.
const sameModule: typeof fastHttps = fastHttp.https;
const tlsServer: https.Server = fastHttps.createServer({ minVersion: 'TLSv1.2' }, (_req, res) => {
    res.end('tls');
});
const reason: string | undefined = fastHttps.createServer().fastHttp?.reason;
const httpsAgent: https.Agent = fastHttps.globalAgent;
fastHttps.request({ host: '127.0.0.1', servername: 'localhost' }).end();

// @ts-expect-error a number is not a request listener
fastHttp.createServer(42);
// @ts-expect-error fast-http/https has no such export
fastHttps.notAnExport();
// @ts-expect-error fast-http/register exports nothing
register.patch();

void [info, isFast, native, agent, req, posted, max, codes, options, sameModule, tlsServer, reason,
    httpsAgent];
