import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfig } from '../../src/adapters/config/AgentConfig.js';
import { FileWebhookRunRecords } from '../../src/adapters/persistence/FileWebhookRunRecords.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import type { CronSettings } from '../../src/application/ports/Settings.js';
import { InvalidInputError } from '../../src/domain/errors.js';
import { aRunRecord } from '../contract/WebhookRunRecords.contract.js';

describe('FileWebhookRunRecords', () => {
  let home: string;
  let records: FileWebhookRunRecords;
  const outputDir = () => join(home, 'webhooks', 'output');
  const make = (extra: Record<string, unknown> = {}) =>
    new FileWebhookRunRecords(
      agentPathsFor(home),
      { timeZone: 'Europe/Berlin' } as CronSettings,
      { platforms: { webhook: { extra } } } as unknown as AgentConfig,
    );

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-webhook-records-'));
    records = make();
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('writes webhooks/output/<route>/<time received in the configured zone>_<event id>.md, 0600 in 0700 directories', async () => {
    await records.save(aRunRecord(1));

    const path = join(outputDir(), 'pr-review', '2026-06-01_10-01-00_event1.md');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    for (const directory of [join(home, 'webhooks'), outputDir(), join(outputDir(), 'pr-review')]) {
      expect((await stat(directory)).mode & 0o777).toBe(0o700);
    }
    const text = await readFile(path, 'utf8');
    for (const line of [
      '- Route: pr-review',
      '- Event: pull_request',
      '- Delivery id: delivery-1',
      '- Outcome: delivered',
      'Review PR #1',
      'Looks fine (1).',
    ]) {
      expect(text).toContain(line);
    }
  });

  it('keeps the file of an event when its record is saved again later', async () => {
    await records.save(aRunRecord(1, { outcome: 'answered' }));
    await records.save(aRunRecord(1, { startedAt: '2026-06-01T09:30:00.000Z' }));

    expect(await readdir(join(outputDir(), 'pr-review'))).toEqual(['2026-06-01_10-01-00_event1.md']);
  });

  it("saves a run's later records in the same file, and again after its directory was removed meanwhile", async () => {
    await records.save(aRunRecord(1, { outcome: 'running' }), false);
    await records.save(aRunRecord(1, { outcome: 'answered' }));
    await rm(join(outputDir(), 'pr-review'), { recursive: true });
    await records.save(aRunRecord(1, { outcome: 'delivered' }), false);

    expect(await readdir(join(outputDir(), 'pr-review'))).toEqual(['2026-06-01_10-01-00_event1.md']);
    expect(await records.find('pr-review', 'event1')).toMatchObject({ outcome: 'delivered' });
  });

  it('finds the record of an event that another process saved, and one an older version named after its start', async () => {
    await records.find('pr-review', 'event1');
    await make().save(aRunRecord(2));
    const directory = join(outputDir(), 'pr-review');
    await writeFile(
      join(directory, '2026-06-01_10-03-02_event3.md'),
      await readFile(join(directory, '2026-06-01_10-02-00_event2.md'), 'utf8'),
    );
    const later = make();

    expect(await records.find('pr-review', 'event2', aRunRecord(2).receivedAt)).toMatchObject({
      eventId: 'event2',
      answer: 'Looks fine (2).',
    });
    expect(await later.find('pr-review', 'event3', aRunRecord(3).receivedAt)).toMatchObject({ answer: 'Looks fine (2).' });
    await later.save(aRunRecord(3, { outcome: 'delivery_failed' }));
    expect((await readdir(directory)).sort()).toEqual(['2026-06-01_10-02-00_event2.md', '2026-06-01_10-03-02_event3.md']);
  });

  it('keeps the newest records of a route, those another process saved included', async () => {
    const other = make({ output_retention: 3 });
    for (let n = 1; n <= 10; n += 1) await other.save(aRunRecord(n));
    records = make({ output_retention: 3 });
    await records.save(aRunRecord(11));
    await records.save(aRunRecord(12));

    expect((await readdir(join(outputDir(), 'pr-review'))).sort()).toEqual([
      '2026-06-01_10-10-00_event10.md',
      '2026-06-01_10-11-00_event11.md',
      '2026-06-01_10-12-00_event12.md',
    ]);
  });

  it('removes the oldest records a few at a time, and lists only the newest the retention keeps', async () => {
    records = make({ output_retention: 20 });
    for (let n = 1; n <= 25; n += 1) await records.save(aRunRecord(n));

    const onDisk = (await readdir(join(outputDir(), 'pr-review'))).length;
    expect(onDisk).toBeGreaterThanOrEqual(20);
    expect(onDisk).toBeLessThan(20 + 2);
    expect((await records.list({ route: 'pr-review', limit: 100 })).map((record) => record.eventId)).toEqual(
      Array.from({ length: 20 }, (_, i) => `event${25 - i}`),
    );
  });

  it.each([
    ['a route', aRunRecord(1, { route: '../cron' })],
    ['a route', aRunRecord(1, { route: 'a/b' })],
    ['an event id', aRunRecord(1, { eventId: '../../x' })],
  ])('refuses %s that would lead out of the directory, writing nothing', async (_what, record) => {
    await expect(records.save(record)).rejects.toThrow(InvalidInputError);
    await expect(records.list({ route: '..', limit: 5 })).rejects.toThrow(/cannot name a file/);
    expect(existsSync(join(home, 'webhooks'))).toBe(false);
  });

  it('leaves out files that are not records, and temporary files a crash left behind', async () => {
    await records.save(aRunRecord(1));
    const directory = join(outputDir(), 'pr-review');
    await writeFile(join(directory, '2026-06-01_10-05-00_broken.md'), 'not a record');
    await writeFile(join(directory, '.2026-06-01_10-06-00_event6.md.123.1.tmp'), 'half');
    await mkdir(join(outputDir(), 'notes.txt'), { recursive: true });

    expect((await records.list({ limit: 10 })).map((record) => record.eventId)).toEqual(['event1']);
  });

  it('lists without creating anything in a home that has no records', async () => {
    expect(await records.list({ limit: 10 })).toEqual([]);
    expect(await records.find('pr-review', 'event1')).toBeNull();
    expect(existsSync(join(home, 'webhooks'))).toBe(false);
  });
});
