import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import type { RunTranscript } from '../../src/domain/runs/RunTranscript.js';
import { cronHarness } from '../support/cronHarness.js';

const TRANSCRIPT: RunTranscript = [
  {
    type: 'model_turn',
    started_at: '2026-06-20T08:00:00.000Z',
    ended_at: '2026-06-20T08:00:01.000Z',
    model: 'fake',
    text: '',
    tool_calls: [{ id: 'call_1', name: 'terminal', arguments: '{"command":"date"}' }],
  },
];

describe('the transcripts of cron runs', () => {
  it('are kept in the run ledger with the run that answered', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'What time is it?', deliver: 'local' });
    h.agent.transcript = TRANSCRIPT;
    h.clock.advance(3600_000);

    await h.runDueJobs.execute();

    const [run] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 5 });
    expect(await h.ledger.transcriptOf(run!.id)).toEqual(TRANSCRIPT);
  });

  it('are kept, as far as they went, with a run that failed', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Loop', deliver: 'local' });
    const failure = new AgentRunError('failed', 'The run made too many tool calls.');
    failure.transcript = TRANSCRIPT;
    h.agent.reply(failure);
    h.clock.advance(3600_000);

    await h.runDueJobs.execute();

    const [run] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 5 });
    expect(run).toMatchObject({ status: 'error' });
    expect(await h.ledger.transcriptOf(run!.id)).toEqual(TRANSCRIPT);
  });

  it('are saved as they grow, while the run goes on, and once more when it ends', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Look', deliver: 'local' });
    const saved: Array<{ id: string; entries: number }> = [];
    const save = h.ledger.saveTranscript.bind(h.ledger);
    h.ledger.saveTranscript = async (run, transcript) => {
      saved.push({ id: run.id, entries: transcript.length });
      await save(run, transcript);
    };
    let seenDuringTheRun: number | null = null;
    h.agent.transcript = [...TRANSCRIPT, ...TRANSCRIPT];
    h.agent.reply(async (request) => {
      request.onTranscript?.(TRANSCRIPT);
      await new Promise((resolve) => setImmediate(resolve));
      seenDuringTheRun = saved.length;
      return 'Looked.';
    });

    await h.runJobNow.execute({ job: job.id });

    const [run] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 5 });
    expect(seenDuringTheRun).toBe(1);
    expect(saved).toEqual([
      { id: run!.id, entries: 1 },
      { id: run!.id, entries: 2 },
    ]);
    expect(await h.ledger.transcriptOf(run!.id)).toHaveLength(2);
  });
});
