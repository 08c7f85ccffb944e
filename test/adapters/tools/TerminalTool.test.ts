import 'reflect-metadata';
import { jest } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { PosixProcessTreeKiller } from '../../../src/adapters/process/PosixProcessTreeKiller.js';
import type {
  GracefulSignal,
  ProcessTreeKiller,
  TreeKillReport,
  TreeSignalReport,
} from '../../../src/application/ports/ProcessTreeKiller.js';
import { TerminalTool, type TerminalResult } from '../../../src/adapters/tools/TerminalTool.js';
import { ToolInputError, type ToolCallContext } from '../../../src/application/agent/ports/Tool.js';
import { fakeTheTimers, killerOnRealTime } from '../../support/childRunClock.js';
import { eventually, isRunning } from '../../support/processLiveness.js';

/** Kills like the real thing and remembers whom. */
class RecordingKiller implements ProcessTreeKiller {
  readonly roots: number[] = [];
  private readonly inner = new PosixProcessTreeKiller();

  async killTree(rootPid: number): Promise<TreeKillReport> {
    this.roots.push(rootPid);
    return this.inner.killTree(rootPid);
  }

  signalTree(rootPid: number, signal: GracefulSignal): Promise<TreeSignalReport> {
    return this.inner.signalTree(rootPid, signal);
  }
}

let home: string;
let killer: RecordingKiller;
let tool: TerminalTool;

beforeEach(() => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'agent-terminal-')));
  killer = new RecordingKiller();
  tool = new TerminalTool(agentPathsFor(home), killer);
});

afterEach(() => {
  jest.useRealTimers();
  rmSync(home, { recursive: true, force: true });
});

function context(signal = new AbortController().signal): ToolCallContext {
  return { signal, unattended: true };
}

async function run(args: Record<string, unknown>, signal?: AbortSignal): Promise<TerminalResult> {
  return JSON.parse(await tool.call(args, context(signal))) as TerminalResult;
}

describe('TerminalTool', () => {
  it('returns the exit code and both streams', async () => {
    expect(await run({ command: 'echo out; echo err >&2; exit 3' })).toEqual({
      exit_code: 3,
      stdout: 'out\n',
      stderr: 'err\n',
      timed_out: false,
    });
  });

  it('runs in $AGENT_HOME/workspace, creating it when missing', async () => {
    expect(existsSync(join(home, 'workspace'))).toBe(false);

    expect((await run({ command: 'pwd' })).stdout).toBe(`${join(home, 'workspace')}\n`);
  });

  it('runs in the configured working directory when one is given', async () => {
    const elsewhere = join(home, 'projects', 'site');
    tool = new TerminalTool(agentPathsFor(home), killer, elsewhere);

    expect((await run({ command: 'pwd' })).stdout).toBe(`${elsewhere}\n`);
  });

  it("runs in the job's working folder its call names, and never makes one up that is gone", async () => {
    const folder = join(home, 'site');
    mkdirSync(folder);
    const inFolder = (command: string, workingDirectory: string) =>
      tool.call({ command }, { ...context(), workingDirectory }).then((text) => JSON.parse(text) as TerminalResult);

    expect((await inFolder('pwd', folder)).stdout).toBe(`${folder}\n`);
    expect(existsSync(join(home, 'workspace'))).toBe(false);
    expect(await inFolder('pwd', join(home, 'gone'))).toEqual({
      exit_code: null,
      stdout: '',
      stderr: '',
      timed_out: false,
      note: `The working folder ${join(home, 'gone')} of this job does not exist (any more).`,
    });
    expect(existsSync(join(home, 'gone'))).toBe(false);
  });

  it('keeps provider secrets out of the environment', async () => {
    const added = { OPENAI_API_KEY: 'sk-1', POOL_API_KEYS: 'a,b', AGENT_CRON_SCHEDULER_TOKEN: 't', KEEP_ME: 'yes' };
    Object.assign(process.env, added);
    try {
      const { stdout } = await run({ command: 'env' });

      expect(stdout).toContain('KEEP_ME=yes');
      expect(stdout).not.toMatch(/OPENAI_API_KEY|POOL_API_KEYS|AGENT_CRON_SCHEDULER_TOKEN/);
    } finally {
      for (const name of Object.keys(added)) delete process.env[name];
    }
  });

  it('keeps the start and the end of a long output and says how much was left out', async () => {
    const { stdout, exit_code } = await run({ command: 'printf BEGIN; yes | head -c 200000; printf END' });

    expect(exit_code).toBe(0);
    expect(stdout.startsWith('BEGIN')).toBe(true);
    expect(stdout.endsWith('END')).toBe(true);
    expect(stdout).toContain(`[… ${200_008 - 50 * 1024} bytes of output left out …]`);
    expect(Buffer.byteLength(stdout)).toBeLessThan(51 * 1024);
  });

  it('kills the whole tree at the timeout, a grandchild included', async () => {
    const pidFile = join(home, 'sleep.pid');
    const onRealTime = killerOnRealTime(killer);
    const timed = new TerminalTool(agentPathsFor(home), onRealTime);
    fakeTheTimers();

    const running = timed.call({ command: `sh -c "sleep 300 & echo \\$! | tee ${pidFile}; wait"`, timeout_seconds: 0.5 }, context());
    expect(await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'), 10_000)).toBe(true);
    jest.advanceTimersByTime(499);
    expect(onRealTime.killed).toEqual([]);
    jest.advanceTimersByTime(1);
    const result = JSON.parse(await running) as TerminalResult;

    expect(result).toMatchObject({ exit_code: null, timed_out: true });
    expect(result.note).toMatch(/still running after 0.5 s and was killed with everything it started/);
    expect(killer.roots).toHaveLength(1);
    const grandchild = Number(result.stdout.trim());
    expect(grandchild).toBeGreaterThan(0);
    expect(await eventually(() => !isRunning(grandchild))).toBe(true);
  });

  it('kills the whole tree when the run is cancelled', async () => {
    const controller = new AbortController();
    const pidFile = join(home, 'sleep.pid');
    const pending = run({ command: `sleep 300 & echo $! > ${pidFile}; wait` }, controller.signal);
    expect(await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'))).toBe(true);
    const sleeper = Number(readFileSync(pidFile, 'utf8'));

    controller.abort();
    const result = await pending;

    expect(result).toMatchObject({ exit_code: null, timed_out: false, note: expect.stringMatching(/cancelled/) });
    expect(await eventually(() => !isRunning(sleeper))).toBe(true);
  });

  it('does not start a command when the run is already cancelled', async () => {
    const controller = new AbortController();
    controller.abort();

    const result = await run({ command: `touch ${join(home, 'ran')}` }, controller.signal);

    expect(result.note).toMatch(/cancelled before the command started/);
    expect(existsSync(join(home, 'ran'))).toBe(false);
  });

  it.each([
    [{}, /needs "command"/],
    [{ command: '  ' }, /needs "command"/],
    [{ command: 'ls', timeout_seconds: 601 }, /at most 600/],
    [{ command: 'ls', timeout_seconds: 0 }, /more than 0/],
    [{ command: 'ls', timeout_seconds: '10' }, /"timeout_seconds" must be a number/],
    [{ cmd: 'ls' }, /no argument "cmd"/],
  ])('refuses %j with a ToolInputError', async (args, message) => {
    await expect(tool.call(args, context())).rejects.toThrow(ToolInputError);
    await expect(tool.call(args, context())).rejects.toThrow(message);
  });
});
