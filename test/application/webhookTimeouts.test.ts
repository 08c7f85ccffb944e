import { readConfiguredRoutes } from '../../src/adapters/config/webhookRouteConfig.js';
import { failedAttemptRunOf } from '../../src/domain/webhook/webhookLedgerRun.js';
import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';
import { FakeAgentRunner } from '../support/fakes/FakeAgentRunner.js';
import { FakeMemoryStore, FakeSkillLibrary } from '../support/fakes/FakeContextFiles.js';
import { FakeWebhookRoutes, aRoute } from '../support/fakes/FakeWebhookRoutes.js';
import { InMemoryRunLedger } from '../support/fakes/InMemoryRunLedger.js';
import { InMemoryWebhookRunRecords } from '../support/fakes/InMemoryWebhookRunRecords.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { ManualTimer } from '../support/fakes/ManualTimer.js';
import { RecordingDeliveryChannel } from '../support/fakes/RecordingDeliveryChannel.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingRepoCommenter } from '../support/fakes/RecordingRepoCommenter.js';
import { webhookRunPipeline } from '../support/runPipeline.js';
import { WEBHOOK_WORKER_SETTINGS } from '../support/webhookWorkerSettings.js';

function pipeline(routeExtra: Record<string, unknown> = { timeoutSeconds: 600 }) {
  const agent = new FakeAgentRunner();
  const timer = new ManualTimer();
  const channel = new RecordingDeliveryChannel(['telegram']);
  const ledger = new InMemoryRunLedger(undefined, () => new Date('2026-06-01T08:00:05Z'));
  const { execution } = webhookRunPipeline({
    routes: new FakeWebhookRoutes([
      aRoute('alerts', { deliver: 'telegram', prompt: 'Alert: {labels.alertname}', deliverExtra: { chat_id: '42' }, ...routeExtra }),
    ]),
    agent,
    memory: new FakeMemoryStore(),
    skills: new FakeSkillLibrary({}),
    channel,
    commenter: new RecordingRepoCommenter(),
    settings: WEBHOOK_WORKER_SETTINGS,
    log: new RecordingLogger(),
    records: new InMemoryWebhookRunRecords(),
    clock: new ManualClock('2026-06-01T08:00:05Z'),
    timer,
    ledger,
  });
  return { agent, ledger, execution, timer, channel };
}

const settle = async () => {
  for (let i = 0; i < 20; i += 1) await Promise.resolve();
  await new Promise((resolve) => setImmediate(resolve));
};

describe("a webhook route's time limit", () => {
  it('stops a run that goes on past it: the run failed, "timed out after 10m", and the event is not run again', async () => {
    const p = pipeline();
    p.agent.reply(
      (request) =>
        new Promise<string>((_resolve, reject) =>
          request.signal?.addEventListener('abort', () => reject(new AgentRunError('aborted', 'stopped')), { once: true }),
        ),
    );

    const ran = p.execution.run(anEvent(1, { route: 'alerts', event: 'alert', payload: { labels: { alertname: 'DiskFull' } } }));
    await settle();
    p.timer.advance(600_000);
    const report = await ran;

    expect(report).toMatchObject({ status: 'run_failed', error: 'timed out after 10m' });
    expect(await p.ledger.get('event-1')).toMatchObject({ status: 'error', error: 'timed out after 10m' });
    expect(p.channel.sent).toEqual([]);
  });

  it('lets a run that ends in time answer, and drops its limit', async () => {
    const p = pipeline();

    const report = await p.execution.run(anEvent(1, { route: 'alerts', event: 'alert', payload: { labels: { alertname: 'DiskFull' } } }));

    expect(report.status).not.toBe('run_failed');
    expect(p.timer.pending).toBe(0);
  });
});

describe("a route's timeout in config.yaml", () => {
  it('is read as a length of time, and a wrong one named in one sentence', () => {
    const { routes, problems } = readConfiguredRoutes(
      { secret: 's3cret', routes: { ok: { timeout: '1h30m' }, bare: { timeout: 10 }, unitless: { timeout: '10' } } },
      true,
      'config.yaml',
    );

    expect(routes.find((route) => route.name === 'ok')?.timeoutSeconds).toBe(5400);
    expect(problems).toEqual([
      'config.yaml: platforms.webhook.extra.routes.bare.timeout must be a length of time such as 90s, 10m or 1h30m (got 10: it is not a text such as 10m).',
      'config.yaml: platforms.webhook.extra.routes.unitless.timeout must be a length of time such as 90s, 10m or 1h30m (got "10": it has no unit (s for seconds, m for minutes, h for hours, d for days)).',
    ]);
  });
});

/** The ledger's record of an event's first attempt that failed, as the gateway before a restart wrote it. */
function failedFirstAttempt(event: ReturnType<typeof anEvent>) {
  return failedAttemptRunOf(event, 1, 'Alert: DiskFull', 'Every provider failed: 503.', new Date('2026-06-01T08:00:00Z'), new Date());
}

describe("a webhook route's retry", () => {
  const overloaded = () => new AgentRunError('failed', 'Every provider failed: 503 Service Unavailable.', { transient: true });

  it('runs a run whose model answered 503 twice three times: each attempt in the ledger, linked to the first, one delivery', async () => {
    const p = pipeline({ retry: { times: 3, backoff_seconds: 30, max_seconds: 3600 } });
    p.agent.reply(overloaded(), overloaded(), 'Disk is full.');

    const ran = p.execution.run(anEvent(1, { route: 'alerts', event: 'alert', payload: { labels: { alertname: 'DiskFull' } } }));
    for (let i = 0; i < 2; i += 1) {
      await settle();
      p.timer.advance(70_000);
    }
    await ran;

    expect(p.agent.requests).toHaveLength(3);
    expect(await p.ledger.get('event-1~1')).toMatchObject({ status: 'error', attempt: 1 });
    expect(await p.ledger.get('event-1~2')).toMatchObject({ status: 'error', attempt: 2, retry_of: 'event-1~1' });
    expect(await p.ledger.get('event-1')).toMatchObject({ status: 'ok', attempt: 3, retry_of: 'event-1~1' });
    expect(p.channel.sent).toHaveLength(1);
  });

  it('goes on after a restart from the attempt after the last one recorded, and never makes more attempts than it allows', async () => {
    const p = pipeline({ retry: { times: 2, backoff_seconds: 30, max_seconds: 3600 } });
    const event = anEvent(1, { route: 'alerts', event: 'alert', payload: { labels: { alertname: 'DiskFull' } } });
    // The gateway before the restart made the first attempt, which failed, and stopped in its wait.
    await p.ledger.save({ ...failedFirstAttempt(event), finished_at: '2026-06-01T08:00:04.000Z' });
    p.agent.reply(overloaded(), overloaded(), 'never asked');

    const ran = p.execution.run(event);
    for (let i = 0; i < 2; i += 1) {
      await settle();
      p.timer.advance(70_000);
    }
    const report = await ran;

    // Attempts 2 and 3 here; the first was the gateway's before.
    expect(p.agent.requests).toHaveLength(2);
    expect(report).toMatchObject({ status: 'run_failed' });
    expect(await p.ledger.get('event-1~2')).toMatchObject({ status: 'error', attempt: 2, retry_of: 'event-1~1' });
    expect(await p.ledger.get('event-1')).toMatchObject({ status: 'error', attempt: 3, retry_of: 'event-1~1' });
  });

  it('never retries a failure that will not pass by itself', async () => {
    const p = pipeline({ retry: { times: 3, backoff_seconds: 30, max_seconds: 3600 } });
    p.agent.reply(new AgentRunError('failed', 'The provider refused the key: 401.'));

    const report = await p.execution.run(anEvent(1, { route: 'alerts', event: 'alert', payload: { labels: { alertname: 'DiskFull' } } }));

    expect(report).toMatchObject({ status: 'run_failed' });
    expect(p.agent.requests).toHaveLength(1);
  });

  it('is read from config.yaml, and a wrong one named in one sentence', () => {
    const { routes, problems } = readConfiguredRoutes(
      { secret: 's3cret', routes: { ok: { retry: { times: 2, backoff: '10s' } }, bad: { retry: { times: 'many' } } } },
      true,
      'config.yaml',
    );

    expect(routes.find((route) => route.name === 'ok')?.retry).toEqual({ times: 2, backoff_seconds: 10, max_seconds: 3600 });
    expect(problems).toEqual([
      'config.yaml: platforms.webhook.extra.routes.bad.retry.times must be a whole number from 0 to 20 (got "many").',
    ]);
  });
});
