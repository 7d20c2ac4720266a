// ESM entry: the same objects as the CommonJS one. Its exports are built from node:http's
// (lib/internal/node-exports.js), which Node cannot list as named exports of a CommonJS
// module, so they are named here: node:http's on Node 20-26, then fast-http's own. A name the
// running Node's node:http lacks (WebSocket on 20, websocketMask before 26) is undefined.
import fastHttp from './index.js';

export default fastHttp;

export const {
  _connectionListener, METHODS, STATUS_CODES, Agent, ClientRequest, IncomingMessage,
  OutgoingMessage, Server, ServerResponse, createServer, isValidHeaderName, isValidHeaderValue,
  validateHeaderName, validateHeaderValue, get, request, setMaxIdleHTTPParsers,
  setGlobalProxyFromEnv, websocketMask, websocketUnmask, maxHeaderSize, globalAgent, WebSocket,
  CloseEvent, MessageEvent,
  isFastHttpServer, native, https,
} = fastHttp;
