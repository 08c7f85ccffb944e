import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { FakeDiscordServer } from '../support/platforms/FakeDiscordServer.js';
import { FakeSlackServer } from '../support/platforms/FakeSlackServer.js';
import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';
import type { FakePlatformServer } from '../support/platforms/FakePlatformServer.js';
import { webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';

const SECRET = 'lanes-secret';

/** Posts to `/webhooks/<route>` on the listener as the code host does, signed. */
async function post(port: number, route: string, n: number): Promise<number> {
  const response = await postPullRequestEvent(port, SECRET, `${route}-${n}`, { number: n }, route);
  return response.status;
}

/**
 * One slow platform must not hold every webhook route: through the built gateway, with a fake
 * Telegram that never answers, a fake Discord that answers 429 with a retry hint of a day, and a
 * healthy fake Slack, each the target of its own route. The healthy route's answers all arrive
 * while the other two platforms are still being retried.
 */
describe("agent gateway: deliveries wait in their platform's lane, not in a run slot", () => {
  let home: string;
  let gateway: ChildProcess | null = null;
  const fakes: FakePlatformServer[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    home = await makeAgentHome();
  });

  afterEach(async () => {
    if (gateway?.exitCode === null) gateway.kill('SIGKILL');
    for (const fake of fakes.splice(0)) await fake.close();
    await removeAgentHome(home);
  });

  it('delivers every answer of a healthy platform while another hangs and a third rate-limits', async () => {
    const [telegram, discord, slack] = await Promise.all([FakeTelegramServer.start(), FakeDiscordServer.start(), FakeSlackServer.start()]);
    fakes.push(telegram, discord, slack);
    telegram.failNext({ failure: 'silent', times: Infinity });
    discord.failNext({ failure: 'rate_limited', times: Infinity, retryAfterSeconds: 100_000 });
    const port = await freePort();
    const platformLines = (name: string, fake: FakePlatformServer) => [
      `  ${name}:`,
      ...Object.entries(fake.settings).map(([key, value]) => `    ${key}: "${value}"`),
    ];
    const config = [
      readFileSync(`${home}/config.yaml`, 'utf8').trimEnd(),
      ...webhookListenerLines(port, SECRET),
      '        hanging:',
      '          deliver: telegram',
      '          prompt: "Hanging {number}"',
      '        limited:',
      '          deliver: discord',
      '          prompt: "Limited {number}"',
      '        healthy:',
      '          deliver: slack',
      '          prompt: "Healthy {number}"',
      '      max_concurrent_runs: 1',
      ...platformLines('telegram', telegram),
      ...platformLines('discord', discord),
      ...platformLines('slack', slack),
      '',
    ];
    await writeHomeFile(home, 'config.yaml', config.join('\n'));
    const started = await startGatewayUntil(home, 'webhook listening on');
    gateway = started.gateway;

    for (const n of [1, 2, 3, 4, 5, 6]) {
      expect(await post(port, 'hanging', n)).toBe(202);
      expect(await post(port, 'limited', n)).toBe(202);
    }
    for (const n of [1, 2, 3, 4, 5, 6]) expect(await post(port, 'healthy', n)).toBe(202);

    // Before, the healthy answers waited for the retries of the others: minutes.
    expect(await eventually(() => slack.delivered.length === 6, 20_000)).toBe(true);
    expect(slack.delivered.map((text) => /Answer to: Healthy (\d)/.exec(text)?.[1]).sort()).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(telegram.delivered).toEqual([]);
    expect(discord.delivered).toEqual([]);
    expect(telegram.attempts + discord.attempts).toBeGreaterThan(0);
  });
});
