import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';
import { createJob, inAScratchHomeEachTest, runAgent, writeHomeFile, type AgentRun } from './agentCli.js';

/** Every key of a JSON value, at any depth, with where it is. */
function keysOf(value: unknown, path = '$'): Array<{ path: string; key: string }> {
  if (Array.isArray(value)) return value.flatMap((item, index) => keysOf(item, `${path}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [{ path, key }, ...keysOf(inner, `${path}.${key}`)]);
}

/** The keys of a command's JSON output that are not snake_case. */
function notSnakeCase(run: AgentRun): string[] {
  expect(run.code).toBe(0);
  return keysOf(JSON.parse(run.stdout))
    .filter(({ key }) => !/^[a-z0-9]+(_[a-z0-9]+)*$/.test(key))
    .map(({ path, key }) => `${path}.${key}`);
}

/**
 * Every command with --json, through the built executable, on a home with something in each part
 * of the output (a gateway registration, due and failed jobs, runs, a confirmed send, channels, a
 * webhook route): no key anywhere has an upper-case letter.
 */
describe('--json output', () => {
  let home: string;
  let telegram: FakeTelegramServer;

  inAScratchHomeEachTest((fresh) => (home = fresh));
  beforeEach(async () => (telegram = await FakeTelegramServer.start()));
  afterEach(() => telegram.close());

  /** Telegram configured through the environment (`TELEGRAM_BOT_TOKEN` …), at the fake server. */
  const telegramEnv = () =>
    Object.fromEntries(Object.entries(telegram.settings).map(([key, value]) => [`TELEGRAM_${key.toUpperCase()}`, value]));
  const agent = (...args: string[]) => runAgent(args, { home, env: telegramEnv() });

  async function homeWithSomethingEverywhere(): Promise<{ ran: string }> {
    await writeHomeFile(
      home,
      'config.yaml',
      [
        readFileSync(join(home, 'config.yaml'), 'utf8'),
        'platforms:',
        '  telegram:',
        '    channels:',
        '      ops: "-1001234567890"',
        '',
      ].join('\n'),
    );
    await writeHomeFile(
      home,
      'gateway.json',
      JSON.stringify({
        pid: process.pid,
        host: 'another-host',
        started_at: '2026-06-01T08:00:00.000Z',
        listener: '127.0.0.1:8644',
        provider: 'built-in',
      }),
    );
    const ran = await createJob(home, ['every 1h', 'Report', '--name', 'report', '--deliver', 'local', '--skill', 'tone']);
    await createJob(home, ['2099-01-01T09:00', 'Once', '--name', 'once', '--deliver', 'local']);
    const failing = await createJob(home, ['0 9 * * 1-5', 'Notify', '--name', 'notify', '--deliver', 'discord:123456789012345678']);
    await runAgent(['cron', 'run', ran, '--no-tick'], { home });
    await runAgent(['cron', 'run', failing, '--no-tick'], { home });
    expect(
      (await agent('webhook', 'subscribe', 'pushes', '--events', 'push', '--deliver', 'telegram', '--deliver-chat-id', '-1001234567890'))
        .code,
    ).toBe(0);
    return { ran };
  }

  it('uses snake_case keys in every command, and the renamed keys carry the values', async () => {
    const { ran } = await homeWithSomethingEverywhere();

    const runs = {
      'cron list': await agent('cron', 'list', '--json', '--no-tick'),
      'cron show': await agent('cron', 'show', ran, '--json', '--no-tick'),
      'cron runs': await agent('cron', 'runs', ran, '--json', '--no-tick'),
      status: await agent('status', '--json'),
      send: await agent('send', 'telegram:-1001234567890:17', 'hello', '--json'),
      platforms: await agent('platforms', '--json'),
      'channels list': await agent('channels', 'list', '--json'),
      'webhook list': await agent('webhook', 'list', '--json'),
      'webhook runs': await agent('webhook', 'runs', '--json'),
    };
    const configCheck = await agent('config', 'check', '--json');

    const commands = Object.entries(runs);
    expect(Object.fromEntries(commands.map(([command, run]) => [command, notSnakeCase(run)]))).toEqual(
      Object.fromEntries(commands.map(([command]) => [command, []])),
    );
    // config check fails here (the discord job cannot deliver) but its JSON is printed all the same.
    expect(keysOf(JSON.parse(configCheck.stdout)).filter(({ key }) => /[A-Z]/.test(key))).toEqual([]);

    const status = JSON.parse(runs.status.stdout);
    expect(status).toMatchObject({
      gateway: { state: 'unknown', gateway: { started_at: '2026-06-01T08:00:00.000Z', listener: '127.0.0.1:8644' } },
      next_jobs: expect.arrayContaining([expect.objectContaining({ name: 'report', next_run_at: expect.stringMatching(/Z$/) })]),
      failed_jobs: [expect.objectContaining({ name: 'notify', last_status: 'blocked_config', last_run_at: expect.stringMatching(/Z$/) })],
      webhook_events_waiting: 0,
      unreadable_jobs: 0,
    });
    expect(JSON.parse(runs.send.stdout)).toEqual([
      {
        target: 'telegram:-1001234567890:17',
        receipt: { platform: 'telegram', chat_id: '-1001234567890', thread_id: '17', message_ids: [expect.any(String)] },
      },
    ]);
    expect(JSON.parse(runs.platforms.stdout)).toContainEqual({
      platform: 'telegram',
      configured: true,
      missing: [],
      home_channel: expect.anything(),
    });
    expect(JSON.parse(runs['channels list'].stdout)).toEqual({
      updated_at: null,
      channels: [{ platform: 'telegram', id: '-1001234567890', name: 'ops', source: 'config' }],
    });
    expect(JSON.parse(runs['webhook list'].stdout)).toEqual([
      expect.objectContaining({
        name: 'pushes',
        allow_private_networks: false,
        deliver: 'telegram',
        deliver_extra: { chat_id: '-1001234567890' },
      }),
    ]);
  });
});
