import 'reflect-metadata';
import { jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Container } from 'inversify';
import { join } from 'node:path';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { ProcessScriptExecutor } from '../../../src/adapters/process/ProcessScriptExecutor.js';
import { PosixProcessTreeKiller } from '../../../src/adapters/process/PosixProcessTreeKiller.js';
import { ScriptPathError } from '../../../src/application/ports/ScriptExecutor.js';
import { TOKENS } from '../../../src/application/ports/tokens.js';
import { afterTheNextPoll, fakeTheTimers, killerOnRealTime } from '../../support/childRunClock.js';
import { eventually, isRunning } from '../../support/processLiveness.js';
import { newSession, writeTreeScripts } from '../../support/processTrees.js';

let home: string;
let scriptsDir: string;
let executor: ProcessScriptExecutor;
let killer: ReturnType<typeof killerOnRealTime>;

beforeEach(() => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'agent-scripts-')));
  const paths = agentPathsFor(home);
  scriptsDir = paths.scriptsDir;
  mkdirSync(scriptsDir);
  killer = killerOnRealTime();
  executor = new ProcessScriptExecutor(paths, killer);
});

afterEach(() => {
  jest.useRealTimers();
  rmSync(home, { recursive: true, force: true });
});

function writeScript(name: string, content: string, mode = 0o644): string {
  const path = join(scriptsDir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

async function refusal(path: string): Promise<ScriptPathError> {
  try {
    await executor.check(path);
  } catch (error) {
    if (error instanceof ScriptPathError) return error;
    throw error;
  }
  throw new Error(`expected "${path}" to be refused`);
}

const TEN_SECONDS = 10_000;
const hasPython = spawnSync('python3', ['--version']).status === 0;

describe('ProcessScriptExecutor.check', () => {
  it('returns the path relative to the scripts directory', async () => {
    writeScript('reports/daily.sh', 'echo hi\n');

    expect(await executor.check('reports/daily.sh')).toBe(join('reports', 'daily.sh'));
    expect(await executor.check('reports/../reports/daily.sh')).toBe(join('reports', 'daily.sh'));
  });

  it('accepts an absolute path inside the scripts directory', async () => {
    const absolute = writeScript('daily.sh', 'echo hi\n');

    expect(await executor.check(absolute)).toBe('daily.sh');
  });

  it('accepts a symbolic link that stays inside the scripts directory', async () => {
    writeScript('real.sh', 'echo hi\n');
    symlinkSync(join(scriptsDir, 'real.sh'), join(scriptsDir, 'alias.sh'));

    expect(await executor.check('alias.sh')).toBe('alias.sh');
  });

  it('refuses a path that climbs out with ..', async () => {
    writeFileSync(join(home, 'x'), 'echo escaped\n');

    const error = await refusal('../x');

    expect(error.code).toBe('SCRIPT.INVALID');
    expect(error.message).toBe(
      `The script "../x" is outside the scripts directory ${scriptsDir}; put it there and give its path relative to it.`,
    );
  });

  it('refuses an absolute path outside the scripts directory', async () => {
    writeFileSync(join(home, 'outside.sh'), 'echo escaped\n');

    expect((await refusal(join(home, 'outside.sh'))).message).toContain('is outside the scripts directory');
  });

  it('refuses a symbolic link that leads outside the scripts directory', async () => {
    writeFileSync(join(home, 'secret.sh'), 'echo escaped\n');
    symlinkSync(join(home, 'secret.sh'), join(scriptsDir, 'innocent.sh'));

    expect((await refusal('innocent.sh')).message).toBe(
      `The script "innocent.sh" leads through a symbolic link to ${join(home, 'secret.sh')}, outside the scripts directory ${scriptsDir}; scripts must stay inside it.`,
    );
  });

  it('refuses a path through a linked directory that leads outside', async () => {
    mkdirSync(join(home, 'elsewhere'));
    writeFileSync(join(home, 'elsewhere', 'run.sh'), 'echo escaped\n');
    symlinkSync(join(home, 'elsewhere'), join(scriptsDir, 'linked'));

    expect((await refusal('linked/run.sh')).message).toContain('leads through a symbolic link');
  });

  it('refuses a missing file', async () => {
    expect((await refusal('nope.sh')).message).toBe(`The script "nope.sh" does not exist in ${scriptsDir}.`);
  });

  it('refuses a directory, including the scripts directory itself', async () => {
    mkdirSync(join(scriptsDir, 'folder'));

    expect((await refusal('folder')).message).toContain('is not a file');
    expect((await refusal('.')).message).toBe(`The script "." is not a file; name a script file inside ${scriptsDir}.`);
  });

  it('refuses every path while the scripts directory does not exist', async () => {
    rmSync(scriptsDir, { recursive: true });

    expect((await refusal('daily.sh')).message).toBe(
      `The script "daily.sh" does not exist: the scripts directory ${scriptsDir} has not been created yet.`,
    );
  });

  it('refuses an empty path', async () => {
    expect((await refusal('  ')).message).toContain('is not valid');
  });
});

describe('ProcessScriptExecutor.run', () => {
  it('runs an executable file directly, honouring its shebang, in the scripts directory', async () => {
    writeScript('where.js', `#!${process.execPath}\nconsole.log(process.cwd()); console.error('note')\n`, 0o755);

    const result = await executor.run('where.js', { timeoutMs: TEN_SECONDS });

    expect(result).toEqual({ exitCode: 0, stdout: `${scriptsDir}\n`, stderr: 'note\n', timedOut: false, signal: null, startProblem: null });
  });

  it('runs a non-executable .sh with bash', async () => {
    writeScript('shell.sh', 'echo "bash=${BASH_VERSION:+yes}"\n');

    expect((await executor.run('shell.sh', { timeoutMs: TEN_SECONDS })).stdout).toBe('bash=yes\n');
  });

  it('runs a non-executable .js, .mjs or .cjs with node', async () => {
    writeScript('a.js', "console.log('js ' + process.version)\n");
    writeScript('b.mjs', "console.log('mjs ' + typeof import.meta.url)\n");
    writeScript('c.cjs', "console.log('cjs ' + typeof require)\n");

    expect((await executor.run('a.js', { timeoutMs: TEN_SECONDS })).stdout).toBe(`js ${process.version}\n`);
    expect((await executor.run('b.mjs', { timeoutMs: TEN_SECONDS })).stdout).toBe('mjs string\n');
    expect((await executor.run('c.cjs', { timeoutMs: TEN_SECONDS })).stdout).toBe('cjs function\n');
  });

  // Skipped only on a machine without python3: there is no interpreter to choose then.
  (hasPython ? it : it.skip)('runs a non-executable .py with python3', async () => {
    writeScript('p.py', 'import sys\nprint("python", sys.version_info[0])\n');

    expect((await executor.run('p.py', { timeoutMs: TEN_SECONDS })).stdout).toBe('python 3\n');
  });

  it('reports a non-executable file of another kind in the result without running it', async () => {
    writeScript('notes.txt', 'echo should not run\n');

    expect(await executor.run('notes.txt', { timeoutMs: TEN_SECONDS })).toEqual({
      exitCode: null,
      stdout: '',
      stderr: '',
      timedOut: false,
      signal: null,
      startProblem:
        'The script "notes.txt" is not executable and its extension is not one of .sh, .bash, .py, .js, .mjs, .cjs; ' +
        'make it executable (chmod +x, with a shebang line) or rename it.',
    });
  });

  it('says why an executable script whose interpreter line names no program could not be started', async () => {
    writeScript('bad.sh', `#!${join(home, 'no-such-interpreter')}\necho should not run\n`, 0o755);

    expect(await executor.run('bad.sh', { timeoutMs: TEN_SECONDS })).toEqual({
      exitCode: null,
      stdout: '',
      stderr: '',
      timedOut: false,
      signal: null,
      startProblem: 'The script "bad.sh" could not be started (ENOENT); check its shebang line.',
    });
  });

  it('says which signal ended a script that was killed by one, keeping what it wrote', async () => {
    writeScript('killed.sh', 'echo before\necho going down >&2\nkill -9 $$\necho never\n');

    expect(await executor.run('killed.sh', { timeoutMs: TEN_SECONDS })).toEqual({
      exitCode: null,
      stdout: 'before\n',
      stderr: 'going down\n',
      timedOut: false,
      signal: 'SIGKILL',
      startProblem: null,
    });
  });

  it('returns a failing script’s exit code and output instead of throwing', async () => {
    writeScript('fail.sh', 'echo partial\necho broken >&2\nexit 7\n');

    expect(await executor.run('fail.sh', { timeoutMs: TEN_SECONDS })).toEqual({
      exitCode: 7,
      stdout: 'partial\n',
      stderr: 'broken\n',
      timedOut: false,
      signal: null,
      startProblem: null,
    });
  });

  it('gives the script none of the credentials the service holds', async () => {
    const secrets = {
      OPENAI_API_KEY: 'sk-1',
      ROTATION_API_KEYS: 'a,b',
      AGENT_CRON_SCHEDULER_TOKEN: 'bearer',
      TELEGRAM_BOT_TOKEN: '123:abc',
      SMS_AUTH_TOKEN: 'twilio',
      GH_TOKEN: 'ghp_1',
      AGENT_DATABASE_URL: 'postgres://u:p@db/agent',
    };
    Object.assign(process.env, secrets, { HARMLESS_SETTING: 'kept' });
    try {
      writeScript('env.js', 'console.log(JSON.stringify(process.env))\n');

      const seen = JSON.parse((await executor.run('env.js', { timeoutMs: TEN_SECONDS })).stdout) as Record<string, string>;

      for (const name of Object.keys(secrets)) expect(seen).not.toHaveProperty(name);
      expect(seen.HARMLESS_SETTING).toBe('kept');
    } finally {
      for (const name of [...Object.keys(secrets), 'HARMLESS_SETTING']) delete process.env[name];
    }
  });

  it('kills the script and everything it started when it runs too long', async () => {
    const pidFile = join(home, 'pids');
    writeScript('slow.sh', `sleep 30 &\necho started\necho "$$ $!" > "${pidFile}"\nwait\n`);
    fakeTheTimers();

    const running = executor.run('slow.sh', { timeoutMs: 300 });
    expect(await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'), 10_000)).toBe(true);
    await afterTheNextPoll();
    jest.advanceTimersByTime(299);
    expect(killer.killed).toEqual([]);
    jest.advanceTimersByTime(1);
    const result = await running;

    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: null, startProblem: null, stdout: 'started\n' });
    expect(existsSync(pidFile)).toBe(true);
    const [shellPid, sleepPid] = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number) as [number, number];
    expect(await eventually(() => !isRunning(shellPid) && !isRunning(sleepPid))).toBe(true);
  });

  it('returns soon after the script exits even when something it left behind holds its output open', async () => {
    const pidFile = join(home, 'leftover');
    writeScript('background.sh', `sleep 30 &\necho $! > "${pidFile}"\necho done\n`);
    try {
      expect(await executor.run('background.sh', { timeoutMs: 20_000 })).toEqual({
        exitCode: 0,
        stdout: 'done\n',
        stderr: '',
        timedOut: false,
        signal: null,
        startProblem: null,
      });
    } finally {
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    }
  });

  it('kills a child that left the script’s session with setsid, and what it started, when the script times out', async () => {
    const pidFile = join(home, 'pids');
    writeTreeScripts(home);
    writeScript(
      'escape.sh',
      `echo $$ >> "${pidFile}"\n` +
        `${newSession(home)} sh -c 'echo $$ >> "${pidFile}"; sleep 30 & echo $! >> "${pidFile}"; wait' &\n` +
        'sleep 30\n',
    );
    const recorded = () => (existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim().split('\n').map(Number) : []);
    try {
      fakeTheTimers();
      const running = executor.run('escape.sh', { timeoutMs: 1000 });
      expect(await eventually(() => recorded().length === 3, 10_000)).toBe(true);
      jest.advanceTimersByTime(1000);
      const result = await running;

      expect(result.timedOut).toBe(true);
      const [scriptPid, escapedPid, sleepPid] = recorded() as [number, number, number];
      expect(recorded()).toHaveLength(3);
      expect(await eventually(() => [scriptPid, escapedPid, sleepPid].every((pid) => !isRunning(pid)))).toBe(true);
    } finally {
      for (const pid of recorded()) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('can be resolved from a container that binds only the paths and the tree killer', async () => {
    const container = new Container();
    container.bind(TOKENS.AgentPaths).toConstantValue(agentPathsFor(home));
    container.bind(TOKENS.ProcessTreeKiller).toConstantValue(new PosixProcessTreeKiller());
    container.bind(TOKENS.ScriptExecutor).to(ProcessScriptExecutor);
    writeScript('hello.sh', 'echo hello\n');

    expect((await container.get(TOKENS.ScriptExecutor).run('hello.sh', { timeoutMs: TEN_SECONDS })).stdout).toBe('hello\n');
  });

  it('keeps at most 1 MiB of output and says it cut the rest', async () => {
    writeScript('loud.js', "process.stdout.write('y'.repeat(3 * 1024 * 1024))\n");

    const { stdout } = await executor.run('loud.js', { timeoutMs: TEN_SECONDS });

    expect(stdout).toBe(`${'y'.repeat(1024 * 1024)}\n[output cut off after 1 MiB]`);
  });

  it('checks the path again before running', async () => {
    writeFileSync(join(home, 'secret.sh'), 'echo escaped\n');
    symlinkSync(join(home, 'secret.sh'), join(scriptsDir, 'swapped.sh'));

    await expect(executor.run('swapped.sh', { timeoutMs: TEN_SECONDS })).rejects.toBeInstanceOf(ScriptPathError);
  });
});
