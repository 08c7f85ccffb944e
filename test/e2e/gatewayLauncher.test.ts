import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, isRunning } from '../support/processLiveness.js';
import { createJob, inAScratchHomeEachTest, makeDue, startGatewayUntil, storedJob, writeHomeFile } from './agentCli.js';

/**
 * The gateway forks its children through its launcher, a small process of its own
 * (docs/processes.md): what it starts dies with the gateway, kill -9 included, and a launcher
 * that is gone leaves the gateway forking them itself.
 */
describe('the gateway’s launcher', () => {
  let home: string;
  const model = (script: string) =>
    `model:\n  provider: command\n  command: ${JSON.stringify(['/bin/sh', '-c', script])}\ntools:\n  sandbox: off\n`;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  const pidsOf = (file: string) => readFileSync(join(home, file), 'utf8').trim().split(/\s+/).map(Number);
  const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');

  it('starts the agent, which dies with the gateway and the launcher when the gateway is killed with -9', async () => {
    await writeHomeFile(home, 'config.yaml', `timezone: UTC\n${model(`echo $$ $PPID > ${join(home, 'agent.pids')}; sleep 60`)}`);
    const id = await createJob(home, ['every 1h', 'Wait a while', '--deliver', 'local']);
    const { gateway } = await startGatewayUntil(home, 'gateway started', { env: { VENDOR_SECRET: 'canary-launcher-secret' } });
    try {
      await makeDue(home, id);
      expect(await eventually(() => existsSync(join(home, 'agent.pids')), 15_000)).toBe(true);
      const [agent, parent] = pidsOf('agent.pids');

      expect(commandLine(parent!)).toContain('launcher.js');
      // The launcher was started without the gateway's credentials.
      expect(readFileSync(`/proc/${parent!}/environ`, 'utf8')).not.toContain('canary-launcher-secret');
      expect(readFileSync(`/proc/${parent!}/environ`, 'utf8')).toContain('PATH=');
      gateway.kill('SIGKILL');

      expect(await eventually(() => !isRunning(agent!) && !isRunning(parent!), 10_000)).toBe(true);
    } finally {
      gateway.kill('SIGKILL');
    }
  });

  it('runs jobs all the same once its launcher is gone', async () => {
    await writeHomeFile(
      home,
      'config.yaml',
      `timezone: UTC\n${model(`echo $$ $PPID > ${join(home, 'agent.pids')}; cat > /dev/null; echo "All done."`)}`,
    );
    const first = await createJob(home, ['every 1h', 'First', '--deliver', 'local', '--name', 'first']);
    const second = await createJob(home, ['every 1h', 'Second', '--deliver', 'local', '--name', 'second']);
    const { gateway } = await startGatewayUntil(home, 'gateway started');
    try {
      await makeDue(home, first);
      expect(await eventually(() => storedJob(home, first).last_status === 'ok', 15_000)).toBe(true);
      const [, launcher] = pidsOf('agent.pids');
      expect(commandLine(launcher!)).toContain('launcher.js');
      process.kill(launcher!, 'SIGKILL');
      expect(await eventually(() => !isRunning(launcher!), 5_000)).toBe(true);

      await makeDue(home, second);

      expect(await eventually(() => storedJob(home, second).last_status === 'ok', 15_000)).toBe(true);
      expect(pidsOf('agent.pids')[1]).toBe(gateway.pid);
    } finally {
      gateway.kill('SIGKILL');
    }
  });
});
