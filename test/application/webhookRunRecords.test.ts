import { jest } from '@jest/globals';
import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import { RUNNING_RECORD_AFTER_MS } from '../../src/domain/runs/RunRecord.js';
import { SystemTimer } from '../../src/adapters/system/SystemTimer.js';
import { WebhookWorker } from '../../src/adapters/webhook/WebhookWorker.js';
import type { PlatformTarget } from '../../src/domain/DeliveryTarget.js';
import type { WebhookRoute } from '../../src/domain/webhook/WebhookRoute.js';
import { WEBHOOK_PREAMBLE } from '../../src/domain/webhook/webhookRun.js';
import type { WebhookRunRecord } from '../../src/domain/webhook/webhookRunRecord.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';
import { aRunRecord } from '../contract/WebhookRunRecords.contract.js';
import { FakeAgentRunner } from '../support/fakes/FakeAgentRunner.js';
import { FakeMemoryStore, FakeSkillLibrary } from '../support/fakes/FakeContextFiles.js';
import { FakeWebhookRoutes, aRoute } from '../support/fakes/FakeWebhookRoutes.js';
import { InMemoryWebhookInbox } from '../support/fakes/InMemoryWebhookInbox.js';
import { InMemoryWebhookRunRecords } from '../support/fakes/InMemoryWebhookRunRecords.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { ManualTimer } from '../support/fakes/ManualTimer.js';
import { InMemoryRunLedger } from '../support/fakes/InMemoryRunLedger.js';
import { RecordingDeliveryChannel } from '../support/fakes/RecordingDeliveryChannel.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingRepoCommenter } from '../support/fakes/RecordingRepoCommenter.js';
import { eventually } from '../support/processLiveness.js';
import { WEBHOOK_WORKER_SETTINGS } from '../support/webhookWorkerSettings.js';
import { webhookRunPipeline } from '../support/runPipeline.js';

const SETTINGS = WEBHOOK_WORKER_SETTINGS;

/** A delivery channel that notes, at each delivery, what the run's record said at that moment. */
class WatchingChannel extends RecordingDeliveryChannel {
  readonly recordAtDelivery: Array<WebhookRunRecord | null> = [];
  /** When set, deliveries never finish: the gateway "crashes" during them. */
  hang = false;

  constructor(private readonly records: InMemoryWebhookRunRecords) {
    super(['telegram']);
  }

  override async deliver(target: PlatformTarget, text: string) {
    this.recordAtDelivery.push(await this.records.find('alerts', 'event-1'));
    if (this.hang) return new Promise<never>(() => undefined);
    return super.deliver(target, text);
  }
}

/** One gateway process's worker, on storage (inbox, records) that outlives it. */
function gateway(
  storage: { inbox: InMemoryWebhookInbox; records: InMemoryWebhookRunRecords },
  routes: WebhookRoute[] = [aRoute('alerts', { deliver: 'telegram', prompt: 'Alert: {labels.alertname}' })],
) {
  const agent = new FakeAgentRunner();
  const channel = new WatchingChannel(storage.records);
  const log = new RecordingLogger();
  const timer = new ManualTimer();
  const ledger = new InMemoryRunLedger(undefined, () => new Date('2026-06-01T08:00:05Z'));
  const execution = webhookRunPipeline({
    routes: new FakeWebhookRoutes(routes),
    agent: agent,
    memory: new FakeMemoryStore(),
    skills: new FakeSkillLibrary({}),
    channel: channel,
    commenter: new RecordingRepoCommenter(),
    settings: SETTINGS,
    log: log,
    records: storage.records,
    clock: new ManualClock('2026-06-01T08:00:05Z'),
    timer: timer,
    ledger: ledger,
  }).execution;
  return {
    agent,
    channel,
    log,
    timer,
    ledger,
    execution,
    worker: new WebhookWorker(storage.inbox, execution, SETTINGS, log, new SystemTimer()),
  };
}

const alert = (n = 1) => anEvent(n, { route: 'alerts', event: 'alert', payload: { labels: { alertname: 'DiskFull' } } });

describe('the record of a webhook run', () => {
  it('holds the route, event, delivery id, rendered prompt, answer and delivery outcome', async () => {
    const records = new InMemoryWebhookRunRecords();
    const g = gateway({ inbox: new InMemoryWebhookInbox(), records });
    g.agent.reply('Free some space on db1.');

    await g.execution.run(alert());

    expect(await records.find('alerts', 'event-1')).toEqual({
      eventId: 'event-1',
      route: 'alerts',
      event: 'alert',
      deliveryId: 'delivery-1',
      receivedAt: '2026-06-01T08:00:00.000Z',
      startedAt: '2026-06-01T08:00:05.000Z',
      outcome: 'delivered',
      deliveredTo: 'telegram',
      prompt: 'Alert: DiskFull',
      answer: 'Free some space on db1.',
      error: null,
    });
    expect(g.agent.requests[0]!.context.task).toBe(`${WEBHOOK_PREAMBLE}\n\nAlert: DiskFull`);
    expect(await g.ledger.list({ kind: 'webhook', subject: 'alerts', limit: 5 })).toEqual([
      {
        id: 'event-1',
        kind: 'webhook',
        subject: 'alerts',
        name: 'alerts',
        slot: null,
        event: 'alert',
        delivery_id: 'delivery-1',
        started_at: '2026-06-01T08:00:05.000Z',
        finished_at: '2026-06-01T08:00:05.000Z',
        status: 'ok',
        model: expect.any(String),
        prompt: 'Alert: DiskFull',
        answer: 'Free some space on db1.',
        error: null,
        deliveries: [{ target: 'telegram', outcome: 'delivered', message_ids: ['1'], error: null }],
      },
    ]);
  });

  it('has the answer recorded before the answer is delivered', async () => {
    const records = new InMemoryWebhookRunRecords();
    const g = gateway({ inbox: new InMemoryWebhookInbox(), records });
    g.agent.reply('Free some space on db1.');

    await g.execution.run(alert());

    expect(g.channel.recordAtDelivery).toEqual([expect.objectContaining({ outcome: 'answered', answer: 'Free some space on db1.' })]);
    // A run that answers at once is written with its answer, then with its delivery's outcome.
    expect(records.saves.map((record) => record.outcome)).toEqual(['answered', 'delivered']);
    // Only the answer waits for the disk: it is what a restart after a power cut must find.
    expect(records.synced).toEqual([true, false]);
  });

  it('writes a run answered and delivered at once to the run ledger once, with its outcome', async () => {
    const records = new InMemoryWebhookRunRecords();
    const g = gateway({ inbox: new InMemoryWebhookInbox(), records });
    const saves = jest.spyOn(g.ledger, 'save');
    g.agent.reply('Free some space on db1.');

    await g.execution.run(alert());

    expect(saves.mock.calls.map(([run]) => run.status)).toEqual(['ok']);
  });

  it('shows an answer whose delivery waits more than a second in the run ledger, as running', async () => {
    const records = new InMemoryWebhookRunRecords();
    const g = gateway({ inbox: new InMemoryWebhookInbox(), records });
    g.agent.reply('Free some space on db1.');
    const { pending } = await g.execution.answer(alert());

    g.timer.advance(RUNNING_RECORD_AFTER_MS - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await g.ledger.get('event-1')).toBeNull();
    g.timer.advance(1);
    for (let turn = 0; turn < 100 && (await g.ledger.get('event-1')) === null; turn += 1)
      await new Promise((resolve) => setImmediate(resolve));
    expect(await g.ledger.get('event-1')).toMatchObject({ status: 'running', answer: 'Free some space on db1.', finished_at: null });

    await g.execution.deliverAnswer(pending!);
    expect(await g.ledger.get('event-1')).toMatchObject({ status: 'ok', deliveries: [expect.objectContaining({ outcome: 'delivered' })] });
  });

  it('shows a run still going after a second as running, with its prompt', async () => {
    const records = new InMemoryWebhookRunRecords();
    const g = gateway({ inbox: new InMemoryWebhookInbox(), records });
    let answer!: (text: string) => void;
    g.agent.reply(() => new Promise<string>((resolve) => (answer = resolve)));

    const run = g.execution.run(alert());
    await eventually(() => g.agent.requests.length === 1);
    g.timer.advance(RUNNING_RECORD_AFTER_MS - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(records.saves).toEqual([]);
    g.timer.advance(1);
    await eventually(() => records.saves.length === 1);
    expect(records.saves[0]).toMatchObject({ outcome: 'running', prompt: 'Alert: DiskFull', answer: null });
    answer('Free some space on db1.');
    await run;

    expect(records.saves.map((record) => record.outcome)).toEqual(['running', 'answered', 'delivered']);
    expect(records.synced).toEqual([false, true, false]);
  });

  it.each([
    [
      'a failed run',
      (g: ReturnType<typeof gateway>) => g.agent.reply(new AgentRunError('idle_timeout', 'idle timeout: no output for 600 s')),
      'run_failed',
      /^idle timeout/,
    ],
    [
      'a refused delivery',
      (g: ReturnType<typeof gateway>) => g.channel.failing.add('telegram'),
      'delivery_failed',
      /^delivery to telegram failed: telegram refused the message/,
    ],
    ['an event whose route is gone', (g: ReturnType<typeof gateway>) => g, 'not_run', /the route 'gone' no longer exists/],
  ])('records %s with its reason', async (_case, arrange, outcome, reason) => {
    const records = new InMemoryWebhookRunRecords();
    const g = gateway({ inbox: new InMemoryWebhookInbox(), records });
    arrange(g);
    const event = outcome === 'not_run' ? anEvent(1, { route: 'gone' }) : alert();

    await g.execution.run(event);

    expect(await records.find(event.route, event.id)).toMatchObject({ outcome, error: expect.stringMatching(reason) });
  });

  it("keeps the control characters of a platform's garbage answer out of the record, line breaks aside", async () => {
    const records = new InMemoryWebhookRunRecords();
    const g = gateway({ inbox: new InMemoryWebhookInbox(), records });
    g.channel.failing.add('telegram');
    g.channel.refusals.set(
      'telegram',
      'telegram refused the message (HTTP 400: \u0000\u001b[31mred\u001b]0;pwned\u0007)\nsecond line\u007f',
    );

    await g.execution.run(alert());

    expect(await records.find('alerts', 'event-1')).toMatchObject({
      outcome: 'delivery_failed',
      error:
        'delivery to telegram failed: telegram refused the message (HTTP 400: \\u0000\\u001b[31mred\\u001b]0;pwned\\u0007)\nsecond line\\u007f',
    });
  });

  it('goes on with the run, with a warning, when the record cannot be written', async () => {
    const records = new InMemoryWebhookRunRecords();
    records.save = async () => {
      throw new Error('disk full');
    };
    const g = gateway({ inbox: new InMemoryWebhookInbox(), records });

    expect(await g.execution.run(alert())).toMatchObject({ status: 'delivered', error: null });
    expect(g.log.entries).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('could not write the run record of webhook event event-1: disk full'),
      }),
    );
  });
});

describe('a webhook event run again after a crash', () => {
  it('delivers the answer recorded before the crash and never runs the agent again', async () => {
    const storage = { inbox: new InMemoryWebhookInbox(), records: new InMemoryWebhookRunRecords() };
    const first = gateway(storage);
    first.agent.reply('Free some space on db1.');
    first.channel.hang = true;
    await storage.inbox.accept(alert());
    await first.worker.start();
    expect(await eventually(() => first.channel.recordAtDelivery.length === 1)).toBe(true);

    // The first process dies during the delivery; a new one starts on the same storage.
    await first.worker.stop(0, 0);
    storage.inbox = storage.inbox.restarted();
    const second = gateway(storage);
    await second.worker.start();
    await second.worker.whenIdle();
    await second.worker.stop(1000);

    expect(second.agent.requests).toHaveLength(0);
    expect(second.channel.sent).toEqual([{ target: expect.objectContaining({ platform: 'telegram' }), text: 'Free some space on db1.' }]);
    expect(await storage.records.find('alerts', 'event-1')).toMatchObject({
      outcome: 'delivered',
      answer: 'Free some space on db1.',
      prompt: 'Alert: DiskFull',
    });
    expect(await storage.inbox.pending()).toBe(0);
  });

  it('runs the agent again when the crash came before the answer', async () => {
    const storage = { inbox: new InMemoryWebhookInbox(), records: new InMemoryWebhookRunRecords() };
    await storage.records.save(aRunRecord(1, { eventId: 'event-1', route: 'alerts', outcome: 'running', answer: null }));
    const g = gateway(storage);
    g.agent.reply('Second try.');

    await g.execution.run(alert());

    expect(g.agent.requests).toHaveLength(1);
    expect(await storage.records.list({ limit: 10 })).toEqual([expect.objectContaining({ outcome: 'delivered', answer: 'Second try.' })]);
  });

  it('neither runs nor delivers again an event whose run had ended', async () => {
    const storage = { inbox: new InMemoryWebhookInbox(), records: new InMemoryWebhookRunRecords() };
    await storage.records.save(aRunRecord(1, { eventId: 'event-1', route: 'alerts', outcome: 'delivered' }));
    const g = gateway(storage);

    expect(await g.execution.run(alert())).toEqual({ status: 'delivered', error: null });
    expect(g.agent.requests).toHaveLength(0);
    expect(g.channel.sent).toHaveLength(0);
  });
});

describe('a deliver_only route', () => {
  it('delivers its rendered prompt as the message without running the agent, and its record says so', async () => {
    const records = new InMemoryWebhookRunRecords();
    const g = gateway({ inbox: new InMemoryWebhookInbox(), records }, [
      aRoute('alerts', { deliver: 'telegram', prompt: 'Alert: {labels.alertname}', deliverOnly: true }),
    ]);

    expect(await g.execution.run(alert())).toMatchObject({ status: 'delivered' });

    expect(g.agent.requests).toEqual([]);
    expect(g.channel.sent.map((sent) => sent.text)).toEqual(['Alert: DiskFull']);
    expect(await records.find('alerts', 'event-1')).toMatchObject({
      outcome: 'delivered',
      prompt: 'Alert: DiskFull',
      answer: 'Alert: DiskFull',
      agent: 'not run (deliver_only)',
    });
    expect(await g.ledger.get('event-1')).toMatchObject({ status: 'ok', model: null, answer: 'Alert: DiskFull' });
  });
});
