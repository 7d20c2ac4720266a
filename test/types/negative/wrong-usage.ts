// Must NOT compile. Every line marked `// expect-error TSxxxx` has to produce
// exactly that diagnostic, and no other line may produce any:
// test/types.test.js compares tsc's output with these markers. This proves
// the type test is able to fail (a typo'd or `any`-typed index.d.ts would
// let these through).

import { createServer, Server } from 'fast-http-native';

createServer((req, res) => {
    res.writeHead('x'); // expect-error TS2769 (no writeHead overload takes a string status)
    const length: number = req.headers['content-length']; // expect-error TS2322 (header values are string | undefined)
    res.end(length);
});

createServer({ requestTimeout: 'never' }); // expect-error TS2769 (option values are checked)

const server: Server = createServer();
server.listen(3000).closeEverything(); // expect-error TS2339 (no such method)
