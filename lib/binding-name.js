'use strict';
// The napi-rs naming of native binaries: fast-http.<platform>-<arch>[-<abi>].node.

function abi() {
  if (process.platform !== 'linux') return '';
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
  const glibc = report?.header?.glibcVersionRuntime;
  return glibc ? '-gnu' : '-musl';
}

function triple() {
  const arch = process.arch === 'arm' ? 'arm-gnueabihf' : process.arch;
  if (process.platform === 'win32') return `win32-${arch}-msvc`;
  return `${process.platform}-${arch}${abi()}`;
}

function binaryName() {
  return `fast-http.${triple()}.node`;
}

module.exports = { binaryName, triple };
