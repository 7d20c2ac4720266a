// Type definitions for fast-http/register: a module run for its effect
// (`node -r fast-http/register`, `--import fast-http/register`, or
// `import 'fast-http/register'` / `require('fast-http/register')` as an app's
// first line), which makes node:http's and node:https's servers fast-http's.
// It exports nothing an app uses.
export {};
