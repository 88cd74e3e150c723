/** One Jest run covers unit tests beside the code, per-app integration tests and the black-box API suite. */
const fs = require('fs');
const swcrc = JSON.parse(fs.readFileSync(`${__dirname}/.swcrc`, 'utf8'));

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/examples', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { ...swcrc, swcrc: false }],
  },
  moduleNameMapper: {
    '^@crm/common$': '<rootDir>/libs/common/src/index.ts',
    '^@crm/contracts$': '<rootDir>/libs/contracts/src/index.ts',
    '^@crm/messaging$': '<rootDir>/libs/messaging/src/index.ts',
    '^@crm/runtime$': '<rootDir>/libs/runtime/src/index.ts',
    '^@crm/records$': '<rootDir>/libs/records/src/index.ts',
    '^@crm/sdk$': '<rootDir>/libs/sdk/src/index.ts',
    '^@crm/test-support$': '<rootDir>/test/support/index.ts',
  },
  // A safety net, not a speed: at a load of 30 on two cores a test that starts a stack took over 60 s.
  testTimeout: 180000,
  // Gives the run an id for its namespaces, and at the end fails it if they left anything behind.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Every suite gets its own database and NATS namespace, so files may run side by side; two workers fit two cores.
  maxWorkers: 2,
  // The longest files first (from test/support/test-durations.json), so the run does not end on one of them.
  testSequencer: '<rootDir>/test/support/slowest-first.sequencer.js',
};
