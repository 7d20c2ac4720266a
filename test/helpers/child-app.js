'use strict';
// Starts a fixture app (test/fixtures/*.js) in a child process with `-r fast-http/register`,
// the way unmodified apps run. The fixture prints one JSON status line (see
// fixtures/announce.js); the child exits when its stdin closes.

const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');

const REGISTER = path.resolve(__dirname, '..', '..', 'lib', 'register.js');
const FIXTURES = path.join(__dirname, '..', 'fixtures');

// Bounds only, never expectations: generous enough for a loaded 2-core box.
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/** Resolves with `{ port, isFastHttp, close }` once the child reported its port. */
function startWithRegister(fixture) {
  // The test runner marks its children with NODE_TEST_CONTEXT; the fixtures
  // treat that as "being run as a test file" and do nothing, so drop it.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, ['-r', REGISTER, path.join(FIXTURES, fixture)], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  // 'close' rather than 'exit': it comes after stderr is fully read, so a
  // failure report includes all of the child's last words.
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));

  let stopping = false;
  const stop = async () => {
    const alreadyExited = child.exitCode !== null || child.signalCode !== null;
    if (!stopping && alreadyExited) {
      // Died while serving (e.g. a crash in the native addon): requests will
      // have failed with ECONNRESET/ECONNREFUSED; surface the reason here.
      stopping = true;
      throw new Error(`${fixture} under register died (code ${child.exitCode}, ` +
        `signal ${child.signalCode})\nstderr:\n${stderr}`);
    }
    stopping = true;
    if (!alreadyExited) {
      child.stdin.end(); // the fixture exits on stdin EOF
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
  };

  return new Promise((resolve, reject) => {
    const fail = (why) => {
      clearTimeout(timer);
      stopping = true;
      stop().finally(() => reject(new Error(`${fixture} under register: ${why}\nstderr:\n${stderr}`)));
    };
    const timer = setTimeout(() => fail('did not report its port in time'), START_TIMEOUT_MS);
    child.once('error', (err) => fail(`spawn failed: ${err.message}`));
    exited.then(({ code, signal }) => {
      if (!reported) fail(`exited before reporting its port (code ${code}, signal ${signal})`);
    });
    // The status line is the first stdout line that is a JSON object; other
    // output (e.g. a warning) is ignored here but kept for failure reports.
    // Keep reading stdout to the end (never pause it) so the child can't
    // block on a full pipe and its 'close' event is not held up.
    let reported = false;
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (reported || !line.startsWith('{')) {
        stderr += `[stdout] ${line}\n`;
        return;
      }
      reported = true;
      clearTimeout(timer);
      let info;
      try {
        info = JSON.parse(line);
      } catch {
        fail(`printed ${JSON.stringify(line)} instead of its JSON status line`);
        return;
      }
      resolve({ port: info.port, isFastHttp: info.isFastHttp, close: stop });
    });
  });
}

module.exports = { startWithRegister, REGISTER, FIXTURES, START_TIMEOUT_MS, STOP_TIMEOUT_MS };
