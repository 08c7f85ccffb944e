import { describe, expect, it } from '@jest/globals';
import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import { cronHarness } from '../support/cronHarness.js';

/**
 * A job's own toolsets, working folder and carried answers, through its use cases and its run:
 * what the agent is asked with (FakeAgentRunner records each request).
 */
describe("a job's toolsets, working folder and answers carried forward", () => {
  it('give its run only the toolsets it names, never the job tool', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Look it up.', toolsets: ['web', 'cronjob'] });

    await h.runJobNow.execute({ job: job.id });

    expect(h.agent.requests[0]!.toolsets).toEqual(['web']);
  });

  it('give a job without its own the agent-cron preset', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Look it up.' });

    await h.runJobNow.execute({ job: job.id });

    expect(h.agent.requests[0]!.toolsets).toEqual(['agent-cron']);
  });

  it('refuse an unknown toolset on create and edit, and save nothing', async () => {
    const h = cronHarness();
    await expect(h.createJob.execute({ schedule: 'every 1h', prompt: 'x', toolsets: ['shell'] })).rejects.toThrow(
      /^The job names an unknown toolset "shell"; the known ones are cronjob, terminal/,
    );
    expect(h.repository.get('000000000001')).toBeUndefined();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });
    await expect(h.editJob.execute({ job: job.id, toolsets: ['valueOf'] })).rejects.toThrow(/unknown toolset "valueOf"/);
  });

  it('run the script and the agent in its working folder, with the folder’s AGENTS.md after the skills', async () => {
    const h = cronHarness();
    h.workdirs.folders.set('/srv/site', 'Always run make test first.');
    h.skills.skills.triage = 'Sort by severity.';
    h.scripts.scripts['prepare.sh'] = { stdout: 'prepared' };
    const job = await h.createJob.execute({
      schedule: 'every 1h',
      prompt: 'Build it.',
      skills: ['triage'],
      script: 'prepare.sh',
      workdir: '/srv/site',
    });

    await h.runJobNow.execute({ job: job.id });

    expect(h.scripts.options[0]!.workingDirectory).toBe('/srv/site');
    const [request] = h.agent.requests;
    expect(request!.workingDirectory).toBe('/srv/site');
    expect(request!.context.skills.map((skill) => skill.name)).toEqual(['triage']);
    expect(request!.context.documents).toEqual([
      { name: 'AGENTS.md of the working folder /srv/site', content: 'Always run make test first.' },
    ]);
  });

  it('refuse a working folder that does not exist, and stop a run whose folder went away as blocked_config', async () => {
    const h = cronHarness();
    await expect(h.createJob.execute({ schedule: 'every 1h', prompt: 'x', workdir: '/nowhere' })).rejects.toThrow(
      'The working folder /nowhere does not exist; create it first, or name an existing folder.',
    );
    h.workdirs.folders.set('/srv/site', null);
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', workdir: '/srv/site' });
    h.workdirs.folders.delete('/srv/site');

    const { report } = await h.runJobNow.execute({ job: job.id });

    expect(report.outcome).toMatchObject({ status: 'blocked_config', error: expect.stringContaining('/srv/site does not exist') });
    expect(h.agent.requests).toHaveLength(0);
  });

  it('give a run the last ok answer of the jobs it names, and with continue its own, with their time', async () => {
    const h = cronHarness();
    const digest = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Digest.', name: 'digest' });
    h.agent.reply('Digest: 3 new issues.');
    await h.runJobNow.execute({ job: digest.id });
    h.clock.advance(60_000);
    h.agent.reply(new AgentRunError('failed', 'the model broke'));
    await h.runJobNow.execute({ job: digest.id });
    const report = await h.createJob.execute({
      schedule: 'every 1h',
      prompt: 'Report.',
      name: 'report',
      context_from: ['DIGEST'],
      continue: true,
    });
    expect(report.context_from).toEqual([digest.id]);
    h.agent.requests.length = 0;

    h.agent.reply('Report one.');
    await h.runJobNow.execute({ job: report.id });
    h.clock.advance(60_000);
    h.agent.reply('Report two.');
    await h.runJobNow.execute({ job: report.id });

    const [first, second] = h.agent.requests.map((request) => request.context.documents ?? []);
    expect(first!.map((document) => document.name)).toEqual([
      `Earlier answer of job 'digest' (${digest.id})`,
      'Earlier answer of this job',
    ]);
    expect(first![0]!.content).toContain('Digest: 3 new issues.');
    expect(first![0]!.content).toContain('2026-06-01T08:00:00.000Z');
    expect(first![1]!.content).toBe('There is no ok answer of this job to carry forward yet.');
    expect(second![1]!.content).toContain('Report one.');
  });

  it('refuse a job named for context that does not exist, and the job itself', async () => {
    const h = cronHarness();
    await expect(h.createJob.execute({ schedule: 'every 1h', prompt: 'x', context_from: ['nope'] })).rejects.toThrow(
      'No job has the id or name "nope"; see "agent cron list".',
    );
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'self' });
    await expect(h.editJob.execute({ job: job.id, context_from: ['self'] })).rejects.toThrow(/cannot take context from itself/);
  });

  it('name a job taken context from by its name now, and carry nothing of one removed since', async () => {
    const h = cronHarness();
    const digest = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Digest.', name: 'digest' });
    h.agent.reply('Digest one.');
    await h.runJobNow.execute({ job: digest.id });
    const report = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Report.', name: 'report', context_from: [digest.id] });
    await h.editJob.execute({ job: digest.id, name: 'daily digest' });
    h.clock.advance(60_000);

    await h.runJobNow.execute({ job: report.id });
    await h.removeJob.execute({ job: digest.id });
    h.clock.advance(60_000);
    await h.runJobNow.execute({ job: report.id });

    const [renamed, removed] = h.agent.requests.slice(1).map((request) => request.context.documents![0]!);
    expect(renamed).toMatchObject({ name: `Earlier answer of job 'daily digest' (${digest.id})` });
    expect(renamed!.content).toContain('Digest one.');
    expect(removed!.content).toBe(`The job ${digest.id} no longer exists, so there is no answer of it to carry forward.`);
  });

  it('leave a run a fresh session without them', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });
    await h.runJobNow.execute({ job: job.id });
    await h.runJobNow.execute({ job: job.id });

    expect(h.agent.requests[1]!.context.documents).toBeUndefined();
    expect(h.agent.requests[1]!).not.toHaveProperty('workingDirectory');
  });
});

describe('the warnings of a job that names the job tool among its toolsets', () => {
  it('say it is never given to a cron run, and what the runs get', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', deliver: 'local', toolsets: ['cronjob', 'web'] });
    expect(await h.jobWarnings.about(job)).toEqual([
      'The job tool (cronjob) is never given to a cron run, whatever the job names; its runs get web_search, web_extract.',
    ]);
    const none = await h.createJob.execute({ schedule: 'every 1h', prompt: 'y', deliver: 'local', toolsets: ['cronjob'] });
    expect(await h.jobWarnings.about(none)).toEqual([
      'The job tool (cronjob) is never given to a cron run, whatever the job names; its runs get no tools at all.',
    ]);
  });
});
