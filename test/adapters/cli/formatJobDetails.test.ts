import { jobDetails } from '../../../src/adapters/cli/formatJobDetails.js';
import { createJob, type Job } from '../../../src/domain/Job.js';
import { parseSchedule } from '../../../src/domain/Schedule.js';

const NOW = new Date('2026-06-01T08:00:00Z');

function aJob(overrides: Partial<Job> = {}): Job {
  const schedule = parseSchedule('every 2h', NOW, 'UTC');
  return { ...createJob({ id: 'a1b2c3d4e5f6', name: 'Digest', prompt: 'Summarise the inbox.\nKeep it short.', schedule }, NOW, 'UTC'), ...overrides };
}

const show = (job: Job, extra: { nextRuns?: Date[] } = {}) =>
  jobDetails({ job, timeZone: 'UTC', nextRuns: extra.nextRuns ?? [], recentRuns: [] });

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
});
