/** The PostgreSQL database the suite runs against; `.ci/run` sets TEST_DATABASE_URL to its own. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/checkout_gateway_test';

/** A fixed master key for tests (64 hex). */
export const TEST_MASTER_KEY = '5030cfe4566aef8ee2a393fd4f0de5bfb6a26ad5ebc01607be45afc234098674';
