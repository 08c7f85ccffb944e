import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/freePort.js';
import { scratchDatabase } from '../support/postgres.js';
import { eventually } from '../support/processLiveness.js';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { ALICE, ALICE_DM, FakeSlackEvents, GENERAL, SLACK_SIGNING_SECRET } from '../support/platforms/FakeSlackEvents.js';
import { FakeSlackServer } from '../support/platforms/FakeSlackServer.js';
import { BOT_USER, FakeDiscordGateway } from '../support/platforms/FakeDiscordGateway.js';
import { FakeDiscordServer, OPS } from '../support/platforms/FakeDiscordServer.js';
import { TELEGRAM_TOKEN } from '../support/platforms/FakeTelegramServer.js';
import { FakeTelegramUpdatesServer } from '../support/platforms/FakeTelegramUpdatesServer.js';
import {
  makeAgentHome,
  makeDue,
  outcomeOf,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startGatewayUntil,
  storedJobs,
  writeHomeFile,
} from './agentCli.js';
import { answeredFlags } from './chatRows.js';
import { localModelLines } from './configLines.js';

const ADA = 777;
const STARTED = 'chat: answering on telegram';

/**
 * People write to the bot on Telegram and the built gateway answers them: long polling against a
 * local server that speaks the Bot API, a local model server speaking the OpenAI wire format.
 */
describe('chats reaching the agent through the gateway, end to end', () => {
  let home: string;
  let llm: FakeLlmServer;
  let telegram: FakeTelegramUpdatesServer;
  let gateway: ChildProcess | null = null;
  const env = { TEST_LLM_KEY: 'test-key' };

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    telegram = await FakeTelegramUpdatesServer.start();
    home = await makeAgentHome();
    await writeConfig(...receiving('telegram', { bot_token: TELEGRAM_TOKEN, base_url: telegram.url }, String(ADA)));
  });

  afterEach(async () => {
    gateway?.kill('SIGKILL');
    gateway = null;
    await telegram.close();
    await llm.close();
    await removeAgentHome(home);
  });

  /** config.yaml with the local model and `platformLines` under `platforms:`. */
  const writeConfig = (...platformLines: string[]) =>
    writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm), 'platforms:', ...platformLines, ''].join('\n'));
  /** A platform's section receiving from `allowed`, with the fake's settings. */
  const receiving = (platform: string, settings: Record<string, string>, allowed: string, extra: string[] = []) => [
    `  ${platform}:`,
    ...Object.entries(settings).map(([key, value]) => `    ${key}: "${value}"`),
    ...extra,
    '    inbound: true',
    `    allowed_users: ["${allowed}"]`,
  ];
  const start = async () => (gateway = (await startGatewayUntil(home, STARTED, { env })).gateway);
  const stop = async () => {
    const stopping = outcomeOf(gateway!);
    gateway!.kill('SIGTERM');
    expect((await stopping).code).toBe(0);
    gateway = null;
  };
  const userTexts = (index: number): string[] =>
    llm.requests[index]!.body.messages.filter((message: { role: string }) => message.role !== 'system').map(
      (message: { content: string }) => message.content,
    );

  it('answers an allowed person in the same chat with the conversation so far, a stranger never, a forum topic in its topic', async () => {
    llm.reply(replies.text('Hi Ada.'), replies.text('Still here.'), replies.text('All green.'));
    await start();

    telegram.pushMessage({ text: 'hello' });
    await telegram.waitForSent(1);
    telegram.pushMessage({ from: { id: 999, is_bot: false, first_name: 'Eve' }, chat: { id: 999, type: 'private' }, text: 'let me in' });
    telegram.pushMessage({ text: 'are you there?' });
    await telegram.waitForSent(2);
    telegram.pushMessage({
      chat: { id: -100555, type: 'supergroup', title: 'Ops', is_forum: true },
      is_topic_message: true,
      message_thread_id: 42,
      text: '@delivery_bot status?',
    });
    await telegram.waitForSent(3);

    expect(telegram.sent.map((body) => [body.chat_id, body.message_thread_id ?? null, body.text])).toEqual([
      [String(ADA), null, 'Hi Ada.'],
      [String(ADA), null, 'Still here.'],
      ['-100555', 42, 'All green.'],
    ]);
    // The stranger cost nothing; the second turn knew the first.
    expect(llm.requests).toHaveLength(3);
    expect(userTexts(1).slice(-3)).toEqual(['hello', 'Hi Ada.', expect.stringContaining('are you there?')]);
    expect(userTexts(2).join('\n')).not.toContain('hello');
    expect(telegram.chatActions).toContainEqual(expect.objectContaining({ chat_id: String(ADA), action: 'typing' }));
  });

  it('makes a job from a forum topic whose runs, fired by the gateway, arrive in that topic and stay out of the conversation; a restart owes nothing', async () => {
    const topic = {
      chat: { id: -100555, type: 'supergroup', title: 'Ops', is_forum: true },
      is_topic_message: true,
      message_thread_id: 42,
    };
    llm.reply(
      replies.toolCalls({
        name: 'cronjob',
        arguments: { action: 'create', schedule: 'every 1h', prompt: 'Report the build', name: 'build-report' },
      }),
      replies.text('Created build-report.'),
    );
    await start();

    telegram.pushMessage({ ...topic, text: '@delivery_bot report the build every hour' });
    await telegram.waitForSent(1);

    const [job] = storedJobs(home);
    expect(job).toMatchObject({
      name: 'build-report',
      deliver: 'origin',
      origin: { platform: 'telegram', chat_id: '-100555', thread_id: '42', user_id: String(ADA), user_name: 'ada' },
    });
    const shown = await runAgent(['cron', 'show', 'build-report', '--no-tick'], { home, env });
    expect(shown.stdout).toMatch(/Origin: +telegram chat -100555, thread 42, by ada \(777\)/);

    // Due now: the gateway fires it, and its answer goes to the topic the job came from.
    llm.reply(replies.text('The build is green.'));
    await makeDue(home, job!.id);
    await telegram.waitForSent(2);
    expect(telegram.sent[1]).toMatchObject({
      chat_id: '-100555',
      message_thread_id: 42,
      text: expect.stringContaining('The build is green.'),
    });

    await stop();
    telegram.pushMessage({ ...topic, text: '@delivery_bot anything new?' });
    llm.reply(replies.text('Nothing new.'));
    await start();
    await telegram.waitForSent(3);

    expect(telegram.sent.map((body) => body.text)).toEqual([
      'Created build-report.',
      expect.stringContaining('The build is green.'),
      'Nothing new.',
    ]);
    const last = userTexts(llm.requests.length - 1).join('\n');
    expect(last).toContain('report the build every hour');
    expect(last).not.toContain('The build is green.');
  });

  it('records bot-chat:<profile> as the origin of a job made in agent chat --profile, and none on the command line', async () => {
    const profile = `${home}/profiles/ops`;
    await writeHomeFile(home, 'profiles/ops/config.yaml', ['timezone: UTC', ...localModelLines(llm), ''].join('\n'));
    llm.reply(
      replies.toolCalls({
        name: 'cronjob',
        arguments: { action: 'create', schedule: 'every 1h', prompt: 'Watch the queue', name: 'queue' },
      }),
      replies.text('Done.'),
    );

    const chat = await runAgent(['chat', '--profile', 'ops', '-q', 'watch the queue hourly', '--no-tick'], { home, env });
    const made = await runAgent(['cron', 'create', 'every 2h', 'Tidy up', '--name', 'tidy', '--no-tick'], { home: profile, env });
    const shown = await runAgent(['cron', 'show', 'queue', '--no-tick'], { home: profile, env });
    const plain = await runAgent(['cron', 'show', 'tidy', '--no-tick'], { home: profile, env });

    expect([chat.code, made.code]).toEqual([0, 0]);
    expect(storedJobs(profile).map((job) => [job.name, job.origin])).toEqual([
      ['queue', { platform: 'bot-chat', chat_id: 'ops', thread_id: null }],
      ['tidy', null],
    ]);
    expect(shown.stdout).toMatch(/Origin: +the bot-chat of profile "ops"/);
    expect(plain.stdout).toMatch(/Origin: +none \(made on the command line\)/);
  });

  it('refuses to start when inbound is on and nobody may talk to the bot', async () => {
    await writeHomeFile(
      home,
      'config.yaml',
      ['platforms:', '  telegram:', `    bot_token: "${TELEGRAM_TOKEN}"`, '    inbound: true', ''].join('\n'),
    );

    const run = await runAgent(['gateway'], { home, env });
    const check = await runAgent(['config', 'check'], { home, env });

    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('platforms.telegram.inbound is on but nobody may talk to the bot');
    expect(run.stderr).toContain('allow_all_users: true');
    expect(check.code).toBe(1);
    expect(check.stdout + check.stderr).toContain('platforms.telegram.inbound is on but nobody may talk to the bot');
    // Allowing everyone on purpose is allowed.
    const open = await runAgent(['config', 'check'], { home, env: { ...env, TELEGRAM_ALLOW_ALL_USERS: 'true' } });
    expect(open.stdout + open.stderr).not.toContain('nobody may talk to the bot');
  });

  it('answers Slack direct messages and mentions through the Events API on the gateway listener, a mention in a thread under it', async () => {
    const slack = await FakeSlackServer.start();
    // The direct-message channel Alice wrote from exists, as it does on Slack once she wrote to the bot.
    slack.channels.push({ id: ALICE_DM, name: 'alice' });
    const port = await freePort();
    try {
      await writeConfig(
        ...['  webhook:', '    enabled: true', '    extra:', '      host: 127.0.0.1', `      port: ${port}`],
        ...receiving('slack', slack.settings, ALICE, [`    signing_secret: "${SLACK_SIGNING_SECRET}"`]),
      );
      llm.reply(replies.text('Hello from the agent.'), replies.text('Deploy went fine.'));
      gateway = (await startGatewayUntil(home, 'chat: answering on slack', { env })).gateway;
      const events = new FakeSlackEvents(`http://127.0.0.1:${port}`, { now: () => new Date() });

      const direct = await events.post(events.envelope(events.directMessage('hi there')));
      expect(direct.status).toBe(200);
      const mention = events.mention('<@U0BOT> how did the deploy go?');
      expect((await events.post(events.envelope(mention))).status).toBe(200);
      const forged = await events.post(events.envelope(events.directMessage('forged')), { secret: 'not-the-secret' });

      const answered = await eventually(() => slack.sends.length >= 2, 10_000);
      expect(answered).toBe(true);
      expect(forged.status).toBe(401);
      const sent = slack.sends.map((send) => send.body as Record<string, unknown>);
      expect(sent).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ channel: ALICE_DM, text: 'Hello from the agent.' }),
          expect.objectContaining({ channel: GENERAL, thread_ts: mention.ts, text: 'Deploy went fine.' }),
        ]),
      );
      expect(llm.requests).toHaveLength(2);
    } finally {
      await slack.close();
    }
  });

  it('answers a Discord mention over the Gateway websocket in its channel, showing typing meanwhile', async () => {
    const rest = await FakeDiscordServer.start();
    const discordGateway = await FakeDiscordGateway.start();
    rest.gatewayUrl = discordGateway.url;
    const bob = { id: '200000000000000002', username: 'bob', global_name: null };
    try {
      await writeConfig(...receiving('discord', rest.settings, bob.id));
      llm.reply(replies.text('The nightly failed on the lint step.'));
      gateway = (await startGatewayUntil(home, 'chat: answering on discord', { env })).gateway;

      discordGateway.messageCreate({
        id: '400000000000000101',
        channel_id: OPS.general,
        guild_id: OPS.guild,
        author: bob,
        member: { roles: [] },
        content: `<@${BOT_USER.id}> what broke in the nightly build?`,
        mentions: [BOT_USER],
      });

      expect(await eventually(() => rest.sends.length >= 1, 10_000)).toBe(true);
      expect(rest.sends[0]!.path).toContain(`/channels/${OPS.general}/messages`);
      expect(rest.sends[0]!.body).toMatchObject({ content: 'The nightly failed on the lint step.' });
      expect(rest.requests.some((request) => request.path.endsWith(`/channels/${OPS.general}/typing`))).toBe(true);
      expect(userTexts(0).at(-1)).toContain('what broke in the nightly build?');
      expect(userTexts(0).at(-1)).not.toContain(BOT_USER.id);
    } finally {
      await discordGateway.close();
      await rest.close();
    }
  });

  it('keeps the chat in PostgreSQL when the gateway runs on it: history across a restart, nothing owed twice, nothing under chat/', async () => {
    const scratch = await scratchDatabase();
    const onDatabase = { ...env, AGENT_DATABASE_URL: scratch.url };
    try {
      llm.reply(replies.text('Noted: the deploy is at 5.'), replies.text('At 5, as you said.'));
      gateway = (await startGatewayUntil(home, STARTED, { env: onDatabase })).gateway;
      telegram.pushMessage({ text: 'the deploy is at 5' });
      await telegram.waitForSent(1);
      const stopping = outcomeOf(gateway);
      gateway.kill('SIGTERM');
      expect((await stopping).code).toBe(0);

      telegram.pushMessage({ text: 'when is the deploy?' });
      gateway = (await startGatewayUntil(home, STARTED, { env: onDatabase })).gateway;
      await telegram.waitForSent(2);

      expect(telegram.sent.map((body) => body.text)).toEqual(['Noted: the deploy is at 5.', 'At 5, as you said.']);
      expect(userTexts(1).join('\n')).toContain('the deploy is at 5');
      const database = await scratch.open();
      try {
        expect(await answeredFlags(database)).toEqual([true, true]);
      } finally {
        await database.close();
      }
      expect(existsSync(join(home, 'chat'))).toBe(false);
    } finally {
      gateway?.kill('SIGKILL');
      gateway = null;
      await scratch.drop();
    }
  });
});
