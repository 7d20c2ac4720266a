// ESM entry of fast-http/https: the same objects as the CommonJS one (see lib/index.mjs for
// why the names are listed).
import fastHttps from './index.js';

export default fastHttps;

export const { Agent, globalAgent, Server, createServer, get, request } = fastHttps;
