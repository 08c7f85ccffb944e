import { jobDetails } from '../../../src/adapters/cli/formatJobDetails.js';
import { jobTable } from '../../../src/adapters/cli/formatJobs.js';
import { createJob, type Job } from '../../../src/domain/Job.js';
import { parseSchedule } from '../../../src/domain/Schedule.js';

const NOW = new Date('2026-06-01T08:00:00Z');

function aJob(overrides: Partial<Job> = {}): Job {
  const schedule = parseSchedule('every 2h', NOW, 'UTC');
  return {
    ...createJob({ id: 'a1b2c3d4e5f6', name: 'Digest', prompt: 'Summarise the inbox.\nKeep it short.', schedule }, NOW, 'UTC'),
    ...overrides,
  };
}

const show = (job: Job, extra: { nextRuns?: Date[]; catchUp?: 'once' | 'skip' } = {}) =>
  jobDetails({ job, timeZone: 'UTC', nextRuns: extra.nextRuns ?? [], recentRuns: [], catchUp: extra.catchUp });

describe('agent cron show, as text', () => {
  it('continues a value of several lines under its first line', () => {
    expect(show(aJob())).toContain('  Prompt:              Summarise the inbox.\n                       Keep it short.\n');
  });

  it('says since when a paused job is paused and that it has no next run meanwhile', () => {
    const text = show(aJob({ state: 'paused', enabled: false, paused_at: '2026-06-01T09:30:00Z' }));

    expect(text).toContain('  State:               paused since 2026-06-01 09:30 (disabled)\n');
    expect(text).toContain('  Next run:            none while paused ("agent cron resume" schedules it again)\n');
  });

  it('names the model and provider a job asks for, the errors of its last run, and its origin chat', () => {
    const text = show(
      aJob({
        model: 'small',
        provider: 'openai',
        deliver: 'origin',
        origin: { platform: 'telegram', chat_id: '-100123', thread_id: '7' },
        last_status: 'delivery_failed',
        last_delivery_error: 'telegram:-100123: chat not found\nslack: rate limited',
      }),
    );

    expect(text).toContain('  Model:               small (provider openai)\n');
    expect(text).toContain('  Delivers to:         the chat it was created in: telegram chat -100123, thread 7 (origin)\n');
    expect(text).toContain('  Last delivery error: telegram:-100123: chat not found\n                       slack: rate limited\n');
  });

  it('lists the next runs with their weekday, and says when there are no runs yet', () => {
    const text = show(aJob(), { nextRuns: [new Date('2026-06-01T10:00:00Z'), new Date('2026-06-01T12:00:00Z')] });

    expect(text).toContain('\nNext 2 runs (UTC):\n  2026-06-01 10:00  Mon\n  2026-06-01 12:00  Mon\n');
    expect(text.endsWith('\nRecent runs: none yet.')).toBe(true);
  });

  it('says whether the agent runs, and which catch-up policy a recurring job follows and whose it is', () => {
    expect(show(aJob())).toContain('  Agent:               runs on every run\n');
    expect(show(aJob())).toContain('  Catch-up:            once: an overdue slot runs once (cron.catch_up)\n');
    expect(show(aJob(), { catchUp: 'skip' })).toContain(
      '  Catch-up:            skip: an overdue slot is skipped, the job waits for its next one (cron.catch_up)\n',
    );

    const scriptOnly = show(aJob({ no_agent: true, script: 'disk.sh', prompt: '', catch_up: 'skip' }));
    expect(scriptOnly).toContain("  Agent:               not run: the script's output is delivered as the answer (--no-agent)\n");
    expect(scriptOnly).toContain('  Prompt:              none\n');
    expect(scriptOnly).toContain(
      "  Catch-up:            skip: an overdue slot is skipped, the job waits for its next one (the job's own --catch-up)\n",
    );
  });

  it('shows no catch-up policy for a one-shot, which has the missed rule instead', () => {
    const oneShot = createJob({ id: 'b1b2c3d4e5f6', prompt: 'Once', schedule: parseSchedule('30m', NOW, 'UTC') }, NOW, 'UTC');
    expect(show(oneShot)).not.toContain('Catch-up');
  });
});

describe('agent cron list, as text', () => {
  it('names the jobs that run without the agent under the table, leaving its columns as they are', () => {
    const table = jobTable([aJob(), aJob({ id: 'f6e5d4c3b2a1', name: 'Disks', no_agent: true, script: 'disk.sh' })], 'UTC', false);
    const lines = table.split('\n');

    expect(lines.slice(1, 3).map((line) => line.split(/\s{2,}/)[3])).toEqual(['scheduled', 'scheduled']);
    expect(lines.slice(3)).toEqual(['', "Without the agent (the script's output is delivered):", "  f6e5d4c3b2a1 'Disks'"]);
  });
});
