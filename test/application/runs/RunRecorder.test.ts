import { describe, expect, it } from '@jest/globals';
import { RunRecorder } from '../../../src/application/runs/RunRecorder.js';
import { RUNNING_RECORD_AFTER_MS, type RunRecord } from '../../../src/domain/runs/RunRecord.js';
import { InMemoryRunLedger } from '../../support/fakes/InMemoryRunLedger.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingTracing } from '../../support/fakes/RecordingTracing.js';

const settled = () => new Promise((resolve) => setImmediate(resolve));

function record(kind: 'cron' | 'webhook', changes: Partial<RunRecord> = {}): RunRecord {
  return {
    id: kind === 'cron' ? 'a1b2c3d4e5f6@2026-06-01T08:00:00.000Z' : 'event-1',
    kind,
    subject: kind === 'cron' ? 'a1b2c3d4e5f6' : 'github',
    name: kind === 'cron' ? 'nightly' : 'github',
    slot: null,
    event: null,
    delivery_id: null,
    started_at: '2026-06-01T08:00:00.000Z',
    finished_at: null,
    status: 'running',
    model: null,
    prompt: 'Say hello.',
    answer: null,
    error: null,
    deliveries: [],
    ...changes,
  };
}

/** A ledger whose saves fail with `message`. */
class BrokenLedger extends InMemoryRunLedger {
  constructor(private readonly message: string) {
    super();
  }
  override async save(): Promise<void> {
    throw new Error(this.message);
  }
}

const NOW = () => new Date('2026-06-01T08:00:05Z');

function recorder(ledger = new InMemoryRunLedger(undefined, NOW), timer: ManualTimer | null = new ManualTimer()) {
  const log = new RecordingLogger();
  const clock = new ManualClock('2026-06-01T08:00:05Z');
  return { ledger, log, clock, timer, subject: new RunRecorder(ledger, log, clock, timer) };
}

describe('RunRecorder, the run ledger side of every run kind', () => {
  it('writes a run that ends at once only once, when it ends', async () => {
    const { ledger, subject, timer } = recorder();
    const shown = subject.showRunning(record('cron'));
    timer!.advance(RUNNING_RECORD_AFTER_MS - 1);
    await shown.stop();
    await settled();
    expect(await ledger.get(record('cron').id)).toBeNull();
  });

  it('shows a run still going after RUNNING_RECORD_AFTER_MS as running', async () => {
    const { ledger, subject, timer } = recorder();
    const shown = subject.showRunning(record('cron'));
    timer!.advance(RUNNING_RECORD_AFTER_MS);
    await settled();
    await shown.stop();
    expect((await ledger.get(record('cron').id))?.status).toBe('running');
  });

  it('without a timer, writes the running record at once, for the run to wait for', async () => {
    const { ledger, subject } = recorder(new InMemoryRunLedger(undefined, NOW), null);
    const shown = subject.showRunning(record('webhook'));
    expect(shown.writtenNow).not.toBeNull();
    await shown.writtenNow;
    expect((await ledger.get('event-1'))?.status).toBe('running');
  });

  it('stamps the final record with the time it is written', async () => {
    const { ledger, subject } = recorder();
    const saved = await subject.saveFinal((now) => record('cron', { status: 'ok', finished_at: now.toISOString() }));
    expect(saved.finished_at).toBe('2026-06-01T08:00:05.000Z');
    expect((await ledger.get(saved.id))?.status).toBe('ok');
  });

  it('logs a record the ledger cannot take, in each kind’s words, and goes on', async () => {
    const { log, subject } = recorder(new BrokenLedger('disk full'));
    expect(await subject.save(record('cron'))).toBe(false);
    expect(await subject.save(record('webhook'), { event_id: 'event-1' })).toBe(false);
    expect(log.entries).toEqual([
      {
        level: 'warn',
        message: 'could not write run a1b2c3d4e5f6@2026-06-01T08:00:00.000Z to the run ledger',
        fields: { job: 'a1b2c3d4e5f6', error: 'disk full' },
      },
      { level: 'warn', message: 'could not write webhook event event-1 to the run ledger: disk full', fields: { event_id: 'event-1' } },
    ]);
  });

  it('says why a record the run depends on could not be kept, without logging it', async () => {
    const { log, subject } = recorder(new BrokenLedger('read-only file system'));
    const kept = await subject.keepNow((now) => record('cron', { answer: 'Hi.', started_at: now.toISOString() }));
    expect(kept.failure).toBe('read-only file system');
    expect(kept.record.started_at).toBe('2026-06-01T08:00:05.000Z');
    expect(log.entries).toEqual([]);
  });

  describe('traces (docs/traces.md)', () => {
    const traced = () => {
      const tracing = new RecordingTracing();
      const ledger = new InMemoryRunLedger(undefined, NOW);
      const subject = new RunRecorder(ledger, new RecordingLogger(), new ManualClock('2026-06-01T08:00:05Z'), null, null, tracing);
      return { tracing, ledger, subject };
    };

    it("stamps every record saved within a run's trace with its id, and none saved outside one", async () => {
      const { ledger, subject } = traced();
      const trace = subject.trace({ kind: 'cron_run', jobId: 'a1b2c3d4e5f6', jobName: 'nightly', runId: record('cron').id, slot: null });

      await trace.within(async () => {
        await subject.save(record('cron'));
        expect(subject.traceId()).toBe(trace.traceId);
        const kept = await subject.keepNow(() => record('cron', { answer: 'hi' }));
        expect(kept.record.trace_id).toBe(trace.traceId);
      });
      await subject.save(record('webhook'));

      expect(await ledger.get(record('cron').id)).toMatchObject({ answer: 'hi', trace_id: trace.traceId });
      expect((await ledger.get('event-1'))?.trace_id).toBeUndefined();
    });

    it('keeps the trace id a record has, saved again in another trace (a redelivery)', async () => {
      const { ledger, subject } = traced();
      const other = subject.trace({ kind: 'chat_turn', platform: 'telegram', conversation: 'telegram:1' });

      await other.within(() => subject.save(record('cron', { trace_id: 'trace-of-the-run' })));

      expect((await ledger.get(record('cron').id))?.trace_id).toBe('trace-of-the-run');
    });
  });
});
