import 'reflect-metadata';
import { RunEvents } from '../../../src/application/events/RunEvents.js';
import { SendOutboxEvents } from '../../../src/application/events/SendOutboxEvents.js';
import type { EventSender, EventSendResult } from '../../../src/application/ports/EventSender.js';
import type { EventSubscriptions } from '../../../src/application/ports/EventSubscriptions.js';
import type { EventSubscription, OutboundEvent } from '../../../src/domain/events/outboundEvents.js';
import type { RunRecord } from '../../../src/domain/runs/RunRecord.js';
import { InMemoryEventOutbox } from '../../support/fakes/InMemoryEventOutbox.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';

const T0 = '2030-01-01T00:00:00.000Z';

function subscription(overrides: Partial<EventSubscription> = {}): EventSubscription {
  return {
    name: 'ops',
    url: 'http://127.0.0.1:9/events',
    key: new Uint8Array([1, 2, 3]),
    events: ['run.started', 'run.finished', 'run.failed', 'delivery.failed', 'job.paused'],
    jobs: null,
    routes: null,
    firstRetryMs: 10_000,
    ...overrides,
  };
}

const subscriptionsOf = (...all: EventSubscription[]): EventSubscriptions => ({ all: () => all });

/** Answers each attempt with the next status of `statuses` (the last one from then on), noting when it was asked. */
class ScriptedSender implements EventSender {
  readonly attempts: Array<{ at: string; event: OutboundEvent }> = [];
  constructor(private readonly statuses: Array<number | null>) {}
  async send(_url: string, _key: Uint8Array, event: OutboundEvent, now: Date): Promise<EventSendResult> {
    this.attempts.push({ at: now.toISOString(), event });
    const status = this.statuses.length > 1 ? this.statuses.shift()! : this.statuses[0]!;
    return status === null ? { status: null, error: 'could not reach it: ECONNREFUSED' } : { status, error: null };
  }
}

function run(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id: 'r1',
    kind: 'cron',
    subject: 'job1',
    name: 'nightly',
    slot: null,
    event: null,
    delivery_id: null,
    started_at: T0,
    finished_at: '2030-01-01T00:00:05.000Z',
    status: 'ok',
    model: 'command',
    prompt: 'hello',
    answer: 'hi',
    error: null,
    deliveries: [],
    claimant: 'host:1',
    ...overrides,
  };
}

function pipeline(statuses: Array<number | null>, subscriptions = subscriptionsOf(subscription())) {
  const clock = new ManualClock(T0);
  const outbox = new InMemoryEventOutbox();
  const sender = new ScriptedSender(statuses);
  const timer = new ManualTimer();
  return {
    clock,
    outbox,
    sender,
    timer,
    events: new RunEvents(outbox, subscriptions, clock, new RecordingLogger()),
    sending: new SendOutboxEvents(outbox, subscriptions, sender, clock, timer),
  };
}

describe('SendOutboxEvents', () => {
  it('tries a failing event again after 10 s, then doubling, with the same webhook id, until it is taken', async () => {
    const { clock, events, sending, sender, outbox } = pipeline([500, 503, null, 200]);
    await events.runSaved(run());

    const outcomes = (await sending.execute()).map((attempt) => attempt.outcome);
    for (const wait of [10_000, 20_000, 40_000]) {
      clock.advance(wait - 1);
      expect(await sending.execute()).toEqual([]);
      clock.advance(1);
      outcomes.push(...(await sending.execute()).map((attempt) => attempt.outcome));
    }

    expect(outcomes).toEqual(['retried', 'retried', 'retried', 'sent']);
    expect(sender.attempts.map((attempt) => attempt.at)).toEqual([
      '2030-01-01T00:00:00.000Z',
      '2030-01-01T00:00:10.000Z',
      '2030-01-01T00:00:30.000Z',
      '2030-01-01T00:01:10.000Z',
    ]);
    expect(new Set(sender.attempts.map((attempt) => attempt.event.id))).toEqual(new Set(['msg_cron_r1_run_finished']));
    expect(await outbox.claimDue(new Date('2030-01-02T00:00:00Z'), 10, 1)).toEqual([]);
  });

  it('waits at most an hour between attempts and gives up 24 hours after the event was added', async () => {
    const { clock, events, sending, sender, outbox } = pipeline([500]);
    await events.runSaved(run());

    let last: string | undefined;
    for (let round = 0; round < 100 && last !== 'undeliverable'; round += 1) {
      for (const attempt of await sending.execute()) last = attempt.outcome;
      clock.advance(3_600_000);
    }

    expect(last).toBe('undeliverable');
    const times = sender.attempts.map((attempt) => Date.parse(attempt.at));
    const gaps = times.slice(1).map((time, index) => time - times[index]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(3_600_000);
    expect(times.at(-1)! - times[0]!).toBeLessThanOrEqual(24 * 3_600_000);
    expect(await outbox.failed(10)).toEqual([
      expect.objectContaining({ subscription: 'ops', error: 'the receiver answered HTTP 500', attempts: sender.attempts.length }),
    ]);
  });

  it('gives up at once on a 4xx refusal, but tries a 408 or 429 again', async () => {
    const { events, sending, outbox } = pipeline([429, 408, 410]);
    await events.runSaved(run({ id: 'a' }));
    await events.runSaved(run({ id: 'b' }));
    await events.runSaved(run({ id: 'c' }));

    const outcomes = (await sending.execute()).map((attempt) => [attempt.eventId, attempt.outcome, attempt.status]);

    expect(outcomes).toEqual([
      ['msg_cron_a_run_finished', 'retried', 429],
      ['msg_cron_b_run_finished', 'retried', 408],
      ['msg_cron_c_run_finished', 'undeliverable', 410],
    ]);
    expect((await outbox.failed(10)).map((failed) => failed.event.id)).toEqual(['msg_cron_c_run_finished']);
  });

  it('looks at the outbox again on the Timer while nothing is due, and stops when told', async () => {
    const { events, sending, sender, timer } = pipeline([200]);
    const stop = new AbortController();
    const seen: string[] = [];
    const running = sending.run(
      stop.signal,
      (attempt) => seen.push(attempt.outcome),
      () => undefined,
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(timer.pending).toBe(1);

    await events.runSaved(run());
    timer.advance(1_000);
    for (let turn = 0; turn < 20 && seen.length === 0; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    await running;

    expect(seen).toEqual(['sent']);
    expect(sender.attempts).toHaveLength(1);
  });
});

describe('RunEvents', () => {
  it('keeps a run event once however often its record is saved, and tells a failed run and its failed delivery', async () => {
    const { events, outbox, clock } = pipeline([200]);
    const failed = run({
      status: 'delivery_failed',
      deliveries: [{ target: 'telegram:1', outcome: 'failed', message_ids: [], error: 'refused' }],
    });
    await events.runStarted(run({ status: 'running', finished_at: null }));
    await events.runSaved(run({ status: 'running', finished_at: null }));
    await events.runSaved(failed);
    await events.runSaved(failed);

    const claimed = await outbox.claimDue(clock.now(), 10, 1);

    expect(claimed.map((entry) => entry.event.type)).toEqual(['run.started', 'run.failed', 'delivery.failed']);
    expect(claimed[1]!.event.data).toMatchObject({ id: 'r1', status: 'delivery_failed', answer: 'hi' });
    expect(claimed[1]!.event.data).not.toHaveProperty('claimant');
  });

  it('gives each subscription only the events, jobs (by id or name) and routes it asks for', async () => {
    const subscriptions = subscriptionsOf(
      subscription({ name: 'failures', events: ['run.failed'] }),
      subscription({ name: 'nightly', jobs: ['nightly'], routes: [] }),
      subscription({ name: 'byid', jobs: ['job2'] }),
      subscription({ name: 'ci', routes: ['ci'], jobs: [] }),
    );
    const { events, outbox, clock } = pipeline([200], subscriptions);
    await events.runSaved(run());
    await events.runSaved(run({ id: 'r2', subject: 'job2', name: 'other', status: 'error' }));
    await events.runSaved(run({ id: 'w1', kind: 'webhook', subject: 'ci', name: 'ci' }));
    await events.jobPaused({ state: 'scheduled' }, {
      id: 'job1',
      name: 'nightly',
      state: 'paused',
      paused_at: T0,
      paused_reason: 'by hand',
    } as never);

    const claimed = await outbox.claimDue(clock.now(), 20, 1);

    expect(claimed.map((entry) => `${entry.subscription} ${entry.event.id}`).sort()).toEqual([
      'byid msg_cron_r2_run_failed',
      'byid msg_webhook_w1_run_finished',
      'ci msg_webhook_w1_run_finished',
      'failures msg_cron_r2_run_failed',
      'nightly msg_cron_r1_run_finished',
      'nightly msg_job_job1_paused_1893456000000',
    ]);
  });

  it('writes nothing when no subscription is configured', async () => {
    const { events, outbox, clock } = pipeline([200], subscriptionsOf());
    await events.runSaved(run());
    expect(await outbox.claimDue(clock.now(), 10, 1)).toEqual([]);
  });
});
