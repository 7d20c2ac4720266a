'use strict';

// Runs one Node core test file the way tools/test.py does (cwd = tree root,
// `// Flags:` passed to node, stdout/stderr to files rather than pipes,
// TEST_THREAD_ID/TEST_SERIAL_ID/TEST_PARALLEL set) and classifies the result.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const OUTPUT_TAIL_LINES = 40;

// tools/test.py's skip_regex, applied to stdout of a test that exited 0.
const SKIP_RE = /(?:\d+\.\.\d+|ok|not ok).*# SKIP\S*\s+(.*)/i;

// Lines that usually name the failure, in the order they are worth showing.
const REASON_RES = [
  /^\s*(?:Uncaught )?(?:AssertionError|Error|TypeError|RangeError|SyntaxError|ReferenceError)\b.*$/m,
  /^\s*\w+Error(?: \[\w+\])?:.*$/m,
  /^Mismatched .*$/m,
  /^\s*code: '\w+'.*$/m,
];

function tail(text, n) {
  const lines = text.replace(/\n+$/, '').split('\n');
  return lines.slice(-n);
}

function readOr(file, fallback) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

function guessReason(stdout, stderr) {
  for (const text of [stderr, stdout]) {
    for (const re of REASON_RES) {
      const m = re.exec(text);
      if (!m) continue;
      let line = m[0].trim();
      // "Expected values to be strictly equal:" says little on its own; the
      // next line holds the values or the start of the diff.
      if (line.endsWith(':')) {
        const next = text.slice(m.index + m[0].length).split('\n')
          .find((l) => l.trim() && !/^\+ actual - expected/.test(l));
        if (next) line = `${line} ${next.trim()}`;
      }
      return line.slice(0, 200);
    }
  }
  const last = tail(`${stdout}\n${stderr}`.trim(), 1)[0] || '';
  return last.trim().slice(0, 200) || '(no output)';
}

// The addon appends one JSON line per process (the test and any child that
// also loaded fast-http) at exit; sum them.
function readStats(file) {
  const totals = {
    processes: 0, serversCreated: 0, connectionsAccepted: 0, requestsDispatched: 0,
    fallbackConnections: 0, injectedConnections: 0, tlsHandOffs: 0,
    httpsServersCreated: 0, httpsFallbackServers: 0, tlsHandshakes: 0,
  };
  const text = readOr(file, null);
  if (text === null) return null;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let rec;
    try {
      rec = JSON.parse(line);
    } catch {
      continue; // a torn line from a process killed mid-write
    }
    totals.processes++;
    for (const k of Object.keys(totals)) {
      if (k !== 'processes' && Number.isFinite(rec[k])) totals[k] += rec[k];
    }
  }
  return totals;
}

/**
 * @param {object} t        { key, file, flags, createsServer, parallel }
 * @param {object} o        { nodeBin, root, register, extraFlags, timeoutMs, workDir, tmpRoot,
 *                            threadId, serialId }
 * @param {Set} running     process groups still alive, so the caller can kill them on ^C
 */
function runTest(t, o, running) {
  const base = t.key.replace(/[^\w.-]/g, '_');
  const outFile = path.join(o.workDir, `${base}.out`);
  const errFile = path.join(o.workDir, `${base}.err`);
  const statsFile = path.join(o.workDir, `${base}.stats.jsonl`);
  for (const f of [outFile, errFile, statsFile]) fs.rmSync(f, { force: true });

  const args = [...(o.extraFlags || []), ...(o.register ? ['-r', o.register] : []), ...t.flags, t.file];
  const env = { ...process.env };
  // test.py drops these; NODE_TEST_CONTEXT would make node:test based tests
  // report to a parent test runner that is not there.
  for (const k of ['NODE_PATH', 'NODE_REPL_EXTERNAL_MODULE', 'NODE_TEST_CONTEXT', 'FAST_HTTP_STATS']) delete env[k];
  Object.assign(env, {
    // tmpdir lives outside the source tree so a cached or user-provided tree
    // stays pristine; TEST_SERIAL_ID makes it unique per test.
    NODE_TEST_DIR: o.tmpRoot,
    TEST_THREAD_ID: String(o.threadId),
    TEST_SERIAL_ID: String(o.serialId),
    TEST_PARALLEL: t.parallel ? '1' : '0',
  });
  if (o.register) env.FAST_HTTP_STATS = statsFile;

  const outFd = fs.openSync(outFile, 'w');
  const errFd = fs.openSync(errFile, 'w');
  const start = Date.now();

  return new Promise((resolve) => {
    let child;
    try {
      // Own process group: a timeout or ^C can then take out grandchildren
      // too, and a test doing process.kill(0, sig) cannot hit the runner.
      child = spawn(o.nodeBin, args, {
        cwd: o.root, env, detached: true, stdio: ['ignore', outFd, errFd],
      });
    } catch (err) {
      fs.closeSync(outFd);
      fs.closeSync(errFd);
      resolve({ status: 'fail', reason: `spawn failed: ${err.message}`, duration: 0, exitCode: null, signal: null, output: [] });
      return;
    }
    fs.closeSync(outFd);
    fs.closeSync(errFd);
    const pgid = child.pid;
    running.add(pgid);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(pgid);
    }, o.timeoutMs);

    const finish = (exitCode, signal, spawnError) => {
      clearTimeout(timer);
      // Reap whatever the test left behind in its group (servers in child
      // processes etc.), or they would hold ports and CPU for later tests.
      killGroup(pgid);
      running.delete(pgid);
      const duration = Date.now() - start;
      const stdout = readOr(outFile, '');
      const stderr = readOr(errFile, '') + (spawnError ? `\n${spawnError.message}` : '');
      const output = tail(`${stdout.replace(/\n+$/, '')}\n${stderr}`.replace(/^\n+/, ''), OUTPUT_TAIL_LINES);
      const r = { duration, exitCode, signal, output };
      if (timedOut) {
        Object.assign(r, { status: 'timeout', reason: `timed out after ${o.timeoutMs / 1000}s` });
      } else if (exitCode !== 0) {
        Object.assign(r, {
          status: 'fail',
          reason: `${signal ? `killed by ${signal}` : `exit ${exitCode}`}: ${guessReason(stdout, stderr)}`,
        });
      } else if (SKIP_RE.test(stdout)) {
        Object.assign(r, { status: 'skip', reason: SKIP_RE.exec(stdout)[1].trim() });
      } else {
        Object.assign(r, { status: 'pass' });
      }
      if (o.register) {
        r.stats = readStats(statsFile);
        if (r.status === 'pass') judgeServed(t, r);
      }
      fs.rmSync(path.join(o.tmpRoot, `.tmp.${o.serialId}`), { recursive: true, force: true });
      for (const f of [outFile, errFile]) fs.rmSync(f, { force: true });
      resolve(r);
    };
    child.on('error', (err) => finish(null, null, err));
    child.on('exit', (code, signal) => finish(code, signal));
  });
}

// A passing test only counts if fast-http, not Node's own http machinery,
// served it: it must have created a native server if it creates http servers
// at all, every https server it created must be a native one (fast-http's https
// servers count in httpsServersCreated, the ones it handed to node's https as
// httpsFallbackServers), and every connection that took the fallback path must be
// one the test injected itself with server.emit('connection', socket).
function judgeServed(t, r) {
  const s = r.stats;
  if (!s && (t.createsServer || t.createsHttpsServer)) {
    r.status = 'unserved';
    r.reason = 'not served by fast-http: no stats written (FAST_HTTP_STATS)';
  } else if (t.createsServer && !(s.serversCreated > 0)) {
    r.status = 'unserved';
    r.reason = 'not served by fast-http: no native server created';
  } else if (t.createsHttpsServer && !(s.httpsServersCreated > 0)) {
    r.status = 'unserved';
    r.reason = 'not served by fast-http: no native https server created';
  } else if (t.createsHttpsServer && s.httpsFallbackServers > 0) {
    r.status = 'unserved';
    r.reason = `not served by fast-http: ${s.httpsFallbackServers} https server(s) ` +
      "handed to node's https (fallback)";
  } else if (s && s.fallbackConnections !== s.injectedConnections + s.tlsHandOffs) {
    // A connection whose ClientHello names a server rustls refuses is node's TLS's by design.
    r.status = 'unserved';
    r.reason = `not served by fast-http: ${s.fallbackConnections} fallback connection(s), ` +
      `${s.injectedConnections} of them injected, ${s.tlsHandOffs} TLS hand-offs`;
  }
}

function killGroup(pgid) {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // group already gone
  }
}

module.exports = { runTest, killGroup, guessReason };
