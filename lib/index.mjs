// ESM entry: the same objects as the CommonJS one.
import fastHttp from './index.js';

export const {
  createServer,
  Server,
  IncomingMessage,
  ServerResponse,
  METHODS,
  STATUS_CODES,
  maxHeaderSize,
  validateHeaderName,
  validateHeaderValue,
  isFastHttpServer,
} = fastHttp;

export default fastHttp;
