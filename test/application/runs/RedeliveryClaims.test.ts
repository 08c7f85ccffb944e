import { describe, expect, it } from '@jest/globals';
import { RedeliveryClaims } from '../../../src/application/runs/RedeliveryClaims.js';
import type { RunRecord } from '../../../src/domain/runs/RunRecord.js';
import { FakeProcessIdentity } from '../../support/fakes/FakeProcessIdentity.js';
import { InMemoryRunLedger } from '../../support/fakes/InMemoryRunLedger.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';

const RUN: RunRecord = {
  id: 'event-1',
  kind: 'webhook',
  subject: 'github',
  name: 'github',
  slot: null,
  event: 'pull_request',
  delivery_id: 'd-1',
  started_at: '2026-06-01T08:00:00.000Z',
  finished_at: '2026-06-01T08:00:04.000Z',
  status: 'delivery_failed',
  model: 'gpt',
  prompt: 'p',
  answer: 'a',
  error: 'e',
  deliveries: [],
};

async function claims() {
  const ledger = new InMemoryRunLedger(undefined, () => new Date('2026-06-01T08:05:00Z'));
  await ledger.save(RUN);
  const clock = new ManualClock('2026-06-01T08:05:00Z');
  const log = new RecordingLogger();
  const mine = new RedeliveryClaims(ledger, new FakeProcessIdentity(), clock, log);
  return { ledger, clock, log, mine };
}

describe('RedeliveryClaims, the claim every redelivery takes on its run', () => {
  it('claims a run once: a second redelivery while the first holds it is refused, naming who holds it', async () => {
    const { mine } = await claims();
    const claimed = await mine.claim(RUN, 'webhook run event-1', 'see "agent webhook runs github"');
    expect(claimed.redelivery_claim).not.toBeNull();
    await expect(mine.claim(RUN, 'webhook run event-1', 'see "agent webhook runs github"')).rejects.toThrow(
      /^The answer of webhook run event-1 is being delivered again by .* \(since 2026-06-01T08:05:00.000Z\); wait for that to end, then see "agent webhook runs github"\.$/,
    );
  });

  it('leaves the run delivered again now, without the claim', async () => {
    const { ledger, mine } = await claims();
    const claimed = await mine.claim(RUN, 'webhook run event-1', 'retry');
    const left = mine.redelivered(claimed, { status: 'ok', error: null });
    expect(left).toMatchObject({ status: 'ok', error: null, redelivered_at: '2026-06-01T08:05:00.000Z', redelivery_claim: null });
    await mine.release(left);
    expect((await ledger.get('event-1'))?.redelivery_claim ?? null).toBeNull();
    expect((await mine.claim(RUN, 'webhook run event-1', 'retry')).redelivery_claim).not.toBeNull();
  });
});
