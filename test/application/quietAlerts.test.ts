import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import type { CronSettings } from '../../src/application/ports/Settings.js';
import { cronHarness } from '../support/cronHarness.js';

const HOUR = 3600_000;

/** A job delivering to telegram whose runs fail `failing` times, then succeed `succeeding` times, an hour apart. */
async function runs(settings: Partial<CronSettings>, failing: number, succeeding = 0) {
  const h = cronHarness({ settings });
  const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check the feeds', name: 'Feeds', deliver: 'telegram' });
  for (let n = 0; n < failing + succeeding; n += 1) {
    h.agent.reply(n < failing ? new AgentRunError('idle_timeout', 'idle timeout: no output for 600 s') : 'All feeds fine.');
    h.clock.advance(HOUR);
    await h.runDueJobs.execute();
  }
  const notices = h.channel.sent.map((sent) => sent.text).filter((text) => !text.includes('All feeds fine.'));
  return { h, job: h.repository.get(job.id)!, notices };
}

describe('failure alerts', () => {
  it('sends the notice on the first failure of a streak only, then one recovery notice, and keeps the streak', async () => {
    const failing = await runs({}, 5);
    expect(failing.notices).toEqual(["⚠️ Cron job 'Feeds' failed: idle timeout: no output for 600 s"]);
    expect(failing.job.failure_streak).toBe(5);

    const recovered = await runs({}, 5, 2);
    expect(recovered.notices).toEqual([
      "⚠️ Cron job 'Feeds' failed: idle timeout: no output for 600 s",
      "✅ Cron job 'Feeds' recovered after 5 failed runs",
    ]);
    expect(recovered.job.failure_streak).toBe(0);
  });

  it('sends it on every failure with failure_alerts: every, and none with off', async () => {
    expect((await runs({ failureAlerts: 'every' }, 3, 1)).notices).toEqual([
      ...Array.from({ length: 3 }, () => "⚠️ Cron job 'Feeds' failed: idle timeout: no output for 600 s"),
      "✅ Cron job 'Feeds' recovered after 3 failed runs",
    ]);
    expect((await runs({ failureAlerts: 'off' }, 3, 1)).notices).toEqual([]);
  });

  it('pauses a job after pause_after_failures failed runs in a row, saying why, with one notice', async () => {
    const { job, notices, h } = await runs({ pauseAfterFailures: 3 }, 3);

    expect(job).toMatchObject({ state: 'paused', failure_streak: 3 });
    expect(job.paused_reason).toBe(
      'paused after 3 consecutive failed runs (cron.pause_after_failures); the last: idle timeout: no output for 600 s',
    );
    expect(notices).toEqual([
      "⚠️ Cron job 'Feeds' failed: idle timeout: no output for 600 s",
      `⏸️ Cron job 'Feeds' ${job.paused_reason}. Resume it with "agent cron resume" once it is fixed.`,
    ]);
    h.clock.advance(HOUR);
    expect((await h.runDueJobs.execute()).ran).toEqual([]);
  });
});

describe('the daily budget notice', () => {
  it('goes out once a day for the runs a daily cap keeps from starting, whatever the failure streak, and none with alerts off', async () => {
    const notices = async (settings: Partial<CronSettings>) => {
      const h = cronHarness({ settings });
      h.agent.spend = {
        usage: { input_tokens: 1000, output_tokens: 100, cached_input_tokens: 0, model_turns: 1, tool_calls: 0 },
        costUsd: 0.6,
      };
      await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check the feeds', name: 'Feeds', deliver: 'telegram' });
      for (let n = 0; n < 5; n += 1) {
        h.clock.advance(HOUR);
        await h.runDueJobs.execute();
      }
      return { h, notices: h.channel.sent.map((sent) => sent.text).filter((text) => !text.includes('All good.')) };
    };

    const { h, notices: sent } = await notices({ maxCostPerDay: 1 });
    expect(h.agent.requests).toHaveLength(2);
    expect(sent).toEqual(["⚠️ Cron job 'Feeds' failed: daily budget reached ($1.20 of $1.00 in the last 24 h for all runs)"]);
    expect(h.repository.all()[0]).toMatchObject({ last_status: 'blocked_config', failure_streak: 3 });
    expect((await notices({ maxCostPerDay: 1, failureAlerts: 'every' })).notices).toEqual(sent);
    expect((await notices({ maxCostPerDay: 1, failureAlerts: 'off' })).notices).toEqual([]);
  });
});
