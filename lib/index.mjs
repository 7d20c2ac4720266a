// ESM entry: the same objects as the CommonJS one (Node finds the named exports in
// index.js's `module.exports = { ... }`).
export * from './index.js';
export { default } from './index.js';
