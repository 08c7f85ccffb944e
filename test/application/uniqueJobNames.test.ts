import { JobChanges } from '../../src/application/cron/JobChanges.js';
import { JobControlService } from '../../src/application/cron/JobControlService.js';
import { CronJobTool } from '../../src/adapters/tools/CronJobTool.js';
import type { ToolCallContext } from '../../src/application/agent/ports/Tool.js';
import { anHourlyJob } from '../support/jobs.js';
import { cronHarness } from '../support/cronHarness.js';

const chatSession: ToolCallContext = { signal: new AbortController().signal, unattended: false };

describe('job names are unique, ignoring case', () => {
  it('refuses a chosen name another job has, in one sentence, and writes nothing', async () => {
    const h = cronHarness();
    const digest = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Summarise', name: 'Digest' });
    const writes = h.repository.writes;

    const refused = h.createJob.execute({ schedule: 'every 2h', prompt: 'Other', name: 'DIGEST' });

    await expect(refused).rejects.toMatchObject({
      code: 'JOB.NAME_TAKEN',
      message: `The name "DIGEST" is already used by job ${digest.id} ('Digest'); choose another name, or edit or remove that job.`,
    });
    expect(h.repository.writes).toBe(writes);
    expect((await h.listJobs.execute()).jobs.map((job) => job.name)).toEqual(['Digest']);
  });

  it('gives a default name that is taken the first free " (2)", " (3)" …', async () => {
    const h = cronHarness();

    const names = [];
    for (let i = 0; i < 3; i += 1) names.push((await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check the feeds' })).name);

    expect(names).toEqual(['Check the feeds', 'Check the feeds (2)', 'Check the feeds (3)']);
  });

  it('counts a chosen name when making a default name unique', async () => {
    const h = cronHarness();
    await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'check the feeds' });
    await h.createJob.execute({ schedule: 'every 1h', prompt: 'y', name: 'Check the feeds (2)' });

    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check the feeds' });

    expect(job.name).toBe('Check the feeds (3)');
  });

  it('gives concurrent creates of one prompt different names', async () => {
    const h = cronHarness();

    const jobs = await Promise.all(Array.from({ length: 5 }, () => h.createJob.execute({ schedule: 'every 1h', prompt: 'Same prompt' })));

    expect(new Set(jobs.map((job) => job.name)).size).toBe(5);
    expect((await h.listJobs.execute()).jobs.map((job) => job.name).sort()).toEqual(jobs.map((job) => job.name).sort());
  });

  it('lets only one of two concurrent creates take a chosen name', async () => {
    const h = cronHarness();

    const results = await Promise.allSettled([
      h.createJob.execute({ schedule: 'every 1h', prompt: 'a', name: 'Digest' }),
      h.createJob.execute({ schedule: 'every 1h', prompt: 'b', name: 'digest' }),
    ]);

    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((await h.listJobs.execute()).jobs).toHaveLength(1);
  });

  it("refuses renaming a job to another job's name and changes nothing", async () => {
    const h = cronHarness();
    const digest = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Digest' });
    const planner = await h.createJob.execute({ schedule: 'every 1h', prompt: 'y', name: 'Planner' });

    await expect(h.editJob.execute({ job: planner.id, name: 'digest', prompt: 'changed' })).rejects.toThrow(
      `The name "digest" is already used by job ${digest.id} ('Digest')`,
    );
    expect(h.repository.get(planner.id)).toMatchObject({ name: 'Planner', prompt: 'y' });
  });

  it('lets a job be renamed to its own name in other letters', async () => {
    const h = cronHarness();
    const digest = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'digest' });

    await expect(h.editJob.execute({ job: digest.id, name: 'Digest' })).resolves.toMatchObject({ name: 'Digest' });
  });

  it('leaves jobs that already share a name alone when one of them is edited otherwise', async () => {
    const a = { ...anHourlyJob('00000000000a'), name: 'Digest' };
    const b = { ...anHourlyJob('00000000000b'), name: 'digest' };
    const h = cronHarness({ jobs: [a, b] });

    await expect(h.editJob.execute({ job: a.id, prompt: 'New prompt' })).resolves.toMatchObject({ name: 'Digest', prompt: 'New prompt' });
  });

  it("tells the model in the job tool's answer when a name is taken", async () => {
    const h = cronHarness();
    const digest = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Digest' });
    const tool = new CronJobTool(
      new JobControlService(
        new JobChanges(h.createJob, h.editJob, h.pauseJob, h.resumeJob, h.removeJob, h.jobWarnings),
        h.listJobs,
        h.runJobNow,
        h.redeliverJobRun,
      ),
      h.settings,
    );

    const created = JSON.parse(await tool.call({ action: 'create', schedule: 'every 2h', prompt: 'y', name: 'digest' }, chatSession));
    const renamed = JSON.parse(await tool.call({ action: 'update', job: digest.id, name: 'Digest' }, chatSession));

    expect(created).toEqual({
      success: false,
      error: `The name "digest" is already used by job ${digest.id} ('Digest'); choose another name, or edit or remove that job.`,
    });
    expect(renamed).toMatchObject({ success: true, job: { name: 'Digest' } });
    expect((await h.listJobs.execute()).jobs).toHaveLength(1);
  });
});
