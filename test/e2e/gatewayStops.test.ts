import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { eventually, isRunning } from '../support/processLiveness.js';
import { AGENT_EXECUTABLE, makeAgentHome, removeAgentHome, requireBuiltAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';
import { spawn } from '../support/testProcesses.js';

const CHECKOUT = dirname(dirname(AGENT_EXECUTABLE));

/**
 * The gateway runs until it is told to stop, and then stops: whatever its trigger provider holds,
 * and however a supervisor running `npm start` tells npm.
 */
describe('agent gateway stops when told, and only then', () => {
  let home: string;
  const started: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    home = await makeAgentHome();
  });

  afterEach(async () => {
    for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await removeAgentHome(home);
  });

  it('stays up with a provider plugin that holds nothing, and calls its stop() at SIGTERM', async () => {
    const stopped = join(home, 'provider-stopped');
    await writeHomeFile(
      home,
      'plugins/quiet/index.mjs',
      [
        "import { writeFileSync } from 'node:fs';",
        'export function createSchedulerProvider() {',
        '  return {',
        "    name: 'quiet',",
        '    problem: () => null,',
        '    async start() {},',
        `    async stop() { writeFileSync(${JSON.stringify(stopped)}, 'stopped'); },`,
        '    async jobsChanged() {},',
        '  };',
        '}',
        '',
      ].join('\n'),
    );
    await writeHomeFile(home, 'config.yaml', `${readFileSync(join(home, 'config.yaml'), 'utf8')}cron:\n  provider: quiet\n`);
    const { gateway, output } = await startGatewayUntil(home, 'gateway started');
    started.push(gateway);

    // Without anything holding the event loop it used to exit here by itself, at once.
    expect(await eventually(() => gateway.exitCode !== null, 1500)).toBe(false);
    expect(output()).toContain('cron trigger: quiet');
    expect(existsSync(stopped)).toBe(false);

    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');
    expect(code).toBe(0);
    expect(readFileSync(stopped, 'utf8')).toBe('stopped');
  });

  /** `npm start` in this checkout, with the home; resolves once the gateway has started, with its pid. */
  async function npmStart(): Promise<{ npm: ChildProcess; gatewayPid: number; output: () => string }> {
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: CHECKOUT,
      env: { ...process.env, AGENT_HOME: home, NO_COLOR: '1', NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(npm);
    let output = '';
    npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    if (!(await eventually(() => output.includes('gateway started'), 20_000)))
      throw new Error(`npm start did not start the gateway:\n${output}`);
    const registry = JSON.parse(readFileSync(join(home, 'gateway.json'), 'utf8')) as { pid: number };
    return { npm, gatewayPid: registry.pid, output: () => output };
  }

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('npm start stops the gateway when npm gets %s', async (signal) => {
    const { npm, gatewayPid, output } = await npmStart();
    expect(isRunning(gatewayPid)).toBe(true);

    npm.kill(signal);

    expect(await eventually(() => !isRunning(gatewayPid), 10_000)).toBe(true);
    expect(output()).toContain('gateway stopped');
    expect(existsSync(join(home, 'gateway.json'))).toBe(false);
  });

  it('npm start stops the gateway when npm is killed with -9', async () => {
    const { npm, gatewayPid, output } = await npmStart();

    npm.kill('SIGKILL');

    expect(await eventually(() => !isRunning(gatewayPid), 10_000)).toBe(true);
    expect(existsSync(join(home, 'gateway.json'))).toBe(false);
    expect(output()).toContain('npm, its parent process, exited; stopping');
  });
});
