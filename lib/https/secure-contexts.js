'use strict';
// The options each tls.createSecureContext() call was made with. A SecureContext keeps its keys
// inside OpenSSL, where the native TLS layer cannot read them; apps hand such contexts to
// SNICallback's callback, server.addContext() and server.setSecureContext({ secureContext }),
// so the options they came from are remembered (weakly: a context nobody holds is forgotten)
// from the moment fast-http's https is loaded. A context made before that is not known, and
// what needs it says so with ERR_FAST_HTTP_TLS.
const tls = require('node:tls');

const made = new WeakMap();
const createSecureContext = tls.createSecureContext;

tls.createSecureContext = function createSecureContext_(options) {
  const context = Reflect.apply(createSecureContext, this, arguments);
  if (context !== null && typeof context === 'object') made.set(context, { ...options });
  return context;
};
Object.defineProperty(tls.createSecureContext, 'name', { value: 'createSecureContext' });

/** The options `context` was made with, or undefined. */
function optionsOf(context) {
  return context !== null && typeof context === 'object' ? made.get(context) : undefined;
}

module.exports = { optionsOf };
