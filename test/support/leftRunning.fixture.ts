// Run by test/architecture/testProcesses.test.ts in a Jest of its own (never by the suite: it is
// no *.test.ts): tests that fail or time out while the processes they started still run, with
// grandchildren holding their pipes. Every pid started is appended to $AGENT_TEST_PIDS.
import { readFileSync } from 'node:fs';
import { eventually, isRunning } from './processLiveness.js';
import { spawn } from './testProcesses.js';

const PIDS = process.env.AGENT_TEST_PIDS!;
const recorded = (): number[] =>
  readFileSync(PIDS, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);

/** Starts `script` under sh (with $PIDS) and waits until it recorded `count` more pids. */
async function start(script: string, count: number, detached = false): Promise<number[]> {
  const before = recorded().length;
  spawn('sh', ['-c', script], { env: { ...process.env, PIDS }, stdio: ['ignore', 'pipe', 'pipe'], detached });
  if (!(await eventually(() => recorded().length >= before + count, 10_000))) throw new Error('the processes did not start');
  return recorded().slice(before);
}

/** A shell that records itself and a `sleep` it started in the background (which holds its pipes), then waits. */
const SHELL_AND_SLEEP = 'sleep 300 & echo "$!" >> "$PIDS"; echo "$$" >> "$PIDS"; wait';

let server: number[] = [];

beforeAll(async () => {
  server = await start(SHELL_AND_SLEEP, 2);
});

it('keeps what beforeAll started for every test of the file', () => {
  expect(server.every(isRunning)).toBe(true);
});

it('fails while its children run', async () => {
  await start(SHELL_AND_SLEEP, 2);
  // A group leader that exits at once, leaving a sleep in its group that holds its pipes.
  await start('sleep 300 & echo "$!" >> "$PIDS"', 1, true);
  expect('the children running').toBe('the test failing');
});

it('still has what beforeAll started after a test failed', () => {
  expect(server.every(isRunning)).toBe(true);
});

it('times out while a child runs', async () => {
  await start(SHELL_AND_SLEEP, 2);
  await new Promise(() => undefined);
}, 1_000);
