'use strict';
/**
 * `otplib` as Node loads it. Its default plugins import packages that ship ES modules only
 * (@scure/base, @noble/hashes); Node requires them, but Jest's own module loader refuses ES
 * modules from CommonJS while vm modules are on. jest.config.js maps `otplib` here, and this
 * hands the import to Node's own loader (Jest's `module.createRequire` would be Jest's again):
 * the service under test and the tests get the real package.
 */
const { createRequire } = process.getBuiltinModule('node:module');

module.exports = createRequire(__filename)('otplib');
