'use strict';

// Per-process CPU time and RSS from /proc. /proc/<pid>/stat of the thread
// group leader sums all threads, so libuv/V8 helper threads are included.

const fs = require('node:fs');
const { spawnSync } = require('node:child_process');

let ticksPerSec = 100;
try {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(String(r.stdout).trim());
  if (n > 0) ticksPerSec = n;
} catch {
  // Linux has used USER_HZ = 100 for decades; keep the default.
}

// User+system CPU time of `pid` in microseconds.
function cpuMicros(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Field 2 (comm) may contain spaces/parens: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1e6) / ticksPerSec;
}

// User+system CPU time of this process's reaped children in microseconds (cutime + cstime):
// a child's CPU time is added when it is waited for, so the difference around one wrk run is
// wrk's own CPU time, however short-lived it was.
function childrenCpuMicros() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); cutime is field 16, cstime field 17.
  return ((Number(fields[13]) + Number(fields[14])) * 1e6) / ticksPerSec;
}

// Resident set size of `pid` in bytes.
function rssBytes(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

// Hard RLIMIT_NOFILE of this process (children inherit it).
function hardNofile() {
  try {
    const limits = fs.readFileSync('/proc/self/limits', 'utf8');
    const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(limits);
    if (m) return m[2] === 'unlimited' ? Infinity : Number(m[2]);
  } catch {
    // Not Linux; callers fall back to prlimit.
  }
  return 0;
}

module.exports = { cpuMicros, childrenCpuMicros, rssBytes, hardNofile, ticksPerSec: () => ticksPerSec };
