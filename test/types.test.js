'use strict';

// Type-checks the public typings (index.d.ts) with the TypeScript compiler:
//  - test/types/ (app.ts, esm-app.mts) must compile cleanly; it uses the API
//    the way apps do and also contains `@ts-expect-error` lines that fail the
//    build if the typings become too permissive;
//  - test/types/negative/ must fail with exactly the errors marked in it, so
//    this test demonstrably *can* fail (e.g. if index.d.ts degraded to `any`
//    or 'fast-http' stopped resolving, the diagnostics would not match).

const { test } = require('node:test');
const assert = require('node:assert');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const typesDir = path.join(__dirname, 'types');
const negativeDir = path.join(typesDir, 'negative');
// Run the compiler's JS entry point with the current node rather than the
// node_modules/.bin/tsc shim: same program, but no dependence on the shim
// being executable or on `node` being first on PATH.
const tscPath = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');

// Generous: a cold tsc run over @types/node takes a few seconds on an idle
// machine and can be many times slower on a loaded CI box.
const TSC_TIMEOUT_MS = 180_000;

function runTsc(project) {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [tscPath, '-p', project, '--pretty', 'false'],
      { cwd: root, timeout: TSC_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        // execFile reports a non-zero exit as an error; we want the code.
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, signal: err && err.signal, output: `${stdout}${stderr}` });
      },
    );
  });
}

// "file(line,col): error TS1234: message" -> "relative/file:line TS1234"
function parseDiagnostics(output) {
  const found = [];
  for (const line of output.split(/\r?\n/)) {
    const m = /^(.+?)\((\d+),\d+\): error (TS\d+):/.exec(line);
    if (m) found.push(`${path.relative(root, path.resolve(root, m[1]))}:${m[2]} ${m[3]}`);
  }
  return found.sort();
}

// Collects `// expect-error TSxxxx` markers from the negative programs.
function expectedDiagnostics() {
  const expected = [];
  for (const name of fs.readdirSync(negativeDir)) {
    if (!name.endsWith('.ts')) continue;
    const file = path.join(negativeDir, name);
    fs.readFileSync(file, 'utf8').split(/\r?\n/).forEach((text, i) => {
      const m = /\/\/ expect-error (TS\d+)/.exec(text);
      if (m) expected.push(`${path.relative(root, file)}:${i + 1} ${m[1]}`);
    });
  }
  return expected.sort();
}

test('typescript is installed', () => {
  assert.ok(
    fs.existsSync(tscPath),
    `${tscPath} not found: run \`npm install --ignore-scripts\` (typescript is a devDependency)`,
  );
});

test('apps using the public API type-check', { timeout: TSC_TIMEOUT_MS + 10_000 }, async () => {
  const { code, signal, output } = await runTsc(typesDir);
  assert.strictEqual(signal, null, `tsc was killed (${signal}); output:\n${output}`);
  assert.strictEqual(code, 0, `tsc -p test/types failed:\n${output}`);
});

test('type errors in apps are reported', { timeout: TSC_TIMEOUT_MS + 10_000 }, async () => {
  const expected = expectedDiagnostics();
  assert.ok(expected.length > 0, 'no `// expect-error` markers found in test/types/negative');
  const { code, signal, output } = await runTsc(negativeDir);
  assert.strictEqual(signal, null, `tsc was killed (${signal}); output:\n${output}`);
  assert.notStrictEqual(code, 0, `tsc -p test/types/negative unexpectedly succeeded:\n${output}`);
  assert.deepStrictEqual(parseDiagnostics(output), expected, `unexpected diagnostics:\n${output}`);
});
