import { PostgresWebhookInbox } from '../../../src/adapters/postgres/PostgresWebhookInbox.js';
import { aCoalescedEvent } from '../../contract/WebhookInbox.contract.js';
import { FakeProcessIdentity } from '../../support/fakes/FakeProcessIdentity.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { scratchDatabaseForSuite } from '../../support/postgres.js';

describe('coalesced webhook events on PostgreSQL replicas', () => {
  const suite = scratchDatabaseForSuite();

  it('hands a group whose events two replicas accepted to one of them, once, with all its events', async () => {
    const clock = new ManualClock('2026-06-01T08:00:00.000Z');
    const start = clock.now().getTime();
    const replicas = ['host-a:1', 'host-b:2'].map(
      (claimant) => new PostgresWebhookInbox(suite.database, new FakeProcessIdentity(claimant), clock),
    );
    for (let n = 1; n <= 10; n += 1) await replicas[n % 2]!.accept(aCoalescedEvent(n, 'octo/a#7', start + n * 100));
    clock.set(new Date(start + 1000 + 3000));

    const claims = await Promise.all([...replicas, ...replicas].map((inbox) => inbox.claimNext()));

    const runs = claims.filter((event) => event !== null);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.coalesced?.map((member) => member.id)).toEqual(Array.from({ length: 10 }, (_, index) => `event-${index + 1}`));
  });
});
