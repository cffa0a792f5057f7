/** One jest run for the whole system: unit tests beside each package, integration tests in test/. */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test', '<rootDir>/gateway', '<rootDir>/services', '<rootDir>/packages'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } }],
    // The few dependencies published only as ES modules, made CommonJS as jest runs them.
    '^.+\\.js$': ['@swc/jest', { jsc: { target: 'es2023' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/)?(openid-client|oauth4webapi|jose|oidc-provider)[@/])'],
  // Names the run, and fails it when a test file leaves anything of it on NATS or Postgres.
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};
