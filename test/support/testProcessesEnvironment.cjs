// The test environment of every test file (jest.config.js): Node's, plus the end of what the test
// process registry (testProcesses.ts) holds. Jest runs these handlers after a test's afterEach
// hooks ('test_done') and after the file's afterAll hooks ('run_finish'), and waits for them, so
// a test that fails or times out half-way still leaves no process behind, and nothing it started
// keeps Jest from exiting.
const { TestEnvironment } = require('jest-environment-node');

const KEY = Symbol.for('agent.test.processes');

class TestProcessesEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global[KEY] = { scope: 'file', entries: new Set() };
  }

  async handleTestEvent(event) {
    const registry = this.global[KEY];
    if (!registry) return;
    // 'test_started' comes only for a test that runs (not one skipped), before its beforeEach hooks.
    if (event.name === 'test_started') registry.scope = 'test';
    if (event.name === 'test_done') {
      registry.scope = 'file';
      await registry.kill?.('test');
    }
    if (event.name === 'run_finish') await registry.kill?.('file');
  }
}

module.exports = TestProcessesEnvironment;
