import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { ALICE, ALICE_DM, FakeSlackEvents, SLACK_SIGNING_SECRET } from '../support/platforms/FakeSlackEvents.js';
import { FakeSlackServer } from '../support/platforms/FakeSlackServer.js';
import { BOT_USER, FakeDiscordGateway } from '../support/platforms/FakeDiscordGateway.js';
import { FakeDiscordServer, OPS } from '../support/platforms/FakeDiscordServer.js';
import { TELEGRAM_TOKEN } from '../support/platforms/FakeTelegramServer.js';
import { FakeTelegramUpdatesServer } from '../support/platforms/FakeTelegramUpdatesServer.js';
import { parsePrometheusText, sampleValue } from '../support/prometheusText.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';
import { localModelLines } from './configLines.js';

const ADA = '777';
const BOB = { id: '200000000000000002', username: 'bob', global_name: null };
const METRICS_TOKEN = 'scrape-me';

/**
 * Slack, Telegram and Discord inbound on one built gateway, Slack down when it starts: the other
 * two receive and answer all the same, Slack's events are refused with 503 and Retry-After while
 * its receiver is down, and once Slack is back its receiver comes up on its own; `agent status`
 * and `/metrics` say which receivers are up throughout.
 */
describe('one chat platform down leaves the others receiving, end to end', () => {
  let home: string;
  let llm: FakeLlmServer;
  let slack: FakeSlackServer;
  let telegram: FakeTelegramUpdatesServer;
  let discordRest: FakeDiscordServer;
  let discordGateway: FakeDiscordGateway;
  let gateway: ChildProcess | null = null;
  const env = { TEST_LLM_KEY: 'test-key' };

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    slack = await FakeSlackServer.start();
    slack.channels.push({ id: ALICE_DM, name: 'alice' });
    telegram = await FakeTelegramUpdatesServer.start();
    discordRest = await FakeDiscordServer.start();
    discordGateway = await FakeDiscordGateway.start();
    discordRest.gatewayUrl = discordGateway.url;
    home = await makeAgentHome();
  });

  afterEach(async () => {
    if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
      gateway.kill('SIGKILL');
      await once(gateway, 'exit');
    }
    gateway = null;
    await Promise.all([slack.close(), telegram.close(), discordGateway.close(), discordRest.close(), llm.close()]);
    await removeAgentHome(home);
  });

  const receiving = (platform: string, settings: Record<string, string>, allowed: string, extra: string[] = []) => [
    `  ${platform}:`,
    ...Object.entries(settings).map(([key, value]) => `    ${key}: "${value}"`),
    ...extra,
    '    inbound: true',
    `    allowed_users: ["${allowed}"]`,
  ];

  /** Each receiver's state as `agent status --json` reads it. */
  const receiverStates = async (): Promise<Record<string, string>> => {
    const run = await runAgent(['status', '--json'], { home, env });
    expect(run.code).toBe(0);
    const status = JSON.parse(run.stdout);
    const receivers = (status.gateway.gateway?.chat_receivers ?? []) as Array<{ platform: string; state: string }>;
    return Object.fromEntries(receivers.map((receiver) => [receiver.platform, receiver.state]));
  };

  const receiverGauge = async (port: number, platform: string): Promise<number | undefined> => {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    return sampleValue(parsePrometheusText(await response.text()), 'agent_chat_receiver_up', { platform });
  };

  it('answers on Telegram and Discord while Slack cannot start, refuses Slack events with 503 and Retry-After, and receives on Slack once it is back', async () => {
    const port = await freePort();
    await writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        ...localModelLines(llm),
        'platforms:',
        ...[
          '  webhook:',
          '    enabled: true',
          '    extra:',
          '      host: 127.0.0.1',
          `      port: ${port}`,
          '      metrics: true',
          `      metrics_token: ${METRICS_TOKEN}`,
        ],
        ...receiving('slack', slack.settings, ALICE, [`    signing_secret: "${SLACK_SIGNING_SECRET}"`]),
        ...receiving('telegram', { bot_token: TELEGRAM_TOKEN, base_url: telegram.url }, ADA),
        ...receiving('discord', discordRest.settings, BOB.id),
        '',
      ].join('\n'),
    );
    slack.authTestUnavailable = true;

    const started = await startGatewayUntil(home, 'gateway started', { env, withinMs: 20_000 });
    gateway = started.gateway;
    expect(await eventually(() => started.output().includes('chat: answering on'), 10_000)).toBe(true);

    // Telegram and Discord receive and answer.
    llm.reply(replies.text('Hello Ada.'));
    telegram.pushMessage({ text: 'hello' });
    await telegram.waitForSent(1);
    llm.reply(replies.text('The nightly is green.'));
    discordGateway.messageCreate({
      id: '400000000000000101',
      channel_id: OPS.general,
      guild_id: OPS.guild,
      author: BOB,
      member: { roles: [] },
      content: `<@${BOT_USER.id}> how is the nightly?`,
      mentions: [BOT_USER],
    });
    expect(await eventually(() => discordRest.sends.length >= 1, 10_000)).toBe(true);
    expect(telegram.sent[0]).toMatchObject({ chat_id: ADA, text: 'Hello Ada.' });
    expect(discordRest.sends[0]!.body).toMatchObject({ content: 'The nightly is green.' });

    // Slack's receiver is down: its events are refused, to be sent again later.
    const events = new FakeSlackEvents(`http://127.0.0.1:${port}`, { now: () => new Date() });
    const refused = await events.post(events.envelope(events.directMessage('are you there?')));
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(await receiverStates()).toEqual({ slack: 'down', telegram: 'up', discord: 'up' });
    expect(await receiverGauge(port, 'slack')).toBe(0);
    expect(await receiverGauge(port, 'telegram')).toBe(1);
    expect(await receiverGauge(port, 'discord')).toBe(1);
    const text = await runAgent(['status'], { home, env });
    expect(text.stdout).toMatch(/chat receiver slack: down since .* — .*auth\.test failed \(HTTP 503/);
    expect(text.stdout).toMatch(/chat receiver telegram: up since/);

    // Slack is back: the receiver comes up by itself, at most 60 s after.
    // It kept trying while down (the second try comes within about a second of the first).
    expect(await eventually(() => slack.callsTo('auth.test').length > 1, 20_000)).toBe(true);
    slack.authTestUnavailable = false;
    expect(await eventually(() => started.output().includes('chat: the slack receiver is up again'), 70_000)).toBe(true);
    expect(await receiverStates()).toEqual({ slack: 'up', telegram: 'up', discord: 'up' });
    expect(await receiverGauge(port, 'slack')).toBe(1);

    llm.reply(replies.text('Yes, here.'));
    const accepted = await events.post(events.envelope(events.directMessage('are you there now?')));
    expect(accepted.status).toBe(200);
    expect(await eventually(() => slack.sends.length >= 1, 10_000)).toBe(true);
    expect(slack.sends[0]!.body).toMatchObject({ channel: ALICE_DM, text: 'Yes, here.' });

    // One line when Slack's receiver went down, one when it came back; none for each try.
    const output = started.output();
    expect(output.match(/chat: the slack receiver cannot start/g)).toHaveLength(1);
    expect(output.match(/chat: the slack receiver is up again/g)).toHaveLength(1);
  }, 120_000);
});
