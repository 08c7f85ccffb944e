import { describeTarget, parseDeliveryTargets } from '../../src/domain/DeliveryTarget.js';
import { finishRun, isLastRunOf, redeliverLastRun } from '../../src/domain/jobLifecycle.js';
import {
  isAbandonedClaim,
  latestRedeliverable,
  mergeDeliveries,
  outcomeOfDeliveries,
  targetsToRedeliver,
  whyNotRedeliverable,
} from '../../src/domain/runs/redelivery.js';
import type { RunDelivery } from '../../src/domain/runs/RunRecord.js';
import { describeWebhookDelivery, webhookDeliveryNamed, type WebhookDelivery } from '../../src/domain/webhook/webhookRun.js';
import { aRun } from '../contract/RunLedger.contract.js';
import { anHourlyJob } from '../support/jobs.js';

const delivered = (target: string): RunDelivery => ({ target, outcome: 'delivered', message_ids: ['1'], error: null });
const failed = (target: string, error = 'refused'): RunDelivery => ({ target, outcome: 'failed', message_ids: [], error });

describe('redelivery rules', () => {
  const CRON = { silentIsNothing: true };

  it('says why a run has nothing to deliver: still going on, failed, not run, no answer, [SILENT] where it means nothing to report', () => {
    expect(whyNotRedeliverable(aRun(1, { status: 'running', answer: null }), CRON)).toBe(
      'is still going on (its answer is delivered when it ends)',
    );
    expect(whyNotRedeliverable(aRun(1, { status: 'error', answer: null, error: 'idle timeout\nmore' }), CRON)).toBe(
      'failed (idle timeout)',
    );
    expect(whyNotRedeliverable(aRun(1, { status: 'blocked_config', answer: null, error: 'No model.' }), CRON)).toBe(
      'was not run (No model.)',
    );
    expect(whyNotRedeliverable(aRun(1, { status: 'error', answer: null, error: null }), CRON)).toBe('failed');
    expect(whyNotRedeliverable(aRun(1, { answer: 'All quiet [silent]' }), CRON)).toBe('answered [SILENT], which is never delivered');
    expect(whyNotRedeliverable(aRun(1, { answer: 'All quiet [SILENT]' }), { silentIsNothing: false })).toBeNull();
    expect(whyNotRedeliverable(aRun(1, { status: 'delivery_failed' }), CRON)).toBeNull();
  });

  it('picks the newest run whose answer can be delivered', () => {
    const runs = [aRun(3, { status: 'error', answer: null }), aRun(2, { answer: '[SILENT]' }), aRun(1, { status: 'delivery_failed' })];
    expect(latestRedeliverable(runs, CRON)?.id).toBe('run-1');
    expect(latestRedeliverable(runs.slice(0, 2), CRON)).toBeNull();
  });

  it('sends to the targets the answer missed, or to all again when it reached every one', () => {
    expect(targetsToRedeliver(['telegram', 'slack:C1'], [delivered('telegram'), failed('slack:C1'), delivered('local')])).toEqual([
      'slack:C1',
    ]);
    // A target added since the run never got it.
    expect(targetsToRedeliver(['telegram', 'discord:1'], [delivered('telegram')])).toEqual(['discord:1']);
    expect(targetsToRedeliver(['telegram', 'slack:C1'], [delivered('telegram'), { ...delivered('slack:C1'), outcome: 'queued' }])).toEqual([
      'telegram',
      'slack:C1',
    ]);
  });

  it('puts the new deliveries in place of the old, and says how the answer stands over all targets', () => {
    const merged = mergeDeliveries(
      [delivered('telegram'), failed('slack:C1'), delivered('local')],
      [delivered('slack:C1'), failed('discord:1', 'no\u001b token')],
    );
    expect(merged.map((each) => [each.target, each.outcome])).toEqual([
      ['telegram', 'delivered'],
      ['slack:C1', 'delivered'],
      ['local', 'delivered'],
      ['discord:1', 'failed'],
    ]);
    expect(outcomeOfDeliveries(merged)).toEqual({ status: 'delivery_failed', deliveryError: 'discord:1: no\u001b token', queued: [] });
    expect(outcomeOfDeliveries([delivered('telegram'), { ...delivered('bot-chat'), outcome: 'queued', message_ids: ['r1'] }])).toEqual({
      status: 'delivery_queued',
      receipts: ['r1'],
    });
    expect(outcomeOfDeliveries([delivered('telegram')])).toEqual({ status: 'ok' });
  });

  it('counts a claim abandoned once its process is gone or it is older than ten minutes', () => {
    const now = new Date('2026-06-20T12:00:00Z');
    const claim = { by: 'host:1', at: '2026-06-20T11:55:00.000Z' };
    expect(isAbandonedClaim(claim, now, true)).toBe(false);
    expect(isAbandonedClaim(claim, now, 'unknown')).toBe(false);
    expect(isAbandonedClaim(claim, now, false)).toBe(true);
    expect(isAbandonedClaim({ ...claim, at: '2026-06-20T11:49:59.000Z' }, now, 'unknown')).toBe(true);
  });
});

describe("a job's last run delivered again", () => {
  const startedAt = new Date('2026-06-20T08:00:00.250Z');
  const afterFailedDelivery = () =>
    finishRun({ ...anHourlyJob('a1'), failure_streak: 2 }, { status: 'delivery_failed', deliveryError: 'telegram: down' }, startedAt);

  it('is the run that started at its last_run_at, to the second', () => {
    expect(isLastRunOf(afterFailedDelivery(), startedAt)).toBe(true);
    expect(isLastRunOf(afterFailedDelivery(), new Date('2026-06-20T07:00:00Z'))).toBe(false);
    expect(isLastRunOf(anHourlyJob('a1'), startedAt)).toBe(false);
  });

  it('takes the status of the redelivery, ends the failure streak when it got through, and counts nothing again', () => {
    const job = afterFailedDelivery();
    expect(job).toMatchObject({ last_status: 'delivery_failed', failure_streak: 3, repeat: { completed: 1 } });

    const ok = redeliverLastRun(job, { status: 'ok' });
    expect(ok).toEqual({ ...job, last_status: 'ok', last_delivery_error: null, failure_streak: 0 });
    expect(redeliverLastRun(job, { status: 'delivery_failed', deliveryError: 'telegram: still down' })).toEqual({
      ...job,
      last_delivery_error: 'telegram: still down',
    });
    // A run that had got through and now did not is one more failed run.
    expect(redeliverLastRun(ok, { status: 'delivery_failed', deliveryError: 'telegram: down' })).toMatchObject({
      last_status: 'delivery_failed',
      failure_streak: 1,
    });
  });
});

describe('where a webhook answer went, read back from its record', () => {
  it('names the same delivery describeWebhookDelivery wrote', () => {
    const deliveries: WebhookDelivery[] = [
      { kind: 'log' },
      { kind: 'repo_comment', repo: 'octo/widgets', prNumber: 12 },
      ...[
        'telegram',
        'telegram:-1001234567890:17',
        'slack:#ops',
        'matrix:!room:example.org',
        'email:ops@example.com',
        'mattermost:abc def',
      ].map((text): WebhookDelivery => ({
        kind: 'platform',
        target: parseDeliveryTargets(text)[0] as Extract<WebhookDelivery, { kind: 'platform' }>['target'],
      })),
    ];
    for (const delivery of deliveries) expect(webhookDeliveryNamed(describeWebhookDelivery(delivery))).toEqual(delivery);
    expect(describeWebhookDelivery(deliveries[3]!)).toBe(describeTarget(parseDeliveryTargets('telegram:-1001234567890:17')[0]!));
  });

  it('names none for text that is not a delivery', () => {
    for (const text of ['', 'local', 'origin', 'bot-chat', 'telegram,slack', 'nowhere:1', 'octo/widgets#0'])
      expect(webhookDeliveryNamed(text)).toBeNull();
  });
});
