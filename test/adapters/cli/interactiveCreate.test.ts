import yargs from 'yargs';
import type { CronApp } from '../../../src/adapters/cli/cronApp.js';
import { registerCronCommands } from '../../../src/adapters/cli/cronCommands.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { SCHEDULE_FORMS } from '../../../src/domain/Schedule.js';
import { eventually } from '../../support/processLiveness.js';
import { cronHarness } from '../../support/cronHarness.js';
import { fakeTerminal } from '../../support/fakeTerminal.js';

const SCHEDULE_QUESTION = 'Schedule (';
const PROMPT_QUESTION = 'Prompt (';
const NAME_QUESTION = 'Name (';
const DELIVER_QUESTION = 'Deliver to (';

/**
 * `agent cron create` without arguments, on a terminal: the CLI adapter is driven in-process
 * with a CliIO that says a person is at the keyboard and whose stdin is a stream the test types
 * into; the use cases run on fakes.
 */
function interactiveCreate(args: string[] = []) {
  const h = cronHarness();
  const app: CronApp = { ...h, paths: agentPathsFor('/nonexistent/agent-home') };
  const { io, stdin, stdout, stderr } = fakeTerminal();
  const cli = yargs(['cron', 'create', ...args])
    .strict()
    .fail((message, error) => {
      throw error ?? new Error(message);
    });
  registerCronCommands(
    cli,
    async () => app,
    io,
    () => Promise.reject(new Error('agent cron status is not used here')),
  );
  return {
    h,
    stdin,
    done: cli.parseAsync(),
    stdout,
    stderr,
    /** How many times a question has been shown so far. */
    asked: (question: string) => stdout().split(question).length - 1,
  };
}

describe('agent cron create on a terminal', () => {
  it('asks for schedule, prompt, name and delivery, and creates the job from the answers', async () => {
    const session = interactiveCreate();

    for (const [question, answer] of [
      [SCHEDULE_QUESTION, 'every 2h'],
      [PROMPT_QUESTION, 'Summarise what changed in the repo'],
      [NAME_QUESTION, 'Digest'],
      [DELIVER_QUESTION, 'local'],
    ] as const) {
      expect(await eventually(() => session.asked(question) === 1)).toBe(true);
      session.stdin.write(`${answer}\n`);
    }
    await session.done;

    expect((await session.h.listJobs.execute()).jobs).toEqual([
      expect.objectContaining({
        schedule: expect.objectContaining({ kind: 'interval', expr: 'every 2h' }),
        prompt: 'Summarise what changed in the repo',
        name: 'Digest',
        deliver: 'local',
        state: 'scheduled',
      }),
    ]);
    expect(session.stdout()).toContain("Created job 000000000001 'Digest': every 2h");
    expect(session.stderr()).toBe('');
  });

  it('asks for the schedule with the examples of every schedule form of the table', async () => {
    const session = interactiveCreate();

    expect(await eventually(() => session.asked(SCHEDULE_QUESTION) === 1)).toBe(true);
    expect(session.stdout()).toContain(`Schedule (${SCHEDULE_FORMS.flatMap((form) => form.examples).join(' | ')}): `);
    session.stdin.end('every 2h\nSummarise\n\n\n');
    await session.done;
  });

  it('keeps answers pasted all at once for the questions that follow', async () => {
    const session = interactiveCreate();

    session.stdin.write('0 9 * * 1-5\nPlan my day\nPlanner\nlocal\n');
    await session.done;

    expect((await session.h.listJobs.execute()).jobs).toEqual([
      expect.objectContaining({
        schedule: expect.objectContaining({ kind: 'cron' }),
        prompt: 'Plan my day',
        name: 'Planner',
        deliver: 'local',
      }),
    ]);
  });

  it('asks for the schedule again after an answer that does not parse', async () => {
    const session = interactiveCreate();

    expect(await eventually(() => session.asked(SCHEDULE_QUESTION) === 1)).toBe(true);
    session.stdin.write('every fortnight\n');
    expect(await eventually(() => session.asked(SCHEDULE_QUESTION) === 2)).toBe(true);
    expect(session.stderr()).toMatch(/"every fortnight" is not a valid interval/);
    session.stdin.write('every 1d\nWater the plants\n\n\n');
    await session.done;

    expect((await session.h.listJobs.execute()).jobs).toEqual([
      expect.objectContaining({ schedule: expect.objectContaining({ expr: 'every 1d' }), prompt: 'Water the plants' }),
    ]);
  });

  it('an empty name and delivery keep the defaults, or what the flags said', async () => {
    const session = interactiveCreate(['--deliver', 'local']);

    session.stdin.write('30m\nStretch your legs\n\n\n');
    await session.done;

    expect((await session.h.listJobs.execute()).jobs).toEqual([
      expect.objectContaining({ name: 'Stretch your legs', deliver: 'local', schedule: expect.objectContaining({ kind: 'once' }) }),
    ]);
  });

  it('creates nothing and ends with exit status 130 when Ctrl-C is pressed during a question', async () => {
    const session = interactiveCreate();
    const exitCode = process.exitCode;
    try {
      session.stdin.write('every 1h\n');
      expect(await eventually(() => session.asked(PROMPT_QUESTION) === 1)).toBe(true);
      session.stdin.write('\u0003');
      await session.done;

      expect(process.exitCode).toBe(130);
      expect((await session.h.listJobs.execute()).jobs).toEqual([]);
      expect(session.stdout()).not.toContain('Created job');
      expect(session.stderr()).toBe('');
    } finally {
      process.exitCode = exitCode;
    }
  });

  it('creates nothing when the input ends before every question is answered', async () => {
    const session = interactiveCreate();

    session.stdin.end('every 1h\nHalf a job\n');

    await expect(session.done).rejects.toMatchObject({ code: 'CLI.INPUT_ENDED' });
    expect((await session.h.listJobs.execute()).jobs).toEqual([]);
  });
});
