// Compile-only: the ESM entry point. In an .mts file under node16 resolution
// 'fast-http-native' (apps: 'fast-http', the npm alias they install it under)
// resolves through the "import" side of the exports map (whose
// "types" condition points at index.d.ts), as in an ESM app.

import { createServer, Server } from 'fast-http-native';
import * as fastHttp from 'fast-http-native';
import type { Server as NodeServer } from 'node:http';

const server: Server = createServer({ keepAliveTimeout: 1000 }, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`${req.method} ${req.url}`);
});
const asNode: NodeServer = server;
const viaNamespace: NodeServer = new fastHttp.Server();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
server.close();
void [asNode, viaNamespace];
