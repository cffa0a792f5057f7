// The settings of tests and benchmarks, from the environment: the one module of @kn/testing that
// reads it. Each is read when asked for, since jest's global setup and the benchmarks set some of
// them after this module is loaded.

/** The Postgres server tests use unless TEST_DATABASE_URL names another (its database part is replaced). */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export const testSettings = {
  /**
   * The run a test process belongs to: jest's global setup names it in KN_TEST_RUN, so that its
   * teardown finds whatever a test file of the run left behind. Benchmarks and scripts have none.
   */
  run: () => process.env.KN_TEST_RUN,
  databaseUrl: () => process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL,
  /** The NATS server (with JetStream) tests use: TEST_NATS_URL, or this machine's. */
  natsUrl: () => process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
  natsServerBinary: () => process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server',
  /** The environment a server the tests start inherits. */
  environment: () => process.env,
};
