import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { FakePortal } from '../support/fakePortal.js';
import { FakeTelegramServer, TELEGRAM_TOKEN } from '../support/platforms/FakeTelegramServer.js';
import { postPullRequestEvent } from './signedDelivery.js';
import { invocations, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, type AgentRun } from './agentCli.js';

/**
 * Secrets stay where the operator put them: after a tour of every command, a webhook event, a
 * managed fire and deliveries, no file under the home but config.yaml and
 * webhook_subscriptions.json holds any of them, and nothing the commands or the gateway printed
 * does either.
 */
describe('secrets, after a tour of the built executable', () => {
  const ROUTE_SECRET = 'canary-route-secret-7a1';
  const SUBSCRIPTION_SECRET = 'canary-subscription-secret-9c3';
  const CONFIG_SECRETS = [
    TELEGRAM_TOKEN,
    'canary-slack-token-in-config',
    'canary-global-webhook-secret',
    ROUTE_SECRET,
    'canary-metrics-token',
    'canary-provider-key-in-config',
  ];
  const ENV_SECRETS: Record<string, string> = {
    OPENAI_API_KEY: 'canary-openai-key-in-env',
    DISCORD_BOT_TOKEN: 'canary-discord-token-in-env',
    GH_TOKEN: 'canary-gh-token-in-env',
    AGENT_DASHBOARD_TOKEN: 'canary-dashboard-token-in-env',
  };

  let home: string;
  let telegram: FakeTelegramServer;
  let portal: FakePortal;
  let gateway: ChildProcess | null = null;

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    telegram = await FakeTelegramServer.start();
    portal = await FakePortal.start();
  });

  afterEach(async () => {
    if (gateway?.exitCode === null) gateway.kill('SIGKILL');
    await telegram.close();
    await portal.close();
    await removeAgentHome(home);
  });

  /** Every file under `directory`, with its path. */
  async function filesUnder(directory: string): Promise<string[]> {
    const entries = await readdir(directory, { withFileTypes: true, recursive: true });
    return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  }

  it('are written nowhere under the home but config.yaml and webhook_subscriptions.json, and never printed', async () => {
    const port = await freePort();
    const managed = portal.managedSettings(`http://127.0.0.1:${port}`);
    home = await makeAgentHome({
      extraConfig: [
        'providers:',
        '  spare:',
        '    type: openai',
        '    base_url: http://127.0.0.1:9/v1',
        '    api_keys: [canary-provider-key-in-config]',
        'cron:',
        '  provider: managed',
        '  managed:',
        ...Object.entries(managed).map(([key, value]) => `    ${key}: ${value}`),
        'platforms:',
        '  telegram:',
        ...Object.entries(telegram.settings).map(([key, value]) => `    ${key}: "${value}"`),
        '  slack:',
        '    bot_token: canary-slack-token-in-config',
        '  webhook:',
        '    enabled: true',
        '    extra:',
        '      host: 127.0.0.1',
        `      port: ${port}`,
        '      secret: canary-global-webhook-secret',
        '      metrics: true',
        '      metrics_token: canary-metrics-token',
        '      routes:',
        '        github:',
        `          secret: ${ROUTE_SECRET}`,
        '          prompt: "Review PR {number}"',
        '          deliver: telegram',
      ].join('\n'),
    });
    const env = { ...ENV_SECRETS, AGENT_CRON_SCHEDULER_TOKEN: portal.schedulerToken };
    const printed: AgentRun[] = [];
    const agent = async (...args: string[]) => {
      const run = await runAgent(args, { home, env });
      printed.push(run);
      return run;
    };

    // The tour, without a gateway.
    expect(await agent('cron', 'create', 'every 1h', 'Summarise the day', '--name', 'digest', '--deliver', 'telegram')).toMatchObject({
      code: 0,
    });
    expect(await agent('cron', 'create', 'every 2h', 'Fired by the portal', '--name', 'fired', '--deliver', 'local')).toMatchObject({
      code: 0,
    });
    for (const args of [
      ['cron', 'list'],
      ['cron', 'list', '--json'],
      ['cron', 'show', 'digest'],
      ['cron', 'edit', 'digest', '--prompt', 'Summarise the week'],
    ]) {
      expect(await agent(...args)).toMatchObject({ code: 0 });
    }
    for (const args of [
      ['cron', 'pause', 'digest'],
      ['cron', 'resume', 'digest'],
      ['cron', 'run', 'digest'],
      ['cron', 'runs', 'digest'],
      ['cron', 'tick'],
    ]) {
      expect(await agent(...args)).toMatchObject({ code: 0 });
    }
    const subscribed = await runAgent(['webhook', 'subscribe', 'payments', '--secret', SUBSCRIPTION_SECRET, '--deliver', 'log'], {
      home,
      env,
    });
    expect(subscribed).toMatchObject({ code: 0 });
    for (const args of [
      ['webhook', 'list'],
      ['send', 'telegram', 'Hello'],
      ['platforms'],
      ['channels', 'list'],
      ['config', 'check'],
      ['status'],
      ['status', '--json'],
    ]) {
      expect(await agent(...args)).toMatchObject({ code: 0 });
    }

    // The gateway: a signed event delivered to telegram, a fire, a test event, a scrape.
    const started = await startGatewayUntil(home, 'webhook listening on', { env });
    gateway = started.gateway;
    expect((await postPullRequestEvent(port, ROUTE_SECRET, 'delivery-canary', { action: 'opened', number: 5 })).status).toBe(202);
    const fired = (await agent('cron', 'list', '--json')).stdout;
    const firedId = (JSON.parse(fired) as Array<{ id: string; name: string }>).find((job) => job.name === 'fired')!.id;
    await portal.until(() => portal.armed.has(firedId));
    expect((await portal.fireArmed(firedId)).status).toBe(202);
    expect(await agent('webhook', 'test', 'payments')).toMatchObject({ code: 0 });
    const scrape = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: 'Bearer canary-metrics-token' } });
    expect(scrape.status).toBe(200);
    expect(await eventually(() => telegram.delivered.some((text) => text.includes('Answer to: Review PR 5')), 15_000)).toBe(true);
    expect(await eventually(() => invocations(home).includes('Fired by the portal'), 15_000)).toBe(true);
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');

    const canaries = [...CONFIG_SECRETS, ...Object.values(ENV_SECRETS), portal.schedulerToken, SUBSCRIPTION_SECRET];
    const whereOperatorWroteThem = new Set(['config.yaml', 'webhook_subscriptions.json']);
    const leaks: string[] = [];
    for (const file of await filesUnder(home)) {
      const name = relative(home, file);
      if (whereOperatorWroteThem.has(name)) continue;
      const content = (await readFile(file)).toString('latin1');
      for (const canary of canaries) if (content.includes(canary)) leaks.push(`${name} holds ${canary}`);
    }
    const output = [...printed.map((run) => run.stdout + run.stderr), started.output()].join('\n');
    for (const canary of canaries) if (output.includes(canary)) leaks.push(`the output shows ${canary}`);
    expect(leaks).toEqual([]);
    expect(telegram.delivered.length).toBeGreaterThanOrEqual(3);
  });
});
