import { cronHarness } from '../support/cronHarness.js';

describe('the run ledger of cron runs', () => {
  it('holds a run while it goes on, then its end: status, model, answer and each target with its message ids', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({
      schedule: 'every 1h',
      prompt: 'Summarise the news',
      name: 'Digest',
      deliver: 'telegram,local',
    });
    let seenWhileRunning: unknown[] = [];
    h.agent.reply(async () => {
      seenWhileRunning = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 5 });
      return 'Three things happened.';
    });
    h.clock.advance(3600_000);

    await h.runDueJobs.execute();

    expect(seenWhileRunning).toEqual([
      expect.objectContaining({ status: 'running', finished_at: null, prompt: 'Summarise the news', answer: null }),
    ]);
    const [run] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 5 });
    expect(run).toMatchObject({
      kind: 'cron',
      subject: job.id,
      name: 'Digest',
      slot: job.next_run_at!.replace('Z', '.000Z'),
      status: 'ok',
      answer: 'Three things happened.',
      error: null,
      deliveries: [
        { target: 'telegram', outcome: 'delivered', message_ids: ['1'], error: null },
        { target: 'local', outcome: 'delivered', message_ids: [], error: null },
      ],
    });
    expect(run!.model).not.toBeNull();
    expect(Date.parse(run!.finished_at!)).toBeGreaterThanOrEqual(Date.parse(run!.started_at));
  });

  it("records a refused delivery with the platform's reason, and a failed run with its error", async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', deliver: 'telegram' });
    h.channel.failing.add('telegram');
    h.clock.advance(3600_000);
    await h.runDueJobs.execute();
    h.agent.reply(() => Promise.reject(new Error('the model is down')));
    h.clock.advance(3600_000);
    await h.runDueJobs.execute();

    const [failed, refused] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 5 });
    expect(refused).toMatchObject({
      status: 'delivery_failed',
      deliveries: [{ target: 'telegram', outcome: 'failed', message_ids: [], error: expect.stringMatching(/refused/) }],
    });
    expect(failed).toMatchObject({ status: 'error', error: expect.stringMatching(/the model is down/), answer: null, deliveries: [] });
  });
});
