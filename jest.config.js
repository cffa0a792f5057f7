/** One jest run for the whole system: unit tests beside each package, integration tests in test/. */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test', '<rootDir>/gateway', '<rootDir>/services', '<rootDir>/packages'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } }],
  },
  testTimeout: 60_000,
  maxWorkers: 2,
};
