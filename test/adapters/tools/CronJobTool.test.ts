import 'reflect-metadata';
import { AgentRunError } from '../../../src/application/ports/AgentRunner.js';
import { JobChanges } from '../../../src/application/cron/JobChanges.js';
import { JobControlService } from '../../../src/application/cron/JobControlService.js';
import { CronJobTool } from '../../../src/adapters/tools/CronJobTool.js';
import { ToolInputError, type ToolCallContext } from '../../../src/application/agent/ports/Tool.js';
import { SCHEDULE_FORMS, spellingsOf } from '../../../src/domain/Schedule.js';
import { anHourlyJob } from '../../support/jobs.js';
import { cronHarness } from '../../support/cronHarness.js';

const interactive: ToolCallContext = { signal: new AbortController().signal, unattended: false };

function setUp(options: Parameters<typeof cronHarness>[0] = {}) {
  const h = cronHarness(options);
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

async function inputError(promise: Promise<unknown>): Promise<ToolInputError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ToolInputError) return error;
    throw error;
  }
  throw new Error('expected a ToolInputError');
}

describe('CronJobTool', () => {
  it('is the one tool named cronjob, its schedule help naming the configured time zone', () => {
    const { tool } = setUp({ settings: { timeZone: 'Europe/Berlin' } });

    expect(tool.spec.name).toBe('cronjob');
    expect(tool.spec.parameters).toMatchObject({ type: 'object', required: ['action'] });
    expect(JSON.stringify(tool.spec.parameters)).toContain('read in Europe/Berlin');
  });

  it('describes every spelling of every schedule form of the table in its schedule parameter', () => {
    const { tool } = setUp();
    const description = (tool.spec.parameters as { properties: { schedule: { description: string } } }).properties.schedule.description;

    for (const form of SCHEDULE_FORMS) {
      for (const spelling of spellingsOf(form)) expect(description).toContain(`"${spelling}"`);
      expect(description).toContain(`(${form.help})`);
    }
  });

  it.each(SCHEDULE_FORMS.flatMap((form) => spellingsOf(form).filter((spelling) => spelling.startsWith('@'))))(
    'creates a job on the cron macro %s',
    async (macro) => {
      const { call } = setUp();

      expect(await call({ action: 'create', schedule: macro, prompt: 'Tidy up' })).toMatchObject({
        success: true,
        job: { schedule: macro },
      });
    },
  );

  it('creates a job in the repository and returns it', async () => {
    const { h, call } = setUp();
    Object.assign(h.skills.skills, { mail: '# Mail', tone: '# Tone' });

    const result = await call({
      action: 'create',
      schedule: 'every 2h',
      prompt: 'Summarise the inbox',
      name: 'Inbox',
      deliver: 'local',
      skills: ['mail', 'tone'],
      repeat: 3,
    });

    expect(result).toEqual({
      success: true,
      job: expect.objectContaining({
        id: '000000000001',
        name: 'Inbox',
        schedule: 'every 2h',
        prompt: 'Summarise the inbox',
        deliver: 'local',
        skills: ['mail', 'tone'],
        repeat: { times: 3, completed: 0 },
        state: 'scheduled',
        next_run_at: '2026-06-01T10:00:00Z',
      }),
    });
    expect(h.repository.get('000000000001')).toMatchObject({ name: 'Inbox', skills: ['mail', 'tone'], origin: null });
  });

  it("creates and updates a job's own time zone, refuses an unknown one in the use case's sentence, and clears it with null or an empty string", async () => {
    const { h, call } = setUp({ settings: { timeZone: 'Europe/Berlin' } });

    const created = await call({ action: 'create', schedule: '0 9 * * *', prompt: 'Morning brief', timezone: 'America/New_York' });
    // T0 is 08:00 UTC on 1 June: 04:00 in New York, whose 09:00 is 13:00 UTC.
    expect(created.job).toMatchObject({ timezone: 'America/New_York', next_run_at: '2026-06-01T13:00:00Z' });
    expect((await call({ action: 'list' })).jobs[0]).toMatchObject({ timezone: 'America/New_York' });

    const refused = await call({ action: 'update', job: created.job.id, timezone: 'Mars/Base' });
    expect(refused).toEqual({ success: false, error: expect.stringMatching(/^Unknown time zone "Mars\/Base"; use an IANA name/) });
    expect(h.repository.get(created.job.id)!.timezone).toBe('America/New_York');

    expect((await call({ action: 'update', job: created.job.id, timezone: 'Asia/Tokyo' })).job).toMatchObject({
      timezone: 'Asia/Tokyo',
      next_run_at: '2026-06-02T00:00:00Z',
    });
    expect((await call({ action: 'update', job: created.job.id, timezone: '' })).job).toMatchObject({
      timezone: null,
      next_run_at: '2026-06-02T07:00:00Z',
    });
    expect(h.repository.get(created.job.id)!.timezone).toBeNull();
  });

  it('creates the job and adds warnings when its platform is not configured, its named channel unknown or a skill missing', async () => {
    const { h, call } = setUp({ platforms: ['telegram', 'slack'] });
    h.channel.unknownChannels.set('slack', ['#nowhere']);
    h.skills.skills.tone = '# Tone';

    const result = await call({
      action: 'create',
      schedule: 'every 2h',
      prompt: 'Triage',
      deliver: 'discord:123456789012345678,slack:#nowhere,telegram',
      skills: ['triage', 'tone'],
    });

    expect(result).toEqual({
      success: true,
      job: expect.objectContaining({ id: '000000000001', deliver: 'discord:123456789012345678,slack:#nowhere,telegram' }),
      warnings: [
        'Delivery platform "discord" is not configured: set platforms.discord.bot_token (or DISCORD_BOT_TOKEN) in config.yaml or the environment.',
        'the slack channel "#nowhere" is unknown.',
        'The skill "triage" was not found: add skills/triage/SKILL.md under the agent home, or runs go on without it.',
      ],
    });
    expect(h.repository.get('000000000001')).toMatchObject({ skills: ['triage', 'tone'] });
  });

  it('adds warnings to an update the same way, and none when nothing is missing', async () => {
    const { h, call } = setUp();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', deliver: 'local' });

    const update = await call({ action: 'update', job: job.id, deliver: 'discord' });
    expect(update).toMatchObject({
      success: true,
      job: { deliver: 'discord' },
      warnings: [expect.stringMatching(/^Delivery platform "discord" is not configured/)],
    });

    expect(await call({ action: 'update', job: job.id, deliver: 'telegram' })).not.toHaveProperty('warnings');
  });

  it('treats null optional fields of create as not given', async () => {
    const { h, call } = setUp();

    const result = await call({
      action: 'create',
      schedule: '30m',
      prompt: 'Stretch',
      name: null,
      deliver: null,
      skills: null,
      script: null,
      repeat: null,
      model: null,
      provider: null,
    });

    expect(result.success).toBe(true);
    expect(h.repository.get(result.job.id)).toMatchObject({
      name: 'Stretch',
      deliver: 'origin',
      skills: [],
      script: null,
      repeat: { times: 1, completed: 0 },
    });
  });

  it('lists every job in a compact view', async () => {
    const { h, call } = setUp();
    const job = await h.createJob.execute({ schedule: '0 9 * * *', prompt: 'Plan the day', deliver: 'local' });

    expect(await call({ action: 'list' })).toEqual({
      success: true,
      jobs: [
        {
          id: job.id,
          name: 'Plan the day',
          schedule: '0 9 * * *',
          state: 'scheduled',
          next_run_at: '2026-06-01T09:00:00Z',
          last_status: null,
          deliver: 'local',
        },
      ],
    });
  });

  it('updates a job named by its name, and clears its skills and script', async () => {
    const { h, call } = setUp();
    h.scripts.scripts['fetch.sh'] = {};
    const job = await h.createJob.execute({
      schedule: 'every 1h',
      prompt: 'Check feeds',
      name: 'Feeds',
      skills: ['rss'],
      script: 'fetch.sh',
      model: 'big',
    });

    const result = await call({ action: 'update', job: 'feeds', schedule: 'every 3h', skills: [], script: null, model: '' });

    expect(result).toMatchObject({ success: true, job: { id: job.id, schedule: 'every 3h', skills: [], script: null, model: null } });
    expect(h.repository.get(job.id)).toMatchObject({ skills: [], script: null, model: null, prompt: 'Check feeds' });
  });

  it('creates a job without the agent (a script and no prompt needed) with its own catch-up policy, and updates both', async () => {
    const { h, call } = setUp();
    h.scripts.scripts['disk.sh'] = { stdout: 'sda1: 91% full' };

    const created = await call({
      action: 'create',
      schedule: 'every 1h',
      script: 'disk.sh',
      no_agent: true,
      catch_up: 'skip',
      name: 'Disks',
    });
    expect(created).toMatchObject({
      success: true,
      job: { name: 'Disks', script: 'disk.sh', no_agent: true, catch_up: 'skip', prompt: '' },
    });
    const id = created.job.id as string;

    expect(await call({ action: 'update', job: id, no_agent: false })).toEqual({
      success: false,
      error: expect.stringMatching(/has no prompt for the agent/),
    });
    expect(await call({ action: 'update', job: id, no_agent: false, prompt: 'Comment on the disks', catch_up: null })).toMatchObject({
      success: true,
      job: { no_agent: false, catch_up: null, prompt: 'Comment on the disks' },
    });
    expect(h.repository.get(id)).toMatchObject({ no_agent: false, catch_up: null });
  });

  it('creates a job with a budget of its own, changes and removes its limits one by one, and refuses a limit of 0', async () => {
    const { h, call } = setUp();

    const created = await call({ action: 'create', schedule: 'every 1h', prompt: 'Triage', max_turns: 5, max_cost_per_day: 1.5 });
    expect(created).toMatchObject({ success: true, job: { budget: { max_turns: 5, max_cost_per_day: 1.5 } } });
    const id = created.job.id as string;

    expect(await call({ action: 'update', job: id, max_turns: null, max_cost: 0.25 })).toMatchObject({
      success: true,
      job: { budget: { max_cost: 0.25, max_cost_per_day: 1.5 } },
    });
    expect(h.repository.get(id)?.budget).toEqual({ max_cost: 0.25, max_cost_per_day: 1.5 });
    expect((await inputError(call({ action: 'update', job: id, max_tokens: 0 }))).message).toBe(
      'cronjob: "max_tokens" must be a whole number of 1 or more, or null.',
    );
  });

  it('refuses a job without the agent and without a script, and a catch-up policy it does not know', async () => {
    const { h, call } = setUp();

    expect(await call({ action: 'create', schedule: 'every 1h', prompt: 'Disks', no_agent: true })).toEqual({
      success: false,
      error: expect.stringMatching(/has no pre-run script to run instead/),
    });
    expect((await inputError(call({ action: 'create', schedule: 'every 1h', prompt: 'x', catch_up: 'always' }))).message).toBe(
      'cronjob: "catch_up" must be one of once, skip or null, not "always".',
    );
    expect((await inputError(call({ action: 'create', schedule: 'every 1h', prompt: 'x', no_agent: 'yes' }))).message).toMatch(
      /"no_agent" must be true or false/,
    );
    expect(h.repository.all()).toEqual([]);
  });

  it('leaves fields that update does not name as they were', async () => {
    const { h, call } = setUp();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check feeds', skills: ['rss'] });

    await call({ action: 'update', job: job.id, prompt: 'Check all feeds', skills: null, name: null });

    expect(h.repository.get(job.id)).toMatchObject({ prompt: 'Check all feeds', skills: ['rss'], name: 'Check feeds' });
  });

  it('pauses and resumes a job', async () => {
    const { h, call } = setUp();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });

    expect(await call({ action: 'pause', job: job.id })).toMatchObject({ success: true, job: { state: 'paused' } });
    expect(h.repository.get(job.id)?.state).toBe('paused');
    expect(await call({ action: 'resume', job: job.id })).toMatchObject({ success: true, job: { state: 'scheduled' } });
    expect(h.repository.get(job.id)?.state).toBe('scheduled');
  });

  it('pauses a job with the reason given, and resume clears it', async () => {
    const { h, call } = setUp();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });

    expect(await call({ action: 'pause', job: job.id, reason: 'The user is on holiday' })).toMatchObject({
      success: true,
      job: { state: 'paused', paused_reason: 'The user is on holiday' },
    });
    expect(h.repository.get(job.id)?.paused_reason).toBe('The user is on holiday');
    await call({ action: 'resume', job: job.id });
    expect(h.repository.get(job.id)?.paused_reason).toBeNull();
  });

  it('takes the job as job_id or id, and one skill as skill, as models often write them', async () => {
    const { h, call } = setUp();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });

    expect(await call({ action: 'pause', job_id: job.id })).toMatchObject({ success: true, job: { state: 'paused', enabled: false } });
    expect(await call({ action: 'resume', id: job.id })).toMatchObject({ success: true, job: { state: 'scheduled', enabled: true } });
    expect(await call({ action: 'update', job: job.id, skill: 'triage' })).toMatchObject({ success: true, job: { skills: ['triage'] } });
  });

  it('runs a job now and returns the outcome with the answer', async () => {
    const { h, call } = setUp();
    h.agent.reply('Three new mails.');
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check mail', deliver: 'local' });

    const result = await call({ action: 'run', job: job.id });

    expect(result).toMatchObject({
      success: true,
      job: { id: job.id, state: 'scheduled', last_status: 'ok', repeat: { completed: 1 } },
      run: { last_status: 'ok', answer: 'Three new mails.' },
    });
    expect(h.agent.requests[0]?.toolsets).not.toContain('cronjob');
  });

  it('reports a failed run as the run outcome, not as a failed call', async () => {
    const { h, call } = setUp();
    h.agent.reply(new AgentRunError('failed', 'the model refused'));
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', deliver: 'local' });

    expect(await call({ action: 'run', job: job.id })).toMatchObject({
      success: true,
      run: { last_status: 'error', error: 'the model refused' },
    });
  });

  it("redelivers the recorded answer of a job's run without running it, and refuses a run with nothing to deliver", async () => {
    const { h, call } = setUp();
    h.agent.reply('Three new mails.', new AgentRunError('failed', 'the model refused'));
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check mail', name: 'mail', deliver: 'telegram' });
    h.channel.failing.add('telegram');
    const { report } = await h.runJobNow.execute({ job: 'mail' });
    h.channel.failing.delete('telegram');

    const result = await call({ action: 'redeliver', job: 'mail' });

    expect(result).toEqual({
      success: true,
      job: expect.objectContaining({ id: job.id, last_status: 'ok', last_delivery_error: null }),
      run: {
        id: report.runId,
        status: 'ok',
        sent: [{ target: 'telegram', outcome: 'delivered', message_ids: ['1'], error: null }],
        redelivered_at: h.clock.now().toISOString(),
        last_run: true,
      },
    });
    expect(h.agent.requests).toHaveLength(1);

    const failed = (await h.runJobNow.execute({ job: 'mail' })).report.runId!;
    expect(await call({ action: 'redeliver', job: 'mail', run: failed })).toEqual({
      success: false,
      error: `Run ${failed} of job ${job.id} 'mail' has no answer to deliver: it failed (the model refused).`,
    });
    expect((await inputError(call({ action: 'redeliver', job: 'mail', run: 7 }))).message).toMatch(/run/);
  });

  it('removes a job', async () => {
    const { h, call } = setUp();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });

    expect(await call({ action: 'remove', job: job.id })).toMatchObject({ success: true, job: { id: job.id } });
    expect(h.repository.get(job.id)).toBeUndefined();
  });

  it('answers success false with the sentence of an ambiguous name', async () => {
    // Names are unique now; a store written before that, or by hand, can still share one.
    const a = { ...anHourlyJob('00000000000a'), name: 'Digest' };
    const b = { ...anHourlyJob('00000000000b'), name: 'digest' };
    const { call } = setUp({ jobs: [a, b] });

    expect(await call({ action: 'pause', job: 'DIGEST' })).toEqual({
      success: false,
      error: `The name "DIGEST" matches 2 jobs (${a.id}, ${b.id}); name one by its id.`,
    });
  });

  it('answers success false for an invalid schedule and writes nothing', async () => {
    const { h, call } = setUp();

    const result = await call({ action: 'create', schedule: 'every fortnight', prompt: 'x' });

    expect(result.success).toBe(false);
    expect(result.error).toMatch(/not a valid interval/);
    expect(h.repository.writes).toBe(0);
  });

  it('answers success false for a Slack thread that is not a Slack timestamp, on create and update, and writes nothing', async () => {
    const { h, call } = setUp();
    const sentence = `Delivery target "slack:C0123ABCDEF:notats" names the thread "notats", which is not a Slack timestamp; use the ts of the thread's first message, such as 1712345678.123456.`;

    expect(await call({ action: 'create', schedule: 'every 1h', prompt: 'x', deliver: 'slack:C0123ABCDEF:notats' })).toEqual({
      success: false,
      error: sentence,
    });
    expect(h.repository.writes).toBe(0);
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', deliver: 'local' });
    expect(await call({ action: 'update', job: job.id, deliver: 'slack:C0123ABCDEF:notats' })).toEqual({ success: false, error: sentence });
    expect(h.repository.get(job.id)?.deliver).toBe('local');
  });

  it('answers success false for a job that does not exist and for refused state changes', async () => {
    const { h, call } = setUp();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Feeds' });

    expect(await call({ action: 'run', job: 'nope' })).toEqual({
      success: false,
      error: 'No job has the id or name "nope"; see "agent cron list".',
    });
    expect(await call({ action: 'resume', job: job.id })).toMatchObject({ success: false, error: expect.stringMatching(/not paused/) });
    expect(await call({ action: 'update', job: job.id, repeat: 0 })).toMatchObject({
      success: false,
      error: expect.stringMatching(/Repeat count 0 is not valid/),
    });
  });

  it.each([
    [{}, /needs "action"/],
    [{ action: 'delete', job: 'x' }, /no action "delete"; use one of create, list, update/],
    [{ action: 7 }, /"action" must be a string/],
    [{ action: 'create', schedule: 'every 1h', prompt: 'x', repeat: 2.5 }, /"repeat" must be a whole number, not 2.5/],
    [{ action: 'create', schedule: 'every 1h', prompt: 'x', repeat: '3' }, /"repeat" must be a whole number/],
    [{ action: 'create', schedule: 'every 1h', prompt: 'x', skills: 'rss' }, /"skills" must be a list of non-empty strings/],
    [{ action: 'update', job: 'x', skills: ['rss', 4] }, /"skills" must be a list of non-empty strings/],
    [{ action: 'create', prompt: 'x' }, /needs "schedule"/],
    [{ action: 'create', schedule: 'every 1h' }, /needs "prompt"/],
    [{ action: 'pause' }, /needs "job": the id or name of the job to pause/],
    [{ action: 'list', skils: 'rss' }, /no argument "skils"/],
  ])('refuses the argument shape %j with a ToolInputError', async (args, message) => {
    const { h, tool } = setUp();

    const error = await inputError(tool.call(args, interactive));

    expect(error.message).toMatch(message);
    expect(h.repository.writes).toBe(0);
  });
});
