import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BubblewrapSandbox, sandboxFinding, type SandboxSettings } from '../../../src/adapters/process/BubblewrapSandbox.js';
import { CappedOutput } from '../../../src/adapters/process/CappedOutput.js';
import { ChildProcessRunner } from '../../../src/adapters/process/ChildProcessRunner.js';
import { PosixProcessTreeKiller } from '../../../src/adapters/process/PosixProcessTreeKiller.js';

/** Each line of docs/processes.md "What a sandboxed child sees", run through the real bwrap. */

import { eventually, isRunning } from '../../support/processLiveness.js';
import { descendsFrom, procStat } from '../../support/processTrees.js';
import { registerPid, spawn } from '../../support/testProcesses.js';

function readComm(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

const SETTINGS: SandboxSettings = { mode: 'auto', network: true, readable: [], writable: [] };

let root: string;
let agentHome: string;
let userHome: string;
let temporary: string;
let outsideConfig: string;
let workspace: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'agent-sandbox-'));
  agentHome = join(root, 'agent-home');
  userHome = join(root, 'user-home');
  temporary = join(root, 'tmp');
  workspace = join(agentHome, 'workspace');
  for (const dir of [agentHome, userHome, temporary, join(root, 'etc')]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(agentHome, 'config.yaml'), 'secret: in-home\n');
  writeFileSync(join(userHome, '.netrc'), 'machine example password hunter2\n');
  writeFileSync(join(temporary, 'launcher.sock'), 'socket stand-in\n');
  outsideConfig = join(root, 'etc', 'agent.yaml');
  writeFileSync(outsideConfig, 'secret: outside\n');
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

function sandbox(settings: Partial<SandboxSettings> = {}, env: NodeJS.ProcessEnv = process.env): BubblewrapSandbox {
  return new BubblewrapSandbox(
    { ...SETTINGS, ...settings },
    { agentHome, configFile: outsideConfig, userHome, temporaryDirectory: temporary },
    env,
  );
}

async function sh(
  script: string,
  box = sandbox(),
  readable: string[] = [],
): Promise<{ code: number | null; out: string; err: string; kind: string }> {
  const stdout = new CappedOutput(1 << 20, 'start');
  const stderr = new CappedOutput(1 << 20, 'start');
  const end = await new ChildProcessRunner(new PosixProcessTreeKiller()).run({
    program: '/bin/sh',
    args: ['-c', script],
    env: { PATH: process.env.PATH, SECRET_IN_PARENT: 'no' },
    cwd: agentHome,
    stdout,
    stderr,
    timeoutMs: 60_000,
    sandbox: { by: box, workspace, readable },
  });
  return { code: end.kind === 'exited' ? end.code : null, out: stdout.text(), err: stderr.text(), kind: end.kind };
}

const works = await sandbox().status();
// Skipped only where bubblewrap cannot make its sandbox (not installed, no user namespaces): there is
// nothing to confine with then, and 'without a working bubblewrap' below covers that machine.
const whereBwrapWorks = works.active ? describe : describe.skip;

whereBwrapWorks('a child in the bubblewrap sandbox', () => {
  test('sees only its own processes: no gateway, no /proc/<pid>/environ of it', async () => {
    const run = await sh(`ps -e -o pid= | wc -l; cat /proc/${process.pid}/environ 2>&1 || echo unreadable; cat /proc/1/comm`);
    const [count, ...rest] = run.out.trim().split('\n');
    // bwrap as the sandbox's init, the shell, ps and wc: never this process or the machine's.
    expect(Number(count)).toBeLessThanOrEqual(5);
    expect(rest.join('\n')).toContain('unreadable');
    expect(rest.at(-1)).toBe('bwrap');
  });

  test("sees the agent's home, the user's home and the temporary directory empty, and the config file unreadable", async () => {
    const run = await sh(
      `ls -A ${agentHome}; echo --; ls -A ${userHome}; echo --; ls -A ${temporary}; echo --; cat ${outsideConfig} || echo unreadable`,
    );
    const [home, user, temp, config] = run.out.split('--\n');
    // Only the workspace, bound back into the sealed home.
    expect(home!.trim()).toBe('workspace');
    expect(user!.trim()).toBe('');
    expect(temp!.trim()).toBe('');
    expect(config).toContain('unreadable');
    expect(run.out).not.toContain('secret');
  });

  test('writes its workspace, and nothing outside it: the rest of the file system is read-only', async () => {
    const run = await sh(
      `echo made > ${workspace}/made && echo ok; echo x > ${agentHome}/jobs.json || echo home-refused; echo x > /usr/sandbox-probe || echo root-refused`,
    );
    expect(run.out).toContain('ok');
    expect(run.out).toContain('home-refused');
    expect(run.out).toContain('root-refused');
    expect(readFileSync(join(workspace, 'made'), 'utf8')).toBe('made\n');
    expect(existsSync(join(agentHome, 'jobs.json'))).toBe(false);
    expect(existsSync('/usr/sandbox-probe')).toBe(false);
  });

  test('has no capabilities and no new privileges, and starts in the workspace when its directory is hidden', async () => {
    const run = await sh('grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; pwd');
    expect(run.out).toMatch(/CapEff:\s+0+\n/);
    expect(run.out).toMatch(/NoNewPrivs:\s+1/);
    expect(run.out.trim().split('\n').at(-1)).toBe(workspace);
  });

  test('keeps the network unless tools.network is false, and then has only a loopback of its own', async () => {
    const server = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const port = (server.address() as AddressInfo).port;
    const connect = `${process.execPath} -e "require('net').connect(${port}, '127.0.0.1').on('data', (d) => process.stdout.write(d)).on('error', () => console.log('unreachable'))"`;
    try {
      expect((await sh(connect)).out).toBe('hello\n');
      expect((await sh(connect, sandbox({ network: false }))).out).toBe('unreachable\n');
      expect((await sh("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '", sandbox({ network: false }))).out.trim()).toBe('lo');
    } finally {
      server.close();
    }
  });

  test('reads what it is given in a hidden place, read-only', async () => {
    const scripts = join(agentHome, 'scripts');
    mkdirSync(scripts);
    writeFileSync(join(scripts, 'note.txt'), 'readable\n');
    const run = await sh(`cat ${scripts}/note.txt; echo x > ${scripts}/note.txt || echo refused`, sandbox(), [scripts]);
    expect(run.out).toContain('readable');
    expect(run.out).toContain('refused');
  });

  test('dies with the process that started it: a kill -9 of bwrap takes what runs inside with it', async () => {
    const launch = await sandbox().confine({ program: '/bin/sleep', args: ['300'], workspace });
    const outer = spawn(launch.program, [...launch.args], { stdio: 'ignore' });
    // bwrap outside, bwrap as the sandbox's init, then sleep: the sleep's pid on this side.
    const sleeper = () =>
      readdirSync('/proc')
        .map(Number)
        .find((pid) => pid > 0 && procStat(pid) !== null && readComm(pid) === 'sleep' && descendsFrom(pid, outer.pid!));
    expect(await eventually(() => sleeper() !== undefined, 20_000)).toBe(true);
    const inside = sleeper()!;
    registerPid(inside);
    outer.kill('SIGKILL');
    expect(await eventually(() => !isRunning(inside), 20_000)).toBe(true);
  });

  test('a program that does not exist is reported as not started, as without a sandbox', async () => {
    const end = await new ChildProcessRunner(new PosixProcessTreeKiller()).run({
      program: join(root, 'missing-program'),
      args: [],
      env: { PATH: process.env.PATH },
      sandbox: { by: sandbox(), workspace },
    });
    expect(end).toMatchObject({ kind: 'not_started', error: { code: 'ENOENT' } });
  });
});

describe('without a working bubblewrap', () => {
  const noBwrap = { PATH: join(tmpdir(), 'no-such-directory') };

  test('auto runs the child unconfined, and start-up warns that it does', async () => {
    const box = sandbox({}, noBwrap);
    const status = await box.status();
    expect(status).toEqual({ mode: 'auto', active: false, problem: 'bubblewrap (bwrap) is not installed.' });
    const run = await sh(`ls ${agentHome}`, box);
    expect(run.out).toContain('config.yaml');
    expect(sandboxFinding(status)).toEqual({
      refused: false,
      message:
        'tools.sandbox is auto, but bubblewrap (bwrap) is not installed. Pre-run scripts, terminal commands and command agent programs run without a sandbox.',
    });
  });

  test('bwrap refuses to start the child, in one sentence', async () => {
    const box = sandbox({ mode: 'bwrap' }, noBwrap);
    const run = await sh('echo ran', box);
    expect(run.kind).toBe('not_started');
    expect(run.out).toBe('');
    expect(sandboxFinding(await box.status())).toEqual({
      refused: true,
      message:
        'tools.sandbox is bwrap, but bubblewrap (bwrap) is not installed. Install bubblewrap (the bubblewrap package), or set tools.sandbox to auto or off.',
    });
  });

  test('off never looks for it', async () => {
    expect(await sandbox({ mode: 'off' }).status()).toEqual({ mode: 'off', active: false, problem: null });
  });
});
