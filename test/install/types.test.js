'use strict';
// Every export path (`fast-http`, `fast-http/https`, `fast-http/register`; CommonJS and ES
// modules) type-checks under `tsc --strict` as a user's project sees the package: the files
// `npm pack` ships, installed as node_modules/fast-http (the README's alias), next to
// @types/node, in projects with the module settings apps use, with TypeScript 5 (the
// devDependency `typescript`) and 7 (`typescript-7`, npm's typescript@7). npm test runs this
// file once (it does not depend on the Node that runs tsc).
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFile, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const appDir = path.join(root, 'test', 'types', 'user-project');
// A cold tsc 5 over @types/node takes seconds, many times that on a busy machine.
const TSC_TIMEOUT = 180_000;

const COMPILERS = [
  { name: 'TypeScript 5', pkg: 'typescript', major: 5 },
  { name: 'TypeScript 7', pkg: 'typescript-7', major: 7 },
];

const STRICT = { strict: true, noEmit: true, skipLibCheck: false, types: ['node'] };

// The module settings apps use. node10 (`module: commonjs`'s resolution until TS 6, which
// reads no exports map) is gone from TypeScript 7: there `module: commonjs` alone is checked.
const PROJECTS = [
  { name: 'nodenext (CommonJS .ts and ES module .mts)', files: ['cjs-app.ts', 'esm-app.mts'],
    options: { module: 'nodenext', moduleResolution: 'nodenext' } },
  { name: 'bundler', files: ['cjs-app.ts', 'esm-app.mts'],
    options: { module: 'preserve', moduleResolution: 'bundler' } },
  { name: 'commonjs', files: ['cjs-app.ts'],
    options: (major) => (major < 7 ? { module: 'commonjs', moduleResolution: 'node10' }
      : { module: 'commonjs' }) },
];

let tmp;

/** The package's files as `npm pack` would ship them. */
function packedFiles() {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root, encoding: 'utf8', timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout)[0].files.map((f) => f.path);
}

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-http-types-'));
  const pkg = path.join(tmp, 'node_modules', 'fast-http');
  for (const file of packedFiles()) {
    fs.mkdirSync(path.dirname(path.join(pkg, file)), { recursive: true });
    fs.copyFileSync(path.join(root, file), path.join(pkg, file));
  }
  // The app's own @types/node (and what it depends on), as its install would have them.
  fs.symlinkSync(path.join(root, 'node_modules', '@types'), path.join(tmp, 'node_modules', '@types'));
  fs.symlinkSync(path.join(root, 'node_modules', 'undici-types'),
    path.join(tmp, 'node_modules', 'undici-types'));
  fs.writeFileSync(path.join(tmp, 'package.json'), '{"name":"app","private":true}\n');
  for (const f of fs.readdirSync(appDir)) fs.copyFileSync(path.join(appDir, f), path.join(tmp, f));
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

function tsc(compiler, project) {
  const config = path.join(tmp, `tsconfig.${compiler.major}.${project.files.length}.` +
    `${project.name.split(' ')[0]}.json`);
  const options = typeof project.options === 'function' ? project.options(compiler.major)
    : project.options;
  fs.writeFileSync(config, JSON.stringify({
    compilerOptions: { ...STRICT, ...options }, files: project.files,
  }));
  const bin = path.join(root, 'node_modules', compiler.pkg, 'bin', 'tsc');
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, '-p', config, '--pretty', 'false'], {
      cwd: tmp, timeout: TSC_TIMEOUT, maxBuffer: 16 << 20,
    }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, signal: err?.signal ?? null, out: `${stdout}${stderr}` });
    });
  });
}

for (const compiler of COMPILERS) {
  test(`${compiler.name} is the one installed`, () => {
    const { version } = require(path.join(root, 'node_modules', compiler.pkg, 'package.json'));
    assert.equal(Number(version.split('.')[0]), compiler.major, version);
  });
  for (const project of PROJECTS) {
    test(`${compiler.name}, ${project.name}: every entry type-checks under --strict`, {
      timeout: TSC_TIMEOUT + 10_000,
    }, async () => {
      const r = await tsc(compiler, project);
      assert.equal(r.signal, null, `tsc was killed:\n${r.out}`);
      assert.equal(r.code, 0, `tsc failed:\n${r.out}`);
    });
  }
}

// The check can fail: without the typings of fast-http/https and fast-http/register (an
// older package), both compilers report the untyped modules.
test('a package without https.d.ts and register.d.ts fails the same check', {
  timeout: 2 * TSC_TIMEOUT + 10_000,
}, async () => {
  const pkg = path.join(tmp, 'node_modules', 'fast-http');
  const moved = ['https.d.ts', 'register.d.ts'];
  for (const f of moved) fs.renameSync(path.join(pkg, f), path.join(tmp, `${f}.away`));
  try {
    for (const compiler of COMPILERS) {
      const r = await tsc(compiler, PROJECTS[0]);
      assert.notEqual(r.code, 0, `${compiler.name} passed without the typings`);
      assert.match(r.out, /error TS(7016|2307|2882)/, `${compiler.name}:\n${r.out}`);
    }
  } finally {
    for (const f of moved) fs.renameSync(path.join(tmp, `${f}.away`), path.join(pkg, f));
  }
});
