/**
 * The PostgreSQL database the suite runs against. test/support/global-setup.ts chooses it
 * before any test file loads (TEST_DATABASE_URL when set, else a local server, else one the run
 * starts itself: test/support/postgres-server.ts, docs/testing.md) and passes it on here.
 */
export const TEST_DATABASE_URL: string = (() => {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is unset: test/support/global-setup.ts sets it for the test run');
  return url;
})();

/** A fixed master key for tests (64 hex). */
export const TEST_MASTER_KEY = '5030cfe4566aef8ee2a393fd4f0de5bfb6a26ad5ebc01607be45afc234098674';
