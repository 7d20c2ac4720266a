'use strict';

// Deno.serve, Deno's own HTTP server (hyper underneath): a reference row beside Deno's node:http,
// as uWebSockets.js is beside node:http. Deno.serve has its own API (a Request in, a Response
// out), so the handlers are re-expressed here with the bodies and header values of
// ../handlers.js and the realistic row's app from ../realistic.js. Started by bench/run.js
// through cjs-entry.cjs (Deno runs CommonJS only from .cjs files).

/* global Deno */
const {
  parseArgs, exitWithParent, prepare, getUser, isHttps, tlsOptions, HELLO_BODY, JSON_HEADERS, JSON_PAYLOAD,
  BIG_BODY,
} = require('../handlers');
const app = require('../realistic');

if (typeof Deno === 'undefined' || typeof Deno.serve !== 'function') {
  process.stdout.write('UNAVAILABLE Deno.serve needs Deno\n');
  process.exit(0);
}
const { workload, port } = parseArgs();

const TEXT = { 'Content-Type': 'text/plain' };
const OCTETS = { 'Content-Type': 'application/octet-stream' };
const JSON_TYPE = { 'Content-Type': 'application/json' };

const hello = () => new Response(HELLO_BODY, { headers: TEXT });
const json = () => new Response(JSON.stringify(JSON_PAYLOAD), { headers: JSON_HEADERS });
const big = () => new Response(BIG_BODY, { headers: OCTETS });
const postEcho = async (req) => new Response(await req.arrayBuffer(), { headers: OCTETS });

function realistic(req) {
  // req.url is absolute here ("http://127.0.0.1:<port>/user/1"): the path starts at the first
  // "/" after the scheme's.
  const url = req.url;
  const body = app.render(app.idFromPath(url.slice(url.indexOf('/', url.indexOf('//') + 2))), getUser);
  if (body === null) return new Response('Not Found', { status: 404, headers: TEXT });
  return new Response(body, { headers: JSON_TYPE });
}

const handlers = {
  hello, 'hello-set': hello, json, '64k': big, 'post-echo': postEcho, pipeline: hello, memory: hello, realistic,
  'https-hello': hello,
  'https-handshake-ecdsa': hello,
  'https-handshake-rsa': hello,
  'https-idle': hello,
  'https-pipeline': hello,
};
const handler = handlers[workload];
if (!handler) {
  process.stdout.write(`UNAVAILABLE no Deno.serve handler for ${workload}\n`);
  process.exit(0);
}
prepare(workload);

const tls = isHttps(workload) ? tlsOptions(workload) : null;
Deno.serve({
  hostname: '127.0.0.1',
  port,
  ...(tls ? { key: tls.key.toString(), cert: tls.cert.toString() } : {}),
  onListen: (addr) => process.stdout.write(`READY ${addr.port}\n`),
}, handler);
exitWithParent();
