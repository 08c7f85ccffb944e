import { PostgresWebhookRunRecords } from '../../../src/adapters/postgres/PostgresWebhookRunRecords.js';
import { aRunRecord } from '../../contract/WebhookRunRecords.contract.js';
import { scratchDatabaseForSuite } from '../../support/postgres.js';

describe('webhook run records on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();

  beforeEach(async () => {
    await suite.database.query('TRUNCATE agent_webhook_runs');
  });

  it('keeps a record saved without waiting for the disk like any other', async () => {
    const records = new PostgresWebhookRunRecords(suite.database, 50);

    await records.save(aRunRecord(1, { outcome: 'running', answer: null }), false);

    expect(await records.find('pr-review', 'event1')).toEqual(aRunRecord(1, { outcome: 'running', answer: null }));
  });

  it('asks a retention given as a function at every save', async () => {
    let keep = 3;
    const records = new PostgresWebhookRunRecords(suite.database, () => keep);
    for (const n of [1, 2, 3]) await records.save(aRunRecord(n));

    keep = 1;
    await records.save(aRunRecord(4));

    expect((await records.list({ route: 'pr-review', limit: 10 })).map((record) => record.eventId)).toEqual(['event4']);
  });

  it('keeps a record whose answer or error holds a NUL or half an emoji, those characters as U+FFFD', async () => {
    const records = new PostgresWebhookRunRecords(suite.database, 50);

    await records.save(aRunRecord(1, { answer: 'cut here \uD83D', error: 'platform said \u0000garbage' }));

    expect(await records.find('pr-review', 'event1')).toMatchObject({ answer: 'cut here \uFFFD', error: 'platform said \uFFFDgarbage' });
  });

  it('leaves out a stored record it cannot read', async () => {
    const records = new PostgresWebhookRunRecords(suite.database, 50);
    await records.save(aRunRecord(1));
    await suite.database.query(
      `INSERT INTO agent_webhook_runs (route, event_id, started_at, record) VALUES ('pr-review', 'odd', now(), '{"outcome": 7}')`,
    );

    expect(await records.find('pr-review', 'odd')).toBeNull();
    expect((await records.list({ limit: 10 })).map((record) => record.eventId)).toEqual(['event1']);
  });
});
