/** Jest runs TypeScript through SWC (fast, no type-check: `npm test` type-checks first). */
module.exports = {
  // Node, plus a check that each file closes what it opened (test/support/open-handles.ts).
  testEnvironment: '<rootDir>/test/support/checked-environment.ts',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/packages'],
  modulePathIgnorePatterns: ['<rootDir>/packages/[^/]+/dist/'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j)sx?$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  // fastify's cookie@2 ships ESM only; let it be transformed.
  transformIgnorePatterns: ['/node_modules/(?!(cookie)/)'],
  // otplib's dependencies are ES modules only: Node's loader takes it (see the file).
  moduleNameMapper: { '^otplib$': '<rootDir>/test/support/otplib.cjs' },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Generous: a service start or a 4096-bit key on a loaded 2-core machine can take tens of seconds.
  testTimeout: 60000,
  maxWorkers: 2,
  // Each file's modules stay reachable in its worker after it ends (about 60 MB per integration
  // file; the cause is not found yet), so a worker's heap grew to 2.8 GB by the end of a run,
  // with slower collections and a worker too slow to exit when Jest ends it. A worker above
  // this after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '1GB',
};
