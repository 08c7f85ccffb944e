import { FakeWorkingDirectories } from '../support/fakes/FakeWorkingDirectories.js';
import { CheckJobs } from '../../src/application/cron/CheckJobs.js';
import { JobPreflight } from '../../src/application/cron/JobPreflight.js';
import { JobFileChecks } from '../../src/application/cron/JobFileChecks.js';
import type { Job } from '../../src/domain/Job.js';
import { FakeAgentRunner } from '../support/fakes/FakeAgentRunner.js';
import { FakeBotChatDelivery } from '../support/fakes/FakeBotChatDelivery.js';
import { FakeSkillLibrary } from '../support/fakes/FakeContextFiles.js';
import { FakeScriptExecutor } from '../support/fakes/FakeScriptExecutor.js';
import { InMemoryJobRepository } from '../support/fakes/InMemoryJobRepository.js';
import { RecordingDeliveryChannel } from '../support/fakes/RecordingDeliveryChannel.js';
import { anHourlyJob } from '../support/jobs.js';

const settings = {
  timeZone: 'UTC',
  wrapResponse: true,
  maxParallelJobs: 4,
  outputRetention: 50,
  idleTimeoutMs: 600_000,
  scriptTimeoutMs: 3_600_000,
  defaultModel: { provider: 'command', model: null },
};

function checkJobs(jobs: Job[]) {
  const agent = new FakeAgentRunner();
  const channel = new RecordingDeliveryChannel(['telegram']);
  channel.homes.set('telegram', '12345');
  const preflight = new JobPreflight(
    agent,
    channel,
    settings,
    new FakeBotChatDelivery(),
    new JobFileChecks(new FakeScriptExecutor({ 'report.sh': {} }), new FakeWorkingDirectories()),
  );
  return new CheckJobs(new InMemoryJobRepository(jobs), preflight, new FakeSkillLibrary({ triage: '# Triage' })).execute();
}

function job(id: string, changes: Partial<Job>): Job {
  return { ...anHourlyJob(id), deliver: 'local', ...changes };
}

describe('CheckJobs', () => {
  it('finds nothing wrong with a job whose provider, skills, script and targets resolve', async () => {
    const report = await checkJobs([job('a1', { skills: ['triage'], script: 'report.sh', deliver: 'telegram,local' })]);

    expect(report).toEqual({ jobs: [{ id: 'a1', name: 'job a1', problems: [] }], unreadable: [] });
  });

  it('names an unknown provider', async () => {
    const report = await checkJobs([job('a2', { provider: 'openia' })]);

    expect(report.jobs[0]!.problems).toEqual(['The provider "openia" is not configured.']);
  });

  it('names a skill that is not under the home', async () => {
    const report = await checkJobs([job('a3', { skills: ['triage', 'tirage'] })]);

    expect(report.jobs[0]!.problems).toEqual([
      'The skill "tirage" was not found; add skills/tirage/SKILL.md under the agent home or remove it from the job.',
    ]);
  });

  it('names a target whose platform is not configured, and a target that does not parse', async () => {
    const report = await checkJobs([job('a4', { deliver: 'slack:#ops' }), job('a5', { deliver: 'telegram:' })]);

    expect(report.jobs[0]!.problems[0]).toContain('Delivery platform "slack" is not configured');
    expect(report.jobs[1]!.problems).toHaveLength(1);
  });

  it('names a script outside the scripts directory', async () => {
    const report = await checkJobs([job('a6', { script: 'missing.sh' })]);

    expect(report.jobs[0]!.problems).toEqual(['The script "missing.sh" is not in the scripts directory.']);
  });
});
