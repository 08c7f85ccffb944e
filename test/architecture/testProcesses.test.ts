import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { exitOf } from '../support/childProcesses.js';
import { eventually, isRunning } from '../support/processLiveness.js';
import { spawn } from '../support/testProcesses.js';

const TEST = resolve('test');
/** The registry itself. Functions that wait for their process (spawnSync, execFileSync) cannot leave one behind. */
const ALLOWED = ['support/testProcesses.ts'];
/** A value import of node:child_process that names anything but the synchronous functions. */
function startsProcesses(text: string): boolean {
  const imports = text.matchAll(/import\s+(?!type\b)([^;]*?)\s+from\s+['"](?:node:)?child_process['"]/g);
  for (const [, clause] of imports) {
    const names = /^\{([^}]*)\}$/.exec(clause!.trim())?.[1];
    if (names === undefined) return true;
    const values = names
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '' && !name.startsWith('type '));
    if (values.some((name) => !['spawnSync', 'execFileSync', 'execSync'].includes(name))) return true;
  }
  return /import\(\s*['"](node:)?child_process['"]\s*\)/.test(text);
}

function testFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('processes started by tests', () => {
  it('are started only through the registry (test/support/testProcesses.ts)', () => {
    const starters = testFiles(TEST)
      .filter((file) => startsProcesses(readFileSync(file, 'utf8')))
      .map((file) => relative(TEST, file).split(/[\\/]/).join('/'));

    expect(starters.filter((file) => !ALLOWED.includes(file))).toEqual([]);
  });

  it('are killed when the test that started them fails or times out, and Jest then exits by itself', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agent-left-running-'));
    try {
      const pids = join(dir, 'pids');
      writeFileSync(pids, '');
      // In band: what a test leaves open keeps the Jest process itself from exiting.
      const jest = spawn(
        process.execPath,
        [
          '--experimental-vm-modules',
          resolve('node_modules/jest/bin/jest.js'),
          '--runInBand',
          '--ci',
          '--testMatch',
          '**/test/support/leftRunning.fixture.ts',
        ],
        { env: { ...process.env, AGENT_TEST_PIDS: pids, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      jest.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const exit = exitOf(jest);
      // Generous: a Jest of its own compiles the fixture first; stuck, it would never end.
      expect(await eventually(() => jest.exitCode !== null, 120_000, 100)).toBe(true);
      const { code, stderr } = await exit;
      const report = output + stderr;
      expect(code).toBe(1);
      expect(report).toContain('✓ keeps what beforeAll started for every test of the file');
      expect(report).toContain('✕ fails while its children run');
      expect(report).toContain('✓ still has what beforeAll started after a test failed');
      expect(report).toContain('✕ times out while a child runs');
      expect(report).toContain('Tests:       2 failed, 2 passed, 4 total');
      expect(report).not.toContain('did not exit');
      const started = readFileSync(pids, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map(Number);
      expect(started).toHaveLength(7);
      expect(started.filter(isRunning)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
