import { describe, expect, it } from '@jest/globals';
import { openingOf } from '../../src/domain/agent/transcript.js';
import { createJob, editJob, jobContextFrom, jobToolsets } from '../../src/domain/Job.js';
import { readJobRecord, recordOfJob } from '../../src/domain/JobRecord.js';
import { buildRunContext, CARRIED_ANSWER_BYTES, carriedAnswerDocument, firstBytes } from '../../src/domain/RunContext.js';
import { parseSchedule } from '../../src/domain/Schedule.js';
import { cronRunToolsets, KNOWN_TOOLSETS } from '../../src/domain/toolsets.js';

const NOW = new Date('2026-06-01T08:00:00Z');
const hourly = () => parseSchedule('every 1h', NOW, 'UTC');
const aJob = (extra: Partial<Parameters<typeof createJob>[0]> = {}) =>
  createJob({ id: 'a1b2c3d4e5f6', name: 'nightly', prompt: 'Check the build.', schedule: hourly(), ...extra }, NOW, 'UTC');

describe("a job's own toolsets", () => {
  it('are kept as named, trimmed and without repeats; none or an empty list is the preset', () => {
    expect(jobToolsets([' web', 'terminal', 'web'])).toEqual(['web', 'terminal']);
    expect(jobToolsets([])).toBeNull();
    expect(jobToolsets(null)).toBeNull();
    expect(aJob().toolsets).toBeNull();
    expect(aJob({ toolsets: ['web'] }).toolsets).toEqual(['web']);
  });

  it('refuse an unknown name, or a name of the object prototype, in one sentence listing the known ones', () => {
    for (const name of ['shell', 'constructor', 'toString', '__proto__']) {
      expect(() => jobToolsets(['web', name])).toThrow(
        `The job names an unknown toolset ${JSON.stringify(name)}; the known ones are ${KNOWN_TOOLSETS.join(', ')}.`,
      );
    }
  });

  it('replace the preset for a run, and the recursion guard still removes the job tool', () => {
    expect(cronRunToolsets(['web'])).toEqual(['web']);
    expect(cronRunToolsets(['cronjob', 'terminal'])).toEqual(['terminal']);
    expect(cronRunToolsets(['agent-chat'])).not.toContain('cronjob');
  });

  it('change on an edit; null is the preset again', () => {
    const job = aJob({ toolsets: ['web'] });
    expect(editJob(job, { toolsets: ['terminal', 'clarify'] }, NOW, 'UTC').toolsets).toEqual(['terminal', 'clarify']);
    expect(editJob(job, { toolsets: null }, NOW, 'UTC').toolsets).toBeNull();
    expect(editJob(job, { prompt: 'Other' }, NOW, 'UTC').toolsets).toEqual(['web']);
    expect(() => editJob(job, { toolsets: ['shell'] }, NOW, 'UTC')).toThrow(/unknown toolset "shell"/);
  });
});

describe("a job's working folder and the answers it carries forward", () => {
  it('are part of a new job, its record and an edit', () => {
    const job = aJob({ workdir: '/srv/site', context_from: ['0123456789ab', '0123456789ab'], continue: true });
    expect(job).toMatchObject({ workdir: '/srv/site', context_from: ['0123456789ab'], continue: true });
    expect(recordOfJob(job)).toMatchObject({ toolsets: null, workdir: '/srv/site', context_from: ['0123456789ab'], continue: true });
    const edited = editJob(job, { workdir: null, context_from: [], continue: false }, NOW, 'UTC');
    expect(edited).toMatchObject({ workdir: null, context_from: [], continue: false });
  });

  it('default to none in a record written before them', () => {
    const { toolsets, workdir, context_from, continue: carryOn, ...older } = recordOfJob(aJob());
    expect([toolsets, workdir, context_from, carryOn]).toEqual([null, null, [], false]);
    const read = readJobRecord(older, 0);
    expect(read.ok && read.job).toMatchObject({ toolsets: null, workdir: null, context_from: [], continue: false });
  });

  it('never name the job itself: its own last answer is --continue', () => {
    expect(() => jobContextFrom(['a1b2c3d4e5f6'], { id: 'a1b2c3d4e5f6', name: 'nightly' })).toThrow(
      "Job 'nightly' cannot take context from itself; its own last answer is carried forward with --continue (the job tool's \"continue\": true).",
    );
  });
});

describe('the context of a run with a working folder and answers carried forward', () => {
  const carried = (answer: string, own = false) => ({
    jobId: '0123456789ab',
    jobName: 'digest',
    own,
    last: { answer, at: '2026-05-31T09:00:05.000Z' },
  });

  it('gives the AGENTS.md after the skills, then the answers, each as its own message, then the task', () => {
    const context = buildRunContext({
      memories: [{ name: 'MEMORY.md', content: 'Remember.' }],
      skills: [{ name: 'triage', content: 'Sort.' }],
      prompt: 'Check the build.',
      folderInstructions: { folder: '/srv/site', content: 'Run make test before anything.' },
      carried: [carried('Yesterday: 3 failures.'), carried('All green.', true)],
    });
    const { messages } = openingOf(context);
    expect(messages.map((message) => (message.role === 'user' ? message.text.split('\n')[0] : ''))).toEqual([
      '# Skill: triage',
      '# AGENTS.md of the working folder /srv/site',
      "# Earlier answer of job 'digest' (0123456789ab)",
      '# Earlier answer of this job',
      expect.stringMatching(/^This is an unattended scheduled run/),
    ]);
    const text = messages.map((message) => (message.role === 'user' ? message.text : '')).join('\n');
    expect(text).toContain('Run make test before anything.');
    expect(text).toContain('2026-05-31T09:00:05.000Z');
    expect(text).toContain('Yesterday: 3 failures.');
  });

  it('has no documents without them, as before', () => {
    expect(buildRunContext({ memories: [], skills: [], prompt: 'Go.' })).not.toHaveProperty('documents');
  });

  it('cuts each answer to 8 KB and says so', () => {
    const long = `${'a'.repeat(CARRIED_ANSWER_BYTES - 1)}é and more`;
    const document = carriedAnswerDocument(carried(long));
    expect(document.content).toContain('It was cut to its first 8 KB: 11 more bytes were left out.');
    expect(document.content).not.toContain('é');
    expect(carriedAnswerDocument(carried('short')).content).not.toContain('cut');
  });

  it('says when a job has no ok answer to carry forward', () => {
    expect(carriedAnswerDocument({ jobId: '0123456789ab', jobName: null, own: false, last: null }).content).toBe(
      'There is no ok answer of job 0123456789ab to carry forward yet.',
    );
  });

  it('cuts on a character boundary', () => {
    expect(firstBytes('ééé', 3)).toEqual({ text: 'é', leftOut: 4 });
    expect(firstBytes('abc', 3)).toEqual({ text: 'abc', leftOut: 0 });
  });
});
