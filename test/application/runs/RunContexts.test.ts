import { describe, expect, it } from '@jest/globals';
import { RunContexts, SKILLS_POLICY } from '../../../src/application/runs/RunContexts.js';
import { FakeMemoryStore, FakeSkillLibrary } from '../../support/fakes/FakeContextFiles.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { FakeWorkingDirectories } from '../../support/fakes/FakeWorkingDirectories.js';
import { InMemoryRunLedger } from '../../support/fakes/InMemoryRunLedger.js';
import { InMemoryJobRepository } from '../../support/fakes/InMemoryJobRepository.js';

const MEMORY = [{ name: 'MEMORY.md', content: 'The team is in Berlin.' }];

function contexts(skills: Record<string, string>) {
  const log = new RecordingLogger();
  return {
    log,
    subject: new RunContexts(
      new FakeMemoryStore(MEMORY),
      new FakeSkillLibrary(skills),
      log,
      new InMemoryRunLedger(),
      new FakeWorkingDirectories(),
      new InMemoryJobRepository(),
    ),
  };
}

describe('RunContexts, one skills policy named per run kind', () => {
  it('names each kind’s policy', () => {
    expect(SKILLS_POLICY).toEqual({ cron: 'every-named', webhook: 'first-found', chat: 'none' });
  });

  it('gives a cron run every named skill, in order, a missing one as a note, and logs it', async () => {
    const { log, subject } = contexts({ triage: 'Sort by severity.', brevity: 'Be short.' });
    const owner = { label: "job 'nightly'", about: { job: 'a1b2c3d4e5f6' } };
    const context = await subject.forCron(owner, ['brevity', 'missing', 'triage'], 'Check the build.', null);
    expect(context.system).toEqual(MEMORY);
    expect(context.skills.map((each) => each.name)).toEqual(['brevity', 'missing', 'triage']);
    expect(context.skills[1]!.content).toMatch(/was not found; carry on without it/);
    expect(context.task).toMatch(/Check the build\.$/);
    expect(log.entries).toEqual([
      { level: 'warn', message: `skill "missing" of job 'nightly' was not found`, fields: { job: 'a1b2c3d4e5f6' } },
    ]);
  });

  it('gives a webhook run only the first of its skills found', async () => {
    const { subject } = contexts({ triage: 'Sort by severity.', brevity: 'Be short.' });
    const context = await subject.forWebhook({ label: "route 'github'" }, ['missing', 'triage', 'brevity'], 'A PR was opened.');
    expect(context.skills).toEqual([{ name: 'triage', content: 'Sort by severity.' }]);
  });

  it('runs a webhook run without a skill when none is found, and says so once', async () => {
    const { log, subject } = contexts({});
    const context = await subject.forWebhook({ label: "route 'github'" }, ['a', 'b'], 'A PR was opened.');
    expect(context.skills).toEqual([]);
    expect(log.entries.map((each) => each.message)).toEqual(["none of the skills of route 'github' was found (a, b); running without one"]);
  });

  it('gives a chat turn memory and the question, no skill', async () => {
    const { subject } = contexts({ triage: 'Sort by severity.' });
    expect(await subject.forChat('How is the build?')).toEqual({ system: MEMORY, skills: [], task: 'How is the build?' });
  });
});
