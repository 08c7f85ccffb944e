import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/processLiveness.js';
import { requireBuiltAgent, runAgent, startGateway } from './agentCli.js';

/** A machine where the gateway runs for the first time: no `$AGENT_HOME` yet, not even its parents. */
describe('the gateway on a home that does not exist yet, end to end', () => {
  let parent: string;
  const running: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);
  beforeEach(async () => {
    parent = await mkdtemp(join(tmpdir(), 'agent-e2e-fresh-'));
  });
  afterEach(async () => {
    for (const child of running.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    }
    await rm(parent, { recursive: true, force: true });
  });

  it.each([
    ['a home whose parent exists', ['agent-home']],
    ['a home three directories deep', ['a', 'b', 'agent-home']],
  ])('%s: the gateway makes it (0700) and registers before "gateway started", and agent status sees it', async (_, segments) => {
    const home = join(parent, ...segments);
    const registry = join(home, 'gateway.json');
    const { gateway, output } = startGateway(home);
    running.push(gateway);
    // Looked at the moment the line arrives, not whenever a poll comes round.
    let registeredWhenStarted: boolean | null = null;
    gateway.stdout!.on('data', () => {
      if (registeredWhenStarted === null && output().includes('gateway started')) registeredWhenStarted = existsSync(registry);
    });

    expect(await eventually(() => output().includes('gateway started'), 15_000)).toBe(true);
    expect(registeredWhenStarted).toBe(true);
    expect(output()).not.toContain('could not register');
    for (let depth = 1; depth <= segments.length; depth += 1) {
      expect(statSync(join(parent, ...segments.slice(0, depth))).mode & 0o777).toBe(0o700);
    }
    expect(statSync(registry).mode & 0o777).toBe(0o600);

    const status = await runAgent(['status', '--json'], { home });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).gateway).toMatchObject({ state: 'running', gateway: { pid: gateway.pid } });
    const text = await runAgent(['status'], { home });
    expect(text.stdout).toContain(`Gateway: running, pid ${gateway.pid}`);
    expect(text.stderr).toBe('');

    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
    expect(gateway.exitCode).toBe(0);
  });
});
