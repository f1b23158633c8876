/**
 * Starts the service (src/main.ts) from its TypeScript sources in a plain Node process,
 * transpiling each file on load with SWC, the same transform the test runner uses. Lets a
 * test run the real service as a child process it can crash and restart, without a build.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');

const options = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), { ...options, filename });
  module._compile(code, filename);
};

require('reflect-metadata');
require(path.resolve(__dirname, '../../../../src/main.ts'));
