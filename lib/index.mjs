// ESM entry: the same objects as the CommonJS one (Node finds the named exports in
// index.js's `module.exports = { ... }`).
export * from './index.js';
export { default } from './index.js';
import fastHttp from './index.js';

// A getter on the CommonJS side (loaded when first read), which Node cannot list as a named
// export: an ESM `import { https }` reads it here.
export const https = fastHttp.https;
