import 'reflect-metadata';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSubscriptionRepository } from '../../src/adapters/persistence/FileSubscriptionRepository.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import type { AgentPaths } from '../../src/application/ports/Settings.js';
import { aSubscription } from '../contract/WebhookSubscriptionRepository.contract.js';

describe('FileSubscriptionRepository', () => {
  let home: string;
  let paths: AgentPaths;
  const put = (repo: FileSubscriptionRepository, name: string, overrides = {}) =>
    repo.update(name, () => ({ next: aSubscription(name, overrides), result: undefined }));
  const stored = async () => JSON.parse(await readFile(paths.webhookSubscriptionsFile, 'utf8'));

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-subscriptions-'));
    paths = agentPathsFor(home);
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('writes $AGENT_HOME/webhook_subscriptions.json as an object keyed by name, mode 0600', async () => {
    await put(new FileSubscriptionRepository(paths), 'payments');
    await put(new FileSubscriptionRepository(paths), 'logger', { deliver: 'log', deliverChatId: null });

    expect(paths.webhookSubscriptionsFile).toBe(join(home, 'webhook_subscriptions.json'));
    expect((await stat(paths.webhookSubscriptionsFile)).mode & 0o777).toBe(0o600);
    expect(await stored()).toEqual({
      payments: {
        events: ['payment_intent.succeeded'],
        prompt: 'Payment {data.object.id} succeeded',
        skills: ['billing'],
        deliver: 'telegram',
        deliver_extra: { chat_id: '-1001234' },
        secret: aSubscription('payments').secret,
        created_at: '2026-06-01T08:00:00.000Z',
        updated_at: '2026-06-01T08:00:00.000Z',
      },
      logger: expect.not.objectContaining({ deliver_extra: expect.anything() }),
    });
  });

  it('sees subscriptions another process added, changed or removed, on the next load', async () => {
    const listener = new FileSubscriptionRepository(paths);
    const cli = new FileSubscriptionRepository(paths);
    await put(cli, 'a');
    await put(cli, 'b');
    expect((await listener.load()).subscriptions.map((each) => each.name)).toEqual(['a', 'b']);

    await put(cli, 'a', { prompt: 'changed' });
    await cli.update('b', () => ({ next: null, result: undefined }));
    await put(cli, 'c');

    const { subscriptions } = await listener.load();
    expect(subscriptions.map((each) => [each.name, each.prompt])).toEqual([
      ['a', 'changed'],
      ['c', aSubscription('c').prompt],
    ]);
  });

  it('does not read the file again while it is unchanged', async () => {
    const repo = new FileSubscriptionRepository(paths);
    await put(repo, 'a');

    const first = await repo.load();

    expect(await repo.load()).toBe(first);
  });

  it('reports an entry it cannot read, and keeps it when another entry is written', async () => {
    await writeFile(
      paths.webhookSubscriptionsFile,
      JSON.stringify({ broken: { secret: 7 }, 'Bad Name': { secret: 'x' }, future: { secret: 'kept', colour: 'blue' } }),
    );
    const repo = new FileSubscriptionRepository(paths);

    expect((await repo.load()).problems).toEqual([
      'the subscription "broken" has no "secret"',
      'the subscription "Bad Name" has a name no route can have (use 1 to 64 letters, digits, "-" and "_", starting with a letter or digit)',
    ]);
    await put(repo, 'new');

    expect(await stored()).toMatchObject({
      broken: { secret: 7 },
      'Bad Name': { secret: 'x' },
      future: { secret: 'kept', colour: 'blue' },
    });
  });

  it('refuses to read or overwrite a file that is not a subscription store', async () => {
    await writeFile(paths.webhookSubscriptionsFile, '{"half": ');
    const repo = new FileSubscriptionRepository(paths);

    await expect(repo.load()).rejects.toMatchObject({ code: 'WEBHOOK.SUBSCRIPTIONS_DAMAGED' });
    await expect(put(repo, 'a')).rejects.toMatchObject({ code: 'WEBHOOK.SUBSCRIPTIONS_DAMAGED' });
    expect(await readFile(paths.webhookSubscriptionsFile, 'utf8')).toBe('{"half": ');
  });

  it('reports a home it cannot write to as WEBHOOK.SUBSCRIPTIONS_UNAVAILABLE', async () => {
    const blocked = agentPathsFor(join(home, 'file-in-the-way'));
    await writeFile(blocked.home, 'not a directory');

    await expect(put(new FileSubscriptionRepository(blocked), 'a')).rejects.toMatchObject({
      code: 'WEBHOOK.SUBSCRIPTIONS_UNAVAILABLE',
    });
  });
});
