import { availableParallelism } from 'node:os';

/** @type {import('jest').Config} */
export default {
  // Two workers more than there are CPUs: most suites wait on the processes and servers they start
  // rather than on the CPU, and on a machine whose cores are busy with other work the extra workers
  // keep them busy with ours (both cores under a CPU hog, 308 suites: 633 s with four workers,
  // 696 s with three; earlier, 10 minutes with three against 20 with two).
  maxWorkers: Math.max(4, availableParallelism() + 2),
  preset: 'ts-jest/presets/default-esm',
  // Node's environment, which also kills whatever a test (or a file) started and left running,
  // when the test ends, passed or failed (test/support/testProcesses.ts).
  testEnvironment: '<rootDir>/test/support/testProcessesEnvironment.cjs',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true }],
  },
  // A deadline, not a measure: with both cores busy with other work, an e2e test takes three or four
  // times what it takes on a quiet machine, and a test that needs more says so itself.
  testTimeout: 120_000,
};
