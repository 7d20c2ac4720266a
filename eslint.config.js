'use strict';
// The JS linter (npm test runs it): eslint's recommended rules for CommonJS on Node, plus the
// project's conventions ('use strict', const where nothing reassigns, no unused names) and,
// for lib/, limits on a function's length and complexity.
const js = require('@eslint/js');
const globals = require('globals');

module.exports = [
  {
    ignores: ['node_modules/', 'target/', '.cache/', 'dist/', 'fuzz/', 'test/types/', '**/*.d.ts'],
  },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'commonjs',
      globals: { ...globals.node },
    },
    rules: {
      strict: ['error', 'global'],
      'prefer-const': 'error',
      'no-var': 'error',
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    // The package's own code: functions short and simple enough to read whole (issue #22).
    // A function's lines count as they stand, blank lines and comments included.
    files: ['lib/**/*.js', 'lib/**/*.mjs', 'src/**/*.js'],
    rules: {
      complexity: ['error', 20],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // The server takes its timers, ticks and clock when it loads (lib/internal/scheduling.js),
    // as node's modules do: fake timers installed by a test must not catch them (issue #30).
    files: ['lib/**/*.js'],
    ignores: ['lib/internal/scheduling.js'],
    rules: {
      'no-restricted-globals': ['error',
        ...['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate',
          'clearImmediate', 'queueMicrotask', 'Date', 'performance'].map((name) => ({
          name, message: 'take it from lib/internal/scheduling.js',
        }))],
      'no-restricted-properties': ['error',
        { object: 'process', property: 'nextTick', message: 'take it from lib/internal/scheduling.js' }],
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
  },
];
