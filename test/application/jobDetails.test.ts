import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import { cronHarness } from '../support/cronHarness.js';

const HOUR = 3600_000;

/** A recurring job run by hand three times, an hour apart: ok, failed, ok. */
async function jobWithThreeRuns(timeZone = 'UTC') {
  const h = cronHarness({ settings: { timeZone } });
  const job = await h.createJob.execute({
    schedule: 'every 1h',
    prompt: 'Summarise the inbox',
    name: 'Inbox',
    deliver: 'local',
    repeat: 5,
  });
  h.agent.reply('Three new mails.\nNone urgent.', new AgentRunError('idle_timeout', 'idle timeout: no output for 600 s'), 'All quiet.');
  for (let run = 0; run < 3; run += 1) {
    await h.runJobNow.execute({ job: job.id });
    h.clock.advance(HOUR);
  }
  return { h, job };
}

describe('listing the runs of a job', () => {
  it('gives each run from its report, newest first: time, status and the first line of the answer or error', async () => {
    const { h } = await jobWithThreeRuns();

    const { runs } = await h.listJobRuns.execute({ job: 'inbox', limit: 10 });

    expect(runs.map(({ startedAt, status, headline }) => ({ startedAt: startedAt?.toISOString(), status, headline }))).toEqual([
      { startedAt: '2026-06-01T10:00:00.000Z', status: 'ok', headline: 'All quiet.' },
      { startedAt: '2026-06-01T09:00:00.000Z', status: 'error', headline: 'idle timeout: no output for 600 s' },
      { startedAt: '2026-06-01T08:00:00.000Z', status: 'ok', headline: 'Three new mails.' },
    ]);
    expect(runs[2]!.response).toBe('Three new mails.\nNone urgent.');
  });

  it('gives at most `limit` runs', async () => {
    const { h } = await jobWithThreeRuns();

    expect((await h.listJobRuns.execute({ job: 'Inbox', limit: 2 })).runs.map((run) => run.status)).toEqual(['ok', 'error']);
  });

  it('gives no runs for a job that never ran', async () => {
    const h = cronHarness();
    await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Fresh' });

    expect((await h.listJobRuns.execute({ job: 'fresh', limit: 10 })).runs).toEqual([]);
  });

  it('refuses a job that does not exist, as the other commands do', async () => {
    await expect(cronHarness().listJobRuns.execute({ job: 'nope', limit: 10 })).rejects.toMatchObject({ code: 'JOB.NOT_FOUND' });
  });
});

describe('showing a job', () => {
  it('gives the job, its next five runs in the configured zone and its last runs, and writes nothing', async () => {
    const { h, job } = await jobWithThreeRuns('Europe/Berlin');
    const writes = h.repository.writes;

    const shown = await h.showJob.execute({ job: job.id });

    expect(shown.job).toMatchObject({ id: job.id, name: 'Inbox', repeat: { times: 5, completed: 3 }, last_status: 'ok' });
    expect(shown.timeZone).toBe('Europe/Berlin');
    // Two runs are left of five. The runs by hand at 09:00 and 10:00 used those due slots.
    expect(shown.nextRuns.map((run) => run.toISOString())).toEqual(['2026-06-01T11:00:00.000Z', '2026-06-01T12:00:00.000Z']);
    expect(shown.recentRuns.map((run) => run.status)).toEqual(['ok', 'error', 'ok']);
    expect(h.repository.writes).toBe(writes);
  });

  it("gives a one-shot's one time as its next runs", async () => {
    const h = cronHarness();
    await h.createJob.execute({ schedule: '30m', prompt: 'Stretch', name: 'Stretch' });

    expect((await h.showJob.execute({ job: 'stretch' })).nextRuns.map((run) => run.toISOString())).toEqual(['2026-06-01T08:30:00.000Z']);
  });

  it('refuses a job that does not exist', async () => {
    await expect(cronHarness().showJob.execute({ job: 'nope' })).rejects.toMatchObject({
      code: 'JOB.NOT_FOUND',
      message: 'No job has the id or name "nope"; see "agent cron list".',
    });
  });
});
