import 'reflect-metadata';
import { JobChanges } from '../../../src/application/cron/JobChanges.js';
import { JobControlService } from '../../../src/application/cron/JobControlService.js';
import { CronJobTool } from '../../../src/adapters/tools/CronJobTool.js';
import type { ToolCallContext } from '../../../src/application/agent/ports/Tool.js';
import { cronHarness } from '../../support/cronHarness.js';

const interactive: ToolCallContext = { signal: new AbortController().signal, unattended: false };

function setUp() {
  const h = cronHarness();
  const tool = new CronJobTool(
    new JobControlService(
      new JobChanges(h.createJob, h.editJob, h.pauseJob, h.resumeJob, h.removeJob, h.jobWarnings),
      h.listJobs,
      h.runJobNow,
      h.redeliverJobRun,
    ),
    h.settings,
  );
  const call = async (args: Record<string, unknown>) => JSON.parse(await tool.call(args, interactive));
  return { h, tool, call };
}

describe("the cronjob tool: a job's toolsets, working folder and answers carried forward", () => {
  it('offers them as arguments', () => {
    const { tool } = setUp();
    const properties = (tool.spec.parameters as { properties: Record<string, unknown> }).properties;
    expect(Object.keys(properties)).toEqual(expect.arrayContaining(['toolsets', 'workdir', 'context_from', 'continue']));
  });

  it('creates a job with them, shows them, and clears them on update', async () => {
    const { h, call } = setUp();
    h.workdirs.folders.set('/srv/site', null);
    const digest = await call({ action: 'create', schedule: 'every 1h', prompt: 'Digest', name: 'digest' });

    const created = await call({
      action: 'create',
      schedule: 'every 1h',
      prompt: 'Report',
      name: 'report',
      toolsets: ['web', 'terminal'],
      workdir: '/srv/site',
      context_from: ['digest'],
      continue: true,
    });
    expect(created).toMatchObject({
      success: true,
      job: { toolsets: ['web', 'terminal'], workdir: '/srv/site', context_from: [digest.job.id], continue: true },
    });

    const updated = await call({ action: 'update', job: 'report', toolsets: null, workdir: null, context_from: [], continue: false });
    expect(updated).toMatchObject({ success: true, job: { toolsets: null, workdir: null, context_from: [], continue: false } });
  });

  it('refuses an unknown toolset, a missing folder and an unknown job in the use cases’ own sentences', async () => {
    const { call } = setUp();
    expect(await call({ action: 'create', schedule: 'every 1h', prompt: 'x', toolsets: ['hasOwnProperty'] })).toEqual({
      success: false,
      error: expect.stringMatching(/^The job names an unknown toolset "hasOwnProperty"; the known ones are /),
    });
    expect(await call({ action: 'create', schedule: 'every 1h', prompt: 'x', workdir: '/nowhere' })).toMatchObject({
      success: false,
      error: 'The working folder /nowhere does not exist; create it first, or name an existing folder.',
    });
    expect(await call({ action: 'create', schedule: 'every 1h', prompt: 'x', context_from: ['nope'] })).toMatchObject({
      success: false,
      error: 'No job has the id or name "nope"; see "agent cron list".',
    });
  });
});
