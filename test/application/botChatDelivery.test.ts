import { parseDeliveryTargets } from '../../src/domain/DeliveryTarget.js';
import { cronHarness } from '../support/cronHarness.js';

const HOUR = 3_600_000;

async function dueJob(h: ReturnType<typeof cronHarness>, deliver: string) {
  const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check the build', name: 'Build watch', deliver });
  h.clock.advance(HOUR);
  return job;
}

describe('bot-chat delivery', () => {
  it('gives the chat the answer after the scheduled-job header and a blank line, not wrapped', async () => {
    const h = cronHarness();
    const job = await dueJob(h, 'bot-chat');

    await h.runDueJobs.execute();

    expect(h.botChat.delivered).toHaveLength(1);
    expect(h.botChat.delivered[0]!.message).toBe(
      '[Cronjob "Build watch" output: a scheduled job, not the user. Review it, act on anything that needs action, and summarize for the chat.]\n\nAll good.',
    );
    expect(h.botChat.delivered[0]).toMatchObject({ profile: null, jobId: job.id, lane: 'delivered' });
    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'ok', last_delivery_queued: null });
  });

  it('records delivery_queued and the receipt when a live owner takes it', async () => {
    const h = cronHarness();
    h.botChat.profiles.add('work');
    h.botChat.liveOwners.add('work');
    const job = await dueJob(h, 'bot-chat:work');

    await h.runDueJobs.execute();

    const stored = h.repository.get(job.id)!;
    expect(stored).toMatchObject({ last_status: 'delivery_queued', last_error: null, last_delivery_error: null });
    expect(stored.last_delivery_queued).toEqual([...h.botChat.receipts]);
    const report = h.outputs.files.get(job.id)!.at(-1)!.content;
    expect(report).toContain('- Status: delivery_queued\n');
    expect(report).toContain(`- Delivery outcome: queued\n- Queued receipts: ${[...h.botChat.receipts].join(', ')}\n`);
  });

  it('refuses a missing profile as blocked_config naming it, spending nothing', async () => {
    const h = cronHarness();
    const job = await dueJob(h, 'bot-chat:nosuch');

    await h.runDueJobs.execute();

    expect(h.agent.requests).toHaveLength(0);
    expect(h.repository.get(job.id)!.last_status).toBe('blocked_config');
    expect(h.repository.get(job.id)!.last_error).toContain('"nosuch"');
  });

  it('needs no platform credentials and is not part of "all"', async () => {
    const h = cronHarness({ platforms: [] });
    const job = await dueJob(h, 'bot-chat, local');

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)!.last_status).toBe('ok');
    expect(h.botChat.delivered).toHaveLength(1);

    const withAll = cronHarness({ platforms: ['telegram'] });
    const allJob = await dueJob(withAll, 'all');
    await withAll.runDueJobs.execute();
    expect(withAll.botChat.delivered).toHaveLength(0);
    expect(withAll.channel.sent).toHaveLength(1);
    expect(withAll.repository.get(allJob.id)!.last_status).toBe('ok');
  });

  it('records a failed command-line lane as delivery_failed with its stderr', async () => {
    const h = cronHarness();
    h.botChat.commandLineFailure = 'model exploded';
    const job = await dueJob(h, 'bot-chat');

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'delivery_failed', last_error: null });
    expect(h.repository.get(job.id)!.last_delivery_error).toMatch(/^bot-chat: .*model exploded/);
  });

  it('lets a real failure on another target win, keeping the queued receipt', async () => {
    const h = cronHarness({ platforms: ['telegram'] });
    h.channel.failing.add('telegram');
    h.botChat.liveOwners.add(null);
    const job = await dueJob(h, 'bot-chat, telegram:1');

    await h.runDueJobs.execute();

    const stored = h.repository.get(job.id)!;
    expect(stored.last_status).toBe('delivery_failed');
    expect(stored.last_delivery_error).toContain('telegram:1');
    expect(stored.last_delivery_queued).toEqual([...h.botChat.receipts]);
    const report = h.outputs.files.get(job.id)!.at(-1)!.content;
    expect(report).toMatch(
      /- Status: delivery_failed\n- Answered by: .*\n- Delivery outcome: failed\n- Delivery error: telegram:1: .*\n- Queued receipts: \S+\n/,
    );
  });

  it('refuses a receipt that already exists instead of delivering it again', async () => {
    const h = cronHarness();
    const job = await dueJob(h, 'bot-chat');
    // The same run (same claim) delivered twice: the fake's receipt is profile|job|execution.
    const claimed = { ...job, claim: { by: 'host:1', at: '2026-06-01T09:00:00Z' } };
    h.botChat.receipts.add(`|${job.id}|host:1@2026-06-01T09:00:00Z`);

    const { report } = await h.execution.runClaimed(claimed, h.clock.now());

    expect(report.outcome.status).toBe('delivery_failed');
    expect(h.botChat.delivered).toHaveLength(0);
  });

  it.each(['bot-chat:../etc', 'bot-chat:a/b', 'bot-chat:..', 'bot-chat:.hidden'])('refuses the profile name in %j', (target) => {
    expect(() => parseDeliveryTargets(target)).toThrow(/profile with characters that are not allowed/);
  });
});
