import type { RunLedger } from '../../src/application/ports/RunLedger.js';
import type { RunRecord, RunRetention } from '../../src/domain/runs/RunRecord.js';
import type { RunTranscript } from '../../src/domain/runs/RunTranscript.js';

/** A transcript of a run: a turn that called a tool, the call, and the answer. */
export function aTranscript(n: number): RunTranscript {
  return [
    {
      type: 'model_turn',
      started_at: '2026-06-20T08:00:00.000Z',
      ended_at: '2026-06-20T08:00:01.000Z',
      model: 'openai (gpt-4o)',
      text: '',
      tool_calls: [{ id: `call_${n}`, name: 'terminal', arguments: '{"command":"date"}' }],
      usage: { input_tokens: 120, output_tokens: 8, cached_input_tokens: 0 },
    },
    {
      type: 'tool_call',
      started_at: '2026-06-20T08:00:01.000Z',
      ended_at: '2026-06-20T08:00:02.000Z',
      call_id: `call_${n}`,
      name: 'terminal',
      arguments: '{"command":"date"}',
      result: `run ${n}: ünïcode ✓`,
      result_bytes: 20,
      cut: null,
      is_error: false,
    },
    {
      type: 'model_turn',
      started_at: '2026-06-20T08:00:02.000Z',
      ended_at: '2026-06-20T08:00:03.000Z',
      model: 'openai (gpt-4o)',
      text: `Digest ${n}`,
      tool_calls: [],
    },
  ];
}

export interface RunLedgerSubject {
  ledger: RunLedger;
  /** Another ledger on the same storage (another process). */
  another(): Promise<RunLedger>;
  cleanup?: () => Promise<void>;
}

/** The times the contract's runs start at, and the "now" every subject is made with. */
export const LEDGER_NOW = new Date('2026-06-20T12:00:00.000Z');

/** Cron run `n` of `subject`, started n minutes after 2026-06-20 08:00 UTC; `overrides` replace fields. */
export function aRun(n: number, overrides: Partial<RunRecord> = {}): RunRecord {
  const started = new Date(Date.UTC(2026, 5, 20, 8, n));
  return {
    id: `run-${n}`,
    kind: 'cron',
    subject: 'job1',
    name: 'Morning digest',
    slot: started.toISOString(),
    event: null,
    delivery_id: null,
    started_at: started.toISOString(),
    finished_at: new Date(started.getTime() + 5000).toISOString(),
    status: 'ok',
    model: 'openai/gpt-4o',
    prompt: 'Summarise the news',
    answer: `Digest ${n}: ünïcode ✓\nsecond line`,
    error: null,
    deliveries: [{ target: 'telegram:-100123', outcome: 'delivered', message_ids: [`${n}00`, `${n}01`], error: null }],
    ...overrides,
  };
}

/** What every RunLedger promises; each test gets a fresh one with `retention`. */
export function describeRunLedgerContract(name: string, makeSubject: (retention: RunRetention) => Promise<RunLedgerSubject>): void {
  describe(`${name} (RunLedger contract)`, () => {
    let subject: RunLedgerSubject | undefined;
    const use = async (retention: RunRetention = { count: 200, days: 30 }) => {
      subject = await makeSubject(retention);
      return subject.ledger;
    };

    afterEach(async () => {
      await subject?.cleanup?.();
      subject = undefined;
    });

    it('has nothing when nothing was saved', async () => {
      const ledger = await use();
      expect(await ledger.list({ limit: 10 })).toEqual([]);
      expect(await ledger.list({ kind: 'cron', subject: 'job1', limit: 10 })).toEqual([]);
      expect(await ledger.get('run-1')).toBeNull();
    });

    it('gives back a run field for field, and its later save in its place', async () => {
      const ledger = await use();
      const running = aRun(1, { status: 'running', finished_at: null, answer: null, deliveries: [] });
      await ledger.save(running);
      expect(await ledger.get('run-1')).toEqual(running);

      const ended = aRun(1, {
        status: 'delivery_failed',
        deliveries: [{ target: 'slack:C1', outcome: 'failed', message_ids: [], error: 'slack refused: channel_not_found' }],
      });
      await ledger.save(ended);
      expect(await ledger.get('run-1')).toEqual(ended);
      expect(await ledger.list({ limit: 10 })).toEqual([ended]);
    });

    it('keeps a skipped slot (nothing ran: no model, prompt, answer or delivery) like any run, and lists it', async () => {
      const ledger = await use();
      const skipped = aRun(2, {
        status: 'skipped',
        model: null,
        prompt: null,
        answer: null,
        error: 'skipped: the job was due at 2026-06-20T07:00:00Z but nothing ran it until 2026-06-20T08:02:00Z (2 slots missed)',
        deliveries: [],
        finished_at: new Date(Date.UTC(2026, 5, 20, 8, 2)).toISOString(),
      });
      await ledger.save(aRun(1));
      await ledger.save(skipped);

      expect(await ledger.get('run-2')).toEqual(skipped);
      expect((await ledger.list({ kind: 'cron', subject: 'job1', limit: 10 })).map((run) => run.status)).toEqual(['skipped', 'ok']);
    });

    it('lists the newest first, by kind and by job or route, up to the limit', async () => {
      const ledger = await use();
      await ledger.save(aRun(2));
      await ledger.save(aRun(1));
      await ledger.save(aRun(3, { subject: 'job2' }));
      const webhook = aRun(4, {
        id: 'event-4',
        kind: 'webhook',
        subject: 'github-prs',
        name: 'github-prs',
        slot: null,
        event: 'pull_request',
        delivery_id: 'd-4',
      });
      await ledger.save(webhook);

      const ids = async (query: Parameters<RunLedger['list']>[0]) => (await ledger.list(query)).map((run) => run.id);
      expect(await ids({ limit: 10 })).toEqual(['event-4', 'run-3', 'run-2', 'run-1']);
      expect(await ids({ limit: 2 })).toEqual(['event-4', 'run-3']);
      expect(await ids({ kind: 'cron', limit: 10 })).toEqual(['run-3', 'run-2', 'run-1']);
      expect(await ids({ kind: 'cron', subject: 'job1', limit: 10 })).toEqual(['run-2', 'run-1']);
      expect(await ids({ kind: 'webhook', subject: 'github-prs', limit: 10 })).toEqual(['event-4']);
      expect(await ids({ kind: 'webhook', subject: 'job1', limit: 10 })).toEqual([]);
      expect(await ledger.get('event-4')).toEqual(webhook);
    });

    it("keeps each job's newest runs, the one just saved always", async () => {
      const ledger = await use({ count: 3, days: 30 });
      for (let n = 1; n <= 6; n += 1) await ledger.save(aRun(n));
      await ledger.save(aRun(7, { subject: 'job2' }));
      // Saved last, though it started first.
      await ledger.save(aRun(0, { id: 'late' }));

      expect((await ledger.list({ kind: 'cron', subject: 'job1', limit: 10 })).map((run) => run.id)).toEqual(['run-6', 'run-5', 'late']);
      expect((await ledger.list({ kind: 'cron', subject: 'job2', limit: 10 })).map((run) => run.id)).toEqual(['run-7']);
    });

    it('lists no run that started longer ago than the retention days', async () => {
      const ledger = await use({ count: 200, days: 30 });
      const old = aRun(1, { id: 'old', started_at: '2026-05-01T08:00:00.000Z' });
      await ledger.save(old);
      await ledger.save(aRun(2));

      expect((await ledger.list({ limit: 10 })).map((run) => run.id)).toEqual(['run-2']);
      expect(await ledger.get('old')).toBeNull();
    });

    describe('transcripts', () => {
      it('keeps a run transcript apart from its record: get and list give the record alone, transcriptOf the transcript, in every process', async () => {
        const ledger = await use();
        await ledger.save(aRun(1));
        await ledger.saveTranscript(aRun(1), aTranscript(1));

        expect(await ledger.transcriptOf('run-1')).toEqual(aTranscript(1));
        expect(await (await subject!.another()).transcriptOf('run-1')).toEqual(aTranscript(1));
        expect(await ledger.get('run-1')).toEqual(aRun(1));
        expect(await ledger.list({ limit: 10 })).toEqual([aRun(1)]);
      });

      it('takes a transcript saved before its run record, and a later one in its place', async () => {
        const ledger = await use();
        await ledger.saveTranscript(aRun(1), aTranscript(1));
        expect(await ledger.transcriptOf('run-1')).toBeNull();

        await ledger.save(aRun(1));
        expect(await ledger.transcriptOf('run-1')).toEqual(aTranscript(1));
        await ledger.saveTranscript(aRun(1), aTranscript(2));
        expect(await ledger.transcriptOf('run-1')).toEqual(aTranscript(2));
      });

      it('has no transcript for a run without one, nor for a run it does not have', async () => {
        const ledger = await use();
        await ledger.save(aRun(1));

        expect(await ledger.transcriptOf('run-1')).toBeNull();
        expect(await ledger.transcriptOf('run-9')).toBeNull();
      });

      it('removes a transcript with its run under the retention: beyond the count of its job, and too old', async () => {
        const ledger = await use({ count: 2, days: 30 });
        const old = aRun(0, { id: 'old', started_at: '2026-05-01T08:00:00.000Z' });
        await ledger.save(old);
        await ledger.saveTranscript(old, aTranscript(0));
        for (let n = 1; n <= 3; n += 1) {
          await ledger.save(aRun(n));
          await ledger.saveTranscript(aRun(n), aTranscript(n));
        }

        expect(await ledger.transcriptOf('old')).toBeNull();
        expect(await ledger.transcriptOf('run-1')).toBeNull();
        expect(await ledger.transcriptOf('run-2')).toEqual(aTranscript(2));
        expect(await ledger.transcriptOf('run-3')).toEqual(aTranscript(3));
      });
    });

    it('claims a run for its redelivery once: another claim finds it taken until it is found abandoned or saved without the claim', async () => {
      const ledger = await use();
      await ledger.save(aRun(1, { status: 'delivery_failed' }));
      const mine = { by: 'host-a:100', at: '2026-06-20T11:00:00.000Z' };
      const theirs = { by: 'host-b:200', at: '2026-06-20T11:30:00.000Z' };

      const claimed = await ledger.claimForRedelivery('run-1', mine, null);
      expect(claimed).toEqual({ ...aRun(1, { status: 'delivery_failed' }), redelivery_claim: mine });
      expect(await ledger.get('run-1')).toEqual(claimed);
      expect(await ledger.claimForRedelivery('run-1', theirs, null)).toBeNull();
      // A claim the caller judged abandoned, but not the one it holds: nothing changes.
      expect(await ledger.claimForRedelivery('run-1', theirs, { ...mine, at: '2026-06-20T10:00:00.000Z' })).toBeNull();
      expect((await ledger.get('run-1'))?.redelivery_claim).toEqual(mine);

      expect(await ledger.claimForRedelivery('run-1', theirs, mine)).toEqual({ ...claimed, redelivery_claim: theirs });
      await ledger.save({ ...aRun(1), redelivered_at: '2026-06-20T11:31:00.000Z', redelivery_claim: null });
      expect(await ledger.get('run-1')).toEqual({ ...aRun(1), redelivered_at: '2026-06-20T11:31:00.000Z', redelivery_claim: null });
      expect((await ledger.claimForRedelivery('run-1', mine, null))?.redelivery_claim).toEqual(mine);
    });

    it('claims no run it does not keep', async () => {
      const ledger = await use({ count: 200, days: 30 });
      await ledger.save(aRun(1, { id: 'old', started_at: '2026-05-01T08:00:00.000Z' }));
      const claim = { by: 'host-a:100', at: '2026-06-20T11:00:00.000Z' };
      expect(await ledger.claimForRedelivery('nothing-like-it', claim, null)).toBeNull();
      expect(await ledger.claimForRedelivery('old', claim, null)).toBeNull();
      expect(await ledger.claimForRedelivery('../escape', claim, null)).toBeNull();
    });

    it('gives a run to one of several claims made at once, from this process and another', async () => {
      const ledger = await use();
      const other = await subject!.another();
      await ledger.save(aRun(1));
      const claims = Array.from({ length: 6 }, (_, n) => ({ by: `host-${n}:${n}`, at: '2026-06-20T11:00:00.000Z' }));

      const results = await Promise.all(claims.map((claim, n) => (n % 2 === 0 ? ledger : other).claimForRedelivery('run-1', claim, null)));

      const winners = results.filter((result) => result !== null);
      expect(winners).toHaveLength(1);
      expect((await ledger.get('run-1'))?.redelivery_claim).toEqual(winners[0]!.redelivery_claim);
    });

    it('shows what another process saved, and keeps its retention over both', async () => {
      const ledger = await use({ count: 3, days: 30 });
      const other = await subject!.another();
      await ledger.save(aRun(1));
      await other.save(aRun(2));
      expect(await ledger.get('run-2')).toEqual(aRun(2));
      for (let n = 3; n <= 8; n += 1) await (n % 2 === 0 ? other : ledger).save(aRun(n));

      for (const each of [ledger, other]) {
        expect((await each.list({ kind: 'cron', subject: 'job1', limit: 10 })).map((run) => run.id)).toEqual(['run-8', 'run-7', 'run-6']);
      }
    });

    it('lists the runs whose answer waits for its delivery, of one kind, oldest first, until each is saved without it', async () => {
      const ledger = await use();
      const other = await subject!.another();
      const claim = { by: 'host:1', at: '2026-06-20T11:00:00.000Z' };
      const waiting = (n: number, overrides: Partial<RunRecord> = {}) =>
        aRun(n, { status: 'running', finished_at: null, deliveries: [], delivery_pending: true, redelivery_claim: claim, ...overrides });
      expect(await ledger.pendingDeliveries('cron')).toEqual([]);
      await ledger.save(aRun(1));
      await ledger.save(waiting(3, { subject: 'job2' }));
      await other.save(waiting(2));
      await ledger.save(waiting(4, { kind: 'webhook', subject: 'pulls' }));

      expect((await ledger.pendingDeliveries('cron')).map((run) => run.id)).toEqual(['run-2', 'run-3']);
      expect(await other.pendingDeliveries('cron')).toEqual([waiting(2), waiting(3, { subject: 'job2' })]);
      expect((await ledger.pendingDeliveries('webhook')).map((run) => run.id)).toEqual(['run-4']);

      // Claimed again by a redelivery: still waiting. Saved with its outcome: no longer.
      const taker = { by: 'host:2', at: '2026-06-20T11:30:00.000Z' };
      expect(await other.claimForRedelivery('run-2', taker, claim)).toEqual(waiting(2, { redelivery_claim: taker }));
      expect((await ledger.pendingDeliveries('cron')).map((run) => run.id)).toEqual(['run-2', 'run-3']);
      await other.save(aRun(2, { redelivery_claim: null, delivery_pending: false }));
      await ledger.save(aRun(3, { subject: 'job2' }));
      expect(await ledger.pendingDeliveries('cron')).toEqual([]);
      expect(await other.pendingDeliveries('cron')).toEqual([]);
      expect(await ledger.get('run-2')).toEqual(aRun(2, { redelivery_claim: null, delivery_pending: false }));
    });

    it('lists no waiting answer of a run it no longer keeps', async () => {
      const ledger = await use({ count: 2, days: 30 });
      await ledger.save(aRun(1, { status: 'running', finished_at: null, delivery_pending: true }));
      await ledger.save(aRun(2));
      await ledger.save(aRun(3));
      expect(await ledger.pendingDeliveries('cron')).toEqual([]);
    });

    it('sums what the runs of a period spent, of one job or of all, with their usage and cost as saved', async () => {
      const ledger = await use();
      const spent = (input: number, cost: number | null) => ({
        usage: { input_tokens: input, output_tokens: 10, cached_input_tokens: 5, model_turns: 2, tool_calls: 1 },
        cost_usd: cost,
      });
      await ledger.save(
        aRun(1, { usage: { input_tokens: 1000, output_tokens: 100, cached_input_tokens: 0, model_turns: 1, tool_calls: 0 } }),
      );
      await ledger.save(aRun(10, { ...spent(100, 0.25) }));
      await ledger.save(aRun(20, { ...spent(200, 0.125) }));
      await ledger.save(aRun(30, { ...spent(300, null) }));
      await ledger.save(aRun(40, { id: 'hook-1', kind: 'webhook', subject: 'github', ...spent(400, 1.5) }));
      await ledger.save(aRun(50, { id: 'plain' }));

      const since = new Date(Date.UTC(2026, 5, 20, 8, 10));
      expect(await ledger.spentSince({ kind: 'cron', subject: 'job1', since })).toEqual({
        runs: 4,
        usage: { input_tokens: 600, output_tokens: 30, cached_input_tokens: 15, model_turns: 6, tool_calls: 3 },
        cost_usd: 0.375,
        unpriced_runs: 1,
      });
      expect(await ledger.spentSince({ since })).toEqual({
        runs: 5,
        usage: { input_tokens: 1000, output_tokens: 40, cached_input_tokens: 20, model_turns: 8, tool_calls: 4 },
        cost_usd: 1.875,
        unpriced_runs: 1,
      });
      expect((await ledger.spentSince({ kind: 'cron', subject: 'job1', since: new Date(0) })).usage.input_tokens).toBe(1600);
      expect(await ledger.spentSince({ kind: 'cron', subject: 'nobody', since })).toEqual({
        runs: 0,
        usage: { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, model_turns: 0, tool_calls: 0 },
        cost_usd: 0,
        unpriced_runs: 0,
      });
    });

    describe('runs whose process is gone', () => {
      const runningRun = (n: number, overrides: Partial<RunRecord> = {}) =>
        aRun(n, { status: 'running', finished_at: null, answer: null, deliveries: [], claimant: 'host-a:4242', ...overrides });
      const at = new Date('2026-06-20T11:30:00.000Z');

      it('lists only the runs still running, of every kind, job and route, oldest first, and none at all when none runs', async () => {
        const ledger = await use();
        expect(await ledger.running(10)).toEqual([]);
        await ledger.save(aRun(1));
        await ledger.save(runningRun(3, { subject: 'job2' }));
        await ledger.save(runningRun(2, { kind: 'webhook', subject: 'github', slot: null, claimant: null }));
        await ledger.save(runningRun(4));
        await ledger.save(aRun(4));

        expect((await ledger.running(10)).map((run) => run.id)).toEqual(['run-2', 'run-3']);
        expect(await ledger.running(1)).toEqual([runningRun(2, { kind: 'webhook', subject: 'github', slot: null, claimant: null })]);
      });

      it('records a running run interrupted, keeping what it had, and lists it running no more, in every process', async () => {
        const ledger = await use();
        const other = await subject!.another();
        await ledger.save(runningRun(1));

        const settled = await other.settleInterrupted('run-1', 'the process host-a:4242 that ran it is gone', at);

        const expected = {
          ...runningRun(1),
          status: 'error',
          finished_at: at.toISOString(),
          error: 'interrupted: the process host-a:4242 that ran it is gone',
        };
        expect(settled).toEqual(expected);
        for (const each of [ledger, other]) {
          expect(await each.get('run-1')).toEqual(expected);
          expect(await each.running(10)).toEqual([]);
          expect(await each.list({ kind: 'cron', subject: 'job1', limit: 10 })).toEqual([expected]);
        }
      });

      it('never reopens or rewrites a run that ended, nor one it does not have', async () => {
        const ledger = await use();
        await ledger.save(runningRun(1));
        await ledger.save(aRun(1, { claimant: 'host-a:4242' }));

        expect(await ledger.settleInterrupted('run-1', 'gone', at)).toBeNull();
        expect(await ledger.settleInterrupted('run-9', 'gone', at)).toBeNull();
        expect(await ledger.get('run-1')).toEqual(aRun(1, { claimant: 'host-a:4242' }));
        expect(await ledger.get('run-9')).toBeNull();

        await ledger.save(runningRun(2));
        expect(await ledger.settleInterrupted('run-2', 'gone', at)).not.toBeNull();
        expect(await ledger.settleInterrupted('run-2', 'gone again', new Date('2026-06-20T11:45:00.000Z'))).toBeNull();
        expect((await ledger.get('run-2'))?.error).toBe('interrupted: gone');
      });

      it('takes a later save of the run as it is: the run that ends after all is recorded as it ended', async () => {
        const ledger = await use();
        await ledger.save(runningRun(1));
        await ledger.settleInterrupted('run-1', 'gone', at);
        await ledger.save(aRun(1));
        expect(await ledger.get('run-1')).toEqual(aRun(1));
        expect(await ledger.running(10)).toEqual([]);
      });

      it('leaves an answer waiting for its delivery to the gateway that delivers it: neither listed running nor recorded interrupted', async () => {
        const ledger = await use();
        await ledger.save(runningRun(1));
        const waiting = runningRun(1, {
          answer: 'the answer',
          delivery_pending: true,
          redelivery_claim: { by: 'host-a:4242', at: '2026-06-20T11:00:00.000Z' },
        });
        await ledger.save(waiting);

        expect(await ledger.running(10)).toEqual([]);
        expect(await ledger.settleInterrupted('run-1', 'gone', at)).toBeNull();
        expect(await ledger.get('run-1')).toEqual(waiting);
        expect((await ledger.pendingDeliveries('cron')).map((run) => run.id)).toEqual(['run-1']);
      });

      it('lists no running run the retention dropped', async () => {
        const ledger = await use({ count: 2, days: 30 });
        await ledger.save(runningRun(1));
        await ledger.save(aRun(2));
        await ledger.save(aRun(3));
        expect(await ledger.running(10)).toEqual([]);
        expect(await ledger.settleInterrupted('run-1', 'gone', at)).toBeNull();
      });
    });
  });
}
