import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CappedOutput } from '../../../src/adapters/process/CappedOutput.js';
import { ChildProcessRunner, type ChildRunSpec } from '../../../src/adapters/process/ChildProcessRunner.js';
import { childLauncher, startChildrenThroughLauncher } from '../../../src/adapters/process/childProcesses.js';
import { PosixProcessTreeKiller } from '../../../src/adapters/process/PosixProcessTreeKiller.js';
import type {
  GracefulSignal,
  ProcessTreeKiller,
  TreeKillReport,
  TreeSignalReport,
} from '../../../src/application/ports/ProcessTreeKiller.js';
import { eventually, isRunning } from '../../support/processLiveness.js';

/** Kills like the real thing and remembers whom; or, told to, kills nobody (a tree that survives). */
class RecordingKiller implements ProcessTreeKiller {
  readonly roots: number[] = [];
  private readonly inner = new PosixProcessTreeKiller();

  constructor(private readonly effective = true) {}

  async killTree(rootPid: number, mark?: string): Promise<TreeKillReport> {
    this.roots.push(rootPid);
    if (!this.effective) return { rootPid, killed: [], survivors: [rootPid], fallback: false };
    return this.inner.killTree(rootPid, mark);
  }

  signalTree(rootPid: number, signal: GracefulSignal): Promise<TreeSignalReport> {
    return this.inner.signalTree(rootPid, signal);
  }
}

const PATH_ONLY = { PATH: process.env.PATH };

let workDir: string;
let killer: RecordingKiller;
let runner: ChildProcessRunner;
const leftovers: number[] = [];

beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), 'agent-child-'));
  killer = new RecordingKiller();
  runner = new ChildProcessRunner(killer, 200);
});

afterEach(() => {
  for (const pid of leftovers.splice(0)) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  rmSync(workDir, { recursive: true, force: true });
});

function shell(script: string, over: Partial<ChildRunSpec> = {}): ChildRunSpec {
  return { program: '/bin/sh', args: ['-c', script], env: PATH_ONLY, ...over };
}

/** Reads the pids a shell wrote to `file`, one a line, once it has written `count` of them. */
async function pidsIn(file: string, count: number): Promise<number[]> {
  const read = () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : []);
  expect(await eventually(() => read().length >= count)).toBe(true);
  const pids = read();
  leftovers.push(...pids);
  return pids;
}

/** The gateway's launcher, as built (dist/launcher.js): the same behaviour is asked of children it starts. */
const LAUNCHER = fileURLToPath(new URL('../../../dist/launcher.js', import.meta.url));

describe.each([
  ['started by this process', false],
  ['started through the launcher', true],
])('ChildProcessRunner, children %s', (_how, throughLauncher) => {
  beforeAll(async () => {
    if (!throughLauncher) return;
    if (!existsSync(LAUNCHER)) throw new Error('dist/launcher.js is missing; run npm run build first');
    await startChildrenThroughLauncher(LAUNCHER);
    expect(childLauncher()).not.toBeNull();
  });

  it('writes stdin, hands both streams to their sinks and reports the exit code', async () => {
    const stdout = new CappedOutput(1024);
    const stderr = new CappedOutput(1024);

    const end = await runner.run(shell('cat; echo oops >&2; exit 3', { stdin: 'hello', stdout, stderr }));

    expect(end).toEqual({ kind: 'exited', code: 3, signal: null });
    expect(stdout.text()).toBe('hello');
    expect(stderr.text()).toBe('oops\n');
  });

  it('gives the child exactly the environment it is passed, nothing of this process, and its tree mark', async () => {
    const stdout = new CappedOutput(64 * 1024);

    await runner.run({ program: '/usr/bin/env', args: [], env: { ONLY_THIS: 'yes' }, stdout });

    expect(stdout.text().split('\n').filter(Boolean).sort()).toEqual([
      expect.stringMatching(/^AGENT_PROCESS_TREE=\d+-[0-9a-f]{12}$/),
      'ONLY_THIS=yes',
    ]);
  });

  it('kills, at the timeout, a grandchild that left the tree when its parent exited', async () => {
    const pidFile = join(workDir, 'pids');
    // The subshell starts the sleep in a session of its own and exits: init adopts the sleep.
    const script = `echo $$ > ${pidFile}; (setsid sleep 300 & echo $! >> ${pidFile}); sleep 300`;

    // Long enough for the shell to write its pids first, on a machine whose cores are busy.
    const end = await runner.run(shell(script, { timeoutMs: 2_000 }));

    expect(end).toEqual({ kind: 'stopped', reason: 'timeout' });
    const [shellPid, strayPid] = (await pidsIn(pidFile, 2)) as [number, number];
    expect(await eventually(() => !isRunning(shellPid) && !isRunning(strayPid))).toBe(true);
  });

  it('runs the child in the working directory it is given', async () => {
    const stdout = new CappedOutput(1024);

    await runner.run(shell('pwd -P', { cwd: workDir, stdout }));

    expect(stdout.text()).toBe(`${realpathSync(workDir)}\n`);
  });

  it('reports a program that cannot be started with its error', async () => {
    const end = await runner.run({ program: join(workDir, 'no-such-program'), args: [], env: PATH_ONLY });

    expect(end).toMatchObject({ kind: 'not_started', error: { code: 'ENOENT' } });
  });

  it('reports the signal that ended a child it did not stop', async () => {
    expect(await runner.run(shell('kill -TERM $$'))).toEqual({ kind: 'exited', code: null, signal: 'SIGTERM' });
  });

  it('still finishes when the child exits without reading its stdin', async () => {
    const end = await runner.run(shell('exit 0', { stdin: 'x'.repeat(4 * 1024 * 1024) }));

    expect(end).toEqual({ kind: 'exited', code: 0, signal: null });
  });

  it('kills the whole tree at the timeout, a grandchild included', async () => {
    const pidFile = join(workDir, 'pids');

    const end = await runner.run(shell(`sleep 300 & echo $$ > ${pidFile}; echo $! >> ${pidFile}; wait`, { timeoutMs: 2_000 }));

    expect(end).toEqual({ kind: 'stopped', reason: 'timeout' });
    const [shellPid, sleepPid] = (await pidsIn(pidFile, 2)) as [number, number];
    expect(killer.roots).toEqual([shellPid]);
    expect(await eventually(() => !isRunning(shellPid) && !isRunning(sleepPid))).toBe(true);
  });

  it('kills the tree when the child stays silent for the idle budget', async () => {
    const end = await runner.run(shell('sleep 300', { stdout: new CappedOutput(10), idleTimeoutMs: 200 }));

    expect(end).toEqual({ kind: 'stopped', reason: 'idle' });
    expect(killer.roots).toHaveLength(1);
  });

  it('kills the tree when the signal fires', async () => {
    const pidFile = join(workDir, 'pids');
    const controller = new AbortController();

    const running = runner.run(shell(`echo $$ > ${pidFile}; exec sleep 300`, { signal: controller.signal }));
    const [pid] = (await pidsIn(pidFile, 1)) as [number];
    controller.abort();

    expect(await running).toEqual({ kind: 'stopped', reason: 'aborted' });
    expect(await eventually(() => !isRunning(pid))).toBe(true);
  });

  it('does not start the child when the signal has fired already', async () => {
    const controller = new AbortController();
    controller.abort();

    const end = await runner.run(shell(`touch ${join(workDir, 'ran')}`, { signal: controller.signal }));

    expect(end).toEqual({ kind: 'stopped', reason: 'aborted' });
    expect(existsSync(join(workDir, 'ran'))).toBe(false);
  });

  it('finishes after the grace when something the child left behind holds its output open', async () => {
    const pidFile = join(workDir, 'leftover');
    const stdout = new CappedOutput(1024);

    const end = await runner.run(shell(`sleep 300 & echo $! > ${pidFile}; echo done`, { stdout }));
    await pidsIn(pidFile, 1);

    expect(end).toEqual({ kind: 'exited', code: 0, signal: null });
    expect(stdout.text()).toBe('done\n');
  });

  it('finishes after the grace when the child survives the kill', async () => {
    runner = new ChildProcessRunner(new RecordingKiller(false), 200);
    const pidFile = join(workDir, 'pids');

    const end = await runner.run(shell(`echo $$ > ${pidFile}; exec sleep 300`, { timeoutMs: 2_000 }));
    const [pid] = (await pidsIn(pidFile, 1)) as [number];

    expect(end).toEqual({ kind: 'stopped', reason: 'timeout' });
    expect(isRunning(pid)).toBe(true);
  });
});
