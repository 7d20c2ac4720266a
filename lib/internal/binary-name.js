'use strict';
// The napi-rs naming of native binaries: the platform triple `<platform>-<arch>[-<abi>]`, the
// binary `fast-http.<triple>.node` (napi.binaryName) and the prebuilt package
// `fast-http-native-<triple>` that carries it (the main package's npm name, plus the triple).
// Shared by the loader, the install hook and the build scripts so the names cannot drift.
const fs = require('node:fs');
// The registry name (`fast-http` there is someone else's package): apps install it under the
// alias fast-http (`npm install fast-http@npm:fast-http-native`), but its platform packages
// keep the registry name, since npm resolves optionalDependencies by that name.
const { name: PACKAGE } = require('../../package.json');

let musl = null;

// glibc or musl decides which Linux binary fits. Reading ldd (a text script on glibc, a link
// to musl's loader on Alpine) is a cheap first answer; the process report is the fallback,
// with network details off because collecting them can do slow reverse DNS lookups.
function isMusl() {
  if (musl !== null) return musl;
  try {
    musl = fs.readFileSync('/usr/bin/ldd', 'latin1').includes('musl');
    return musl;
  } catch {}
  const report = process.report;
  if (report && typeof report.getReport === 'function') {
    const exclude = report.excludeNetwork;
    report.excludeNetwork = true;
    try {
      musl = !report.getReport().header?.glibcVersionRuntime;
    } finally {
      report.excludeNetwork = exclude;
    }
  } else {
    musl = false;
  }
  return musl;
}

function triple() {
  const { platform, arch } = process;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  if (platform !== 'linux') return `${platform}-${arch}`;
  const libc = isMusl() ? 'musl' : 'gnu';
  // 32-bit ARM Linux is hard-float in napi-rs's names (linux-arm-gnueabihf).
  return arch === 'arm' ? `linux-arm-${libc}eabihf` : `linux-${arch}-${libc}`;
}

function binaryName(t = triple()) {
  return `fast-http.${t}.node`;
}

function packageName(t = triple()) {
  return `${PACKAGE}-${t}`;
}

module.exports = { PACKAGE, binaryName, packageName, triple };
