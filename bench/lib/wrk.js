'use strict';

// Runs wrk (pinned to the load-generator CPU) and parses its text report.

const { spawn, spawnSync } = require('node:child_process');

function wrkAvailable() {
  const r = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (r.error) return null;
  // wrk prints its version banner and exits 1; any output means it exists.
  const first = `${r.stdout}${r.stderr}`.split('\n')[0].trim();
  return first || 'wrk';
}

const UNIT_MS = { us: 0.001, ms: 1, s: 1000, m: 60000, h: 3600000 };
const UNIT_BYTES = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

function parseWrk(text) {
  const m = /(\d+) requests in ([\d.]+)(\w+), ([\d.]+)(\w+) read/.exec(text);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
  if (!m || !rps) throw new Error(`cannot parse wrk output:\n${text}`);
  const p99 = /^\s*99(?:\.0+)?%\s+([\d.]+)(us|ms|s|m|h)\s*$/m.exec(text);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(text);
  return {
    requests: Number(m[1]),
    seconds: Number(m[2]) * (UNIT_MS[m[3]] || 1000) / 1000,
    bytesRead: Math.round(Number(m[4]) * (UNIT_BYTES[m[5]] || 1)),
    rps: Number(rps[1]),
    p99Ms: p99 ? Number(p99[1]) * UNIT_MS[p99[2]] : null,
    errors: {
      connect: sock ? Number(sock[1]) : 0,
      read: sock ? Number(sock[2]) : 0,
      write: sock ? Number(sock[3]) : 0,
      timeout: sock ? Number(sock[4]) : 0,
      non2xx: non2xx ? Number(non2xx[1]) : 0,
    },
  };
}

// opts: { port, connections, duration (s, integer: wrk has no sub-second -d),
//         script, scriptArgs (a list, or a function giving one), scheme ('http' | 'https'), headers, cpu (number|null) }
function runWrk(opts) {
  const args = ['-t1', `-c${opts.connections}`, `-d${opts.duration}s`, '--latency'];
  for (const h of opts.headers || []) args.push('-H', h);
  if (opts.script) args.push('-s', opts.script);
  args.push(`${opts.scheme || 'http'}://127.0.0.1:${opts.port}/`);
  // A function when the arguments depend on the run (the realistic row's record count).
  const scriptArgs = typeof opts.scriptArgs === 'function' ? opts.scriptArgs() : opts.scriptArgs;
  if (scriptArgs && scriptArgs.length) args.push('--', ...scriptArgs);
  const [cmd, argv] = opts.cpu == null ? ['wrk', args] : ['taskset', ['-c', String(opts.cpu), 'wrk', ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    // wrk stops itself after -d; this is only a guard against a hung wrk.
    const guard = setTimeout(() => child.kill('SIGKILL'), (opts.duration + 15) * 1000);
    child.on('error', (e) => { clearTimeout(guard); reject(e); });
    child.on('close', (code) => {
      clearTimeout(guard);
      if (code !== 0) return reject(new Error(`wrk exited ${code}: ${err || out}`));
      try {
        resolve(parseWrk(out));
      } catch (e) {
        reject(e);
      }
    });
  });
}

module.exports = { wrkAvailable, runWrk, parseWrk };
