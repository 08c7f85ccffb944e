import { JobChanges } from '../../src/application/cron/JobChanges.js';
import { AppError } from '../../src/domain/errors.js';
import { cronHarness } from '../support/cronHarness.js';

function subject() {
  const h = cronHarness({ platforms: ['telegram'] });
  const changes = new JobChanges(h.createJob, h.editJob, h.pauseJob, h.resumeJob, h.removeJob, h.jobWarnings);
  return { h, changes };
}

const NOT_CONFIGURED =
  'Delivery platform "slack" is not configured: set platforms.slack.bot_token (or SLACK_BOT_TOKEN) in config.yaml or the environment.';

describe("the job tool's changes to stored jobs", () => {
  it('create a job and say what would keep it from doing what it says', async () => {
    const { h, changes } = subject();

    const { job, warnings } = await changes.create({ schedule: 'every 1h', prompt: 'Digest', name: 'digest', deliver: 'telegram,slack' });

    expect(h.repository.get(job.id)).toMatchObject({ name: 'digest', deliver: 'telegram,slack' });
    expect(warnings).toEqual([NOT_CONFIGURED]);
  });

  it('update a job and say the same of it as it is now', async () => {
    const { h, changes } = subject();
    const { job, warnings: before } = await changes.create({ schedule: 'every 1h', prompt: 'Digest', deliver: 'telegram' });

    const { job: updated, warnings } = await changes.update({ job: job.id, deliver: 'slack' });

    expect(before).toEqual([]);
    expect(updated.deliver).toBe('slack');
    expect(h.repository.get(job.id)?.deliver).toBe('slack');
    expect(warnings).toEqual([NOT_CONFIGURED]);
  });

  it('pause a job with its reason, resume it and remove it', async () => {
    const { h, changes } = subject();
    const { job } = await changes.create({ schedule: 'every 1h', prompt: 'Digest' });

    expect(await changes.pause(job.id, 'holiday')).toMatchObject({ state: 'paused', paused_reason: 'holiday' });
    expect(await changes.resume(job.id)).toMatchObject({ state: 'scheduled', paused_reason: null });
    expect((await changes.remove(job.id)).id).toBe(job.id);
    expect(h.repository.all()).toEqual([]);
  });

  it("refuse what the use cases refuse, in the use cases' words", async () => {
    const { h, changes } = subject();
    const unknown = (await h.pauseJob.execute({ job: '000000000bad' }).catch((error: unknown) => error)) as AppError;
    const unreadable = (await h.createJob.execute({ schedule: 'whenever', prompt: 'x' }).catch((error: unknown) => error)) as AppError;

    expect(unknown).toBeInstanceOf(AppError);
    expect(unreadable).toBeInstanceOf(AppError);
    await expect(changes.pause('000000000bad')).rejects.toMatchObject({ code: unknown.code, message: unknown.message });
    await expect(changes.create({ schedule: 'whenever', prompt: 'x' })).rejects.toMatchObject({
      code: unreadable.code,
      message: unreadable.message,
    });
  });
});
