import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/freePort.js';
import {
  createJob,
  editStoredJob,
  makeAgentHome,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  writeHomeFile,
  startGatewayUntil,
} from './agentCli.js';

async function stop(gateway: ChildProcess): Promise<void> {
  if (gateway.exitCode !== null) return;
  gateway.kill('SIGTERM');
  await once(gateway, 'exit');
}

describe('agent status and the gateway start-up lines', () => {
  let home: string;
  const running: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);
  beforeEach(async () => {
    home = await makeAgentHome();
  });
  afterEach(async () => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await removeAgentHome(home);
  });

  it('without a gateway: says none runs, lists the next jobs, a failed job with its error and the waiting webhook events', async () => {
    const next = await createJob(home, ['every 1h', 'Hourly report', '--name', 'hourly']);
    const failed = await createJob(home, ['every 2h', 'Broken report', '--name', 'broken']);
    await editStoredJob(home, failed, (job) => {
      job.last_status = 'error';
      job.last_error = 'the agent exited with code 3';
      job.last_run_at = '2026-03-01T12:00:00Z';
    });
    const claimant = encodeURIComponent('elsewhere:99999');
    const event = { id: 'evt-1', route: 'github', event: 'push', deliveryId: 'd-1', receivedAt: '2026-03-01T12:00:00.000Z', payload: {} };
    await writeHomeFile(home, `webhooks/inbox/journal-${claimant}.ndjson`, `${JSON.stringify({ accept: event })}\n`);

    const text = await runAgent(['status'], { home });
    expect(text.code).toBe(0);
    expect(text.stderr).toBe('');
    expect(text.stdout).toContain(`Home: ${home}`);
    expect(text.stdout).toContain('Gateway: not running');
    expect(text.stdout).toMatch(new RegExp(`${next}\\s+hourly`));
    expect(text.stdout).toContain(`${failed} 'broken': error at `);
    expect(text.stdout).toContain('the agent exited with code 3');
    expect(text.stdout).toContain('Webhook events waiting: 1');

    const json = await runAgent(['status', '--json'], { home });
    expect(json.code).toBe(0);
    const status = JSON.parse(json.stdout);
    expect(status.gateway).toEqual({ state: 'stopped' });
    expect(status.next_jobs.map((job: { id: string }) => job.id)).toEqual([next, failed]);
    expect(status.failed_jobs).toEqual([
      expect.objectContaining({ id: failed, last_status: 'error', error: 'the agent exited with code 3' }),
    ]);
    expect(status.webhook_events_waiting).toBe(1);
  });

  it('with a gateway: its pid, start, listener and provider, and not any more once it stopped', async () => {
    const port = await freePort();
    await writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        'platforms:',
        '  webhook:',
        '    enabled: true',
        '    extra:',
        '      host: 127.0.0.1',
        `      port: ${port}`,
        '',
      ].join('\n'),
    );
    const { gateway } = await startGatewayUntil(home, 'gateway started', { withinMs: 15_000 });
    running.push(gateway);

    const status = JSON.parse((await runAgent(['status', '--json'], { home })).stdout);
    expect(status.gateway).toEqual({
      state: 'running',
      gateway: {
        pid: gateway.pid,
        host: expect.any(String),
        started_at: expect.any(String),
        listener: `127.0.0.1:${port}`,
        provider: 'built-in ticker',
        chat_receivers: [],
      },
    });
    const text = await runAgent(['status'], { home });
    expect(text.stdout).toContain(`Gateway: running, pid ${gateway.pid}, since `);
    expect(text.stdout).toContain(`listener: 127.0.0.1:${port}`);

    await stop(gateway);
    expect(existsSync(join(home, 'gateway.json'))).toBe(false);
    expect(JSON.parse((await runAgent(['status', '--json'], { home })).stdout).gateway).toEqual({ state: 'stopped' });
  });

  it('a gateway killed with -9 leaves a registration that counts as no gateway', async () => {
    const { gateway } = await startGatewayUntil(home, 'gateway started', { withinMs: 15_000 });
    running.push(gateway);
    gateway.kill('SIGKILL');
    await once(gateway, 'exit');
    expect(existsSync(join(home, 'gateway.json'))).toBe(true);
    expect(JSON.parse((await runAgent(['status', '--json'], { home })).stdout).gateway).toEqual({ state: 'stopped' });
  });

  it('on the defaults, the first lines say where the home is, that no model is configured and how to turn the listener on', async () => {
    await writeHomeFile(home, 'config.yaml', '');
    const { gateway, output } = await startGatewayUntil(home, 'gateway started', { withinMs: 15_000 });
    running.push(gateway);
    await stop(gateway);
    const lines = output();
    expect(lines).toContain(`home: ${home}`);
    expect(lines).toMatch(/model: none usable; no model is configured; add for example "model: \{provider: openai, name: gpt-4o-mini\}"/);
    expect(lines).toContain('delivery platforms: none configured');
    expect(lines).toContain('webhook listener: off; to turn it on, add "platforms: {webhook: {enabled: true}}"');
    expect(lines).toContain('cron trigger: built-in ticker');
    // The default sandbox: bwrap where it works here, else the one warning that it does not.
    expect(lines).toMatch(/sandbox: bwrap \(scripts, terminal commands and command agents\)|tools\.sandbox is auto, but /);
    expect(lines.indexOf(`home: ${home}`)).toBeLessThan(lines.indexOf('gateway started'));
  });

  it('with a model and a platform configured, in JSON logs, names both', async () => {
    const { gateway, output } = await startGatewayUntil(home, 'gateway started', {
      args: ['--log-format', 'json'],
      env: { TELEGRAM_BOT_TOKEN: '123:abc' },
      withinMs: 15_000,
    });
    running.push(gateway);
    await stop(gateway);
    const entries = output()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { message: string; level: string });
    const messages = entries.map((entry) => entry.message);
    expect(messages).toContain('model: command (node)');
    expect(messages).toContain('delivery platforms: telegram');
    expect(messages).toContain('cron trigger: built-in ticker');
  });
});
