import { jest } from '@jest/globals';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandAgentRunner, formatContextForStdin } from '../../../src/adapters/agents/CommandAgentRunner.js';
import { PosixProcessTreeKiller } from '../../../src/adapters/process/PosixProcessTreeKiller.js';
import type { ProcessTreeKiller } from '../../../src/application/ports/ProcessTreeKiller.js';
import type { AgentRunRequest } from '../../../src/application/ports/AgentRunner.js';
import { afterTheNextPoll, fakeTheTimers, killerOnRealTime } from '../../support/childRunClock.js';
import { eventually, isRunning } from '../../support/processLiveness.js';
import { SAMPLE_CONTEXT as context, failureOf, sampleRunRequest } from '../../support/agentRuns.js';

function request(overrides: Partial<AgentRunRequest> = {}): AgentRunRequest {
  return sampleRunRequest({ selection: { provider: 'command', model: null }, toolsets: ['web', 'terminal'], ...overrides });
}

/** A runner for `node -e <source>`. */
function nodeAgent(source: string, killer: ProcessTreeKiller = new PosixProcessTreeKiller()): CommandAgentRunner {
  return new CommandAgentRunner({ command: [process.execPath, '-e', source], killer });
}

let workDir: string;

beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), 'agent-runner-'));
});

afterEach(() => {
  jest.useRealTimers();
  rmSync(workDir, { recursive: true, force: true });
});

describe('CommandAgentRunner', () => {
  it('writes memory, then each skill, then the task to stdin as headed sections', async () => {
    const echo = nodeAgent('process.stdin.pipe(process.stdout)');

    const result = await echo.run(request());

    expect(result.text).toBe(
      [
        '# Memory: MEMORY.md',
        '',
        'The user likes short answers.',
        '',
        '# Memory: USER.md',
        '',
        'Name: Ada',
        '',
        '# Skill: weather',
        '',
        'Look at the sky.',
        '',
        '# Skill: news',
        '',
        'Read the paper.',
        '',
        '# Task',
        '',
        'Report the weather.',
      ].join('\n'),
    );
    expect(formatContextForStdin(context)).toBe(`${result.text}\n`);
  });

  it('answers with stdout without its trailing whitespace', async () => {
    const result = await nodeAgent("process.stdout.write('  It is sunny.\\n\\n  \\n')").run(request());

    expect(result).toEqual({ text: '  It is sunny.', answeredBy: `command:${process.execPath}` });
  });

  it('reports the usage a program prints as the last line of its stderr, priced, and leaves that line out of errors', async () => {
    const usageLine = JSON.stringify({ usage: { input_tokens: 1000, output_tokens: 50, cached_input_tokens: 200, tool_calls: 2 } });
    const prices = (provider: string, model: string) =>
      provider === 'local' && model === 'tiny' ? { input_per_mtok: 2, output_per_mtok: 10 } : null;

    const result = await nodeAgent(`console.log('Done.'); console.error('thinking'); console.error(${JSON.stringify(usageLine)})`).run(
      request({ selection: { provider: 'local', model: 'tiny' } }),
      prices,
    );
    const failed = await failureOf(
      nodeAgent(`console.error('quota exhausted'); console.error(${JSON.stringify(usageLine)}); process.exit(2)`).run(request()),
    );

    expect(result.usage).toEqual({ input_tokens: 1000, output_tokens: 50, cached_input_tokens: 200, model_turns: 1, tool_calls: 2 });
    expect(result.costUsd).toBeCloseTo((1000 * 2 + 50 * 10) / 1e6, 9);
    expect(failed.message).toBe(`The agent program "${process.execPath}" exited with code 2: quota exhausted`);
    expect(failed.spend?.usage.input_tokens).toBe(1000);
    expect(failed.spend?.costUsd).toBeNull();
  });

  it('reports no usage when the last line of stderr is not a usage line', async () => {
    const result = await nodeAgent("console.log('Done.'); console.error('{\"note\": 1}')").run(request());

    expect(result.usage).toBeUndefined();
  });

  it('tells the program the model and the toolsets through its environment', async () => {
    const printEnv = nodeAgent(
      'console.log(JSON.stringify([process.env.AGENT_PROVIDER, process.env.AGENT_MODEL, process.env.AGENT_TOOLSETS]))',
    );

    const result = await printEnv.run(request({ selection: { provider: 'local', model: 'tiny' } }));

    expect(JSON.parse(result.text)).toEqual(['local', 'tiny', 'web,terminal']);
  });

  it('still answers when the program does not read its stdin', async () => {
    const hugeTask = 'x'.repeat(4 * 1024 * 1024);

    const result = await nodeAgent("console.log('done')").run(request({ context: { ...context, task: hugeTask } }));

    expect(result.text).toBe('done');
  });

  it('fails with the exit code and stderr when the program exits non-zero', async () => {
    const error = await failureOf(
      nodeAgent("console.log('partial'); console.error('  model quota exhausted  '); process.exit(3)").run(request()),
    );

    expect(error.reason).toBe('failed');
    expect(error.message).toBe(`The agent program "${process.execPath}" exited with code 3: model quota exhausted`);
  });

  it('keeps only the end of a long stderr in the message', async () => {
    const error = await failureOf(nodeAgent("console.error('a'.repeat(5000) + 'THE END'); process.exit(1)").run(request()));

    expect(error.message.length).toBeLessThan(2200);
    expect(error.message).toMatch(/: …a+THE END$/);
  });

  it('fails with a sentence naming the program when it does not exist', async () => {
    const missing = new CommandAgentRunner({ command: ['no-such-agent-program', '--x'], killer: new PosixProcessTreeKiller() });

    const error = await failureOf(missing.run(request()));

    expect(error.reason).toBe('failed');
    expect(error.message).toBe('The agent program "no-such-agent-program" was not found; check the configured command and PATH.');
    expect(error.cause).toMatchObject({ code: 'ENOENT' });
  });

  it('kills the program and everything it started after the idle budget passes without output', async () => {
    const pidFile = join(workDir, 'pids');
    const script = join(workDir, 'agent.sh');
    writeFileSync(script, `#!/bin/sh\nsleep 30 &\necho "$$ $!" > "${pidFile}"\nwait\n`);
    chmodSync(script, 0o755);
    const killer = killerOnRealTime();
    const runner = new CommandAgentRunner({ command: [script], killer });
    fakeTheTimers();

    const running = failureOf(runner.run(request({ idleTimeoutMs: 300 })));
    expect(await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'), 10_000)).toBe(true);
    jest.advanceTimersByTime(299);
    expect(killer.killed).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(killer.killed).toHaveLength(1);
    const error = await running;

    expect(error.reason).toBe('idle_timeout');
    expect(error.message).toMatch(/^idle timeout: no output for 0\.3 s; /);
    expect(existsSync(pidFile)).toBe(true);
    const [shellPid, sleepPid] = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number) as [number, number];
    expect(await eventually(() => !isRunning(shellPid) && !isRunning(sleepPid))).toBe(true);
  });

  it('answers soon after the program exits even when something it left behind holds its output open', async () => {
    const pidFile = join(workDir, 'leftover');
    const runner = new CommandAgentRunner({
      command: ['/bin/sh', '-c', `sleep 30 & echo $! > "${pidFile}"; echo answer`],
      killer: new PosixProcessTreeKiller(),
    });
    try {
      const result = await runner.run(request({ idleTimeoutMs: 20_000 }));

      expect(result.text).toBe('answer');
    } finally {
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    }
  });

  it('counts any output on stdout or stderr as activity', async () => {
    const pidFile = join(workDir, 'pid');
    const stepFile = join(workDir, 'steps');
    // One line per SIGUSR1, on stderr or stdout as listed; the step count is noted after the line is written.
    const killer = killerOnRealTime();
    const chatty = nodeAgent(
      `
      const fs = require('fs');
      const steps = [[2, 'thinking'], [1, 'working'], [2, 'still thinking'], [1, 'finished']];
      let done = 0;
      process.on('SIGUSR1', () => {
        const [fd, line] = steps[done];
        fs.writeSync(fd, line + '\\n');
        fs.writeFileSync(${JSON.stringify(stepFile)}, String(++done));
        if (done === steps.length) process.exit(0);
      });
      setInterval(() => undefined, 60_000);
      fs.writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
    `,
      killer,
    );
    fakeTheTimers();

    const running = chatty.run(request({ idleTimeoutMs: 500 }));
    running.catch(() => undefined);
    expect(await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 10_000)).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    for (let step = 1; step <= 4; step += 1) {
      // 1.6 s in all, never 0.5 s without output: only a budget that each line restarts lasts.
      jest.advanceTimersByTime(400);
      expect(killer.killed).toEqual([]);
      process.kill(pid, 'SIGUSR1');
      expect(await eventually(() => existsSync(stepFile) && readFileSync(stepFile, 'utf8') === String(step))).toBe(true);
      await afterTheNextPoll();
    }
    jest.useRealTimers();
    const result = await running;

    expect(result.text).toBe('working\nfinished');
  });

  it('waits without limit when the idle budget is null', async () => {
    const result = await nodeAgent("setTimeout(() => console.log('late'), 300)").run(request({ idleTimeoutMs: null }));

    expect(result.text).toBe('late');
  });

  it('kills the program when the run is cancelled', async () => {
    const pidFile = join(workDir, 'pid');
    const controller = new AbortController();
    const sleeper = nodeAgent(`require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => {}, 30000)`);

    const running = failureOf(sleeper.run(request({ signal: controller.signal })));
    expect(await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '')).toBe(true);
    controller.abort();
    const error = await running;

    expect(error.reason).toBe('aborted');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await eventually(() => !isRunning(pid))).toBe(true);
  });

  it('does not start the program when the run was cancelled before', async () => {
    const controller = new AbortController();
    controller.abort();
    const marker = join(workDir, 'started');

    const error = await failureOf(
      nodeAgent(`require('fs').writeFileSync(${JSON.stringify(marker)}, '')`).run(request({ signal: controller.signal })),
    );

    expect(error.reason).toBe('aborted');
    expect(existsSync(marker)).toBe(false);
  });
});
