'use strict';
// Getters found along a prototype chain and replaced in place: the lazy socket and request
// streams answer node's stream getters without a state while they have none.

/** The descriptor of `name` on `proto` or the first prototype after it that has one. */
function findDescriptor(proto, name) {
  for (let p = proto; p !== null; p = Object.getPrototypeOf(p)) {
    const d = Object.getOwnPropertyDescriptor(p, name);
    if (d !== undefined) return d;
  }
  return undefined;
}

/**
 * Defines on `proto` the getter `make(get)`, where `get` is the getter `name` has on the chain
 * from `from` (default `proto`); the setter and enumerability stay node's. False when there
 * is no such getter.
 */
function replaceGetter(proto, name, make, from = proto) {
  const d = findDescriptor(from, name);
  if (d?.get === undefined) return false;
  Object.defineProperty(proto, name, {
    __proto__: null,
    configurable: true,
    enumerable: d.enumerable,
    get: make(d.get),
    set: d.set,
  });
  return true;
}

module.exports = { findDescriptor, replaceGetter };
