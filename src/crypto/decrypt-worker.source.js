'use strict';
// The decryption worker when the service runs from its TypeScript sources (the test runner
// compiles TypeScript in memory, and a worker thread does not inherit that): compile the
// worker's .ts modules with SWC, a development dependency, in this thread only. The compiled
// build loads decrypt-worker.js directly and never this file.
const fs = require('node:fs');
const { transformSync } = require('@swc/core');

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};

module.exports = require('./decrypt-worker.ts');
