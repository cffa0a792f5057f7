import { randomBytes } from 'node:crypto';

/**
 * Names this jest run: every test file's database and NATS namespace carry the name (see
 * `isolation()` in @kn/testing), so that the global teardown can tell what this run left behind.
 */
export default function globalSetup() {
  process.env.KN_TEST_RUN = randomBytes(3).toString('hex');
}
