import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually } from '../support/processLiveness.js';
import {
  createJob,
  inAScratchHomeEachTest,
  invocations,
  makeDue,
  outcomeOf,
  runAgent,
  startAgent,
  storedJob,
  storedJobs,
} from './agentCli.js';

/** Real `agent` processes racing each other over one AGENT_HOME. */
describe('agent cron under concurrency', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('20 creates started at once all succeed and leave exactly 20 jobs with 20 distinct ids', async () => {
    const runs = await Promise.all(Array.from({ length: 20 }, (_, n) => runAgent(['cron', 'create', 'every 1h', `Task ${n}`], { home })));

    expect(runs.map((run) => run.code)).toEqual(Array(20).fill(0));
    expect(runs.map((run) => run.stderr).join('')).toBe('');
    const jobs = storedJobs(home);
    expect(jobs).toHaveLength(20);
    expect(new Set(jobs.map((job) => job.id)).size).toBe(20);
    expect(jobs.map((job) => job.prompt).sort()).toEqual(Array.from({ length: 20 }, (_, n) => `Task ${n}`).sort());
    const announced = runs.map((run) => /^Created job ([0-9a-f]{12}) /.exec(run.stdout)?.[1]);
    expect(announced.sort()).toEqual(jobs.map((job) => job.id).sort());
  }, 240_000);

  it('6 ticks started at once over 5 due jobs run each job exactly once', async () => {
    const prompts = ['Job 1', 'Job 2', 'Job 3', 'Job 4', 'Job 5'];
    const ids = await Promise.all(prompts.map((prompt) => createJob(home, ['every 1h', prompt])));
    for (const id of ids) await makeDue(home, id, 3600_000);

    const ticks = await Promise.all(Array.from({ length: 6 }, () => runAgent(['cron', 'tick'], { home })));

    expect(ticks.map((tick) => tick.code)).toEqual(Array(6).fill(0));
    const ranLines = ticks.flatMap((tick) => tick.stdout.split('\n').filter((line) => line.startsWith('Ran job ')));
    expect(ranLines).toHaveLength(5);
    expect(invocations(home).sort()).toEqual(prompts);
    for (const id of ids) {
      expect(storedJob(home, id)).toMatchObject({
        state: 'scheduled',
        repeat: { times: null, completed: 1 },
        last_status: 'ok',
      });
      expect(storedJob(home, id)).not.toHaveProperty('claim');
    }
  }, 240_000);

  it('a tick killed mid-run: the next tick puts the job back in service with an "interrupted:" error and does not run that slot again', async () => {
    const prompt = 'Think it over [hang]';
    const id = await createJob(home, ['every 1h', prompt, '--name', 'Thinker']);
    await makeDue(home, id, 3600_000);

    const tick = startAgent(['cron', 'tick'], { home });
    const killed = outcomeOf(tick);
    const runStarted = await eventually(() => storedJob(home, id).state === 'running' && invocations(home).length === 1, 15_000);
    expect(runStarted).toBe(true);
    expect(storedJob(home, id).claim?.by).toMatch(new RegExp(`:${tick.pid}$`));
    tick.kill('SIGKILL');
    expect((await killed).code).toBeNull();

    // Were the slot run again, the idle budget would end the hanging model rather than the test's timeout.
    const next = await runAgent(['cron', 'tick'], { home, env: { AGENT_CRON_TIMEOUT: '5' } });

    expect(next.code).toBe(0);
    expect(next.stdout).toMatch(
      new RegExp(
        `^Job ${id} 'Thinker' was interrupted earlier and is back in service \\(interrupted: the process \\S+:${tick.pid} that ran it is gone\\)\\.\\n$`,
      ),
    );
    const job = storedJob(home, id);
    expect(job).toMatchObject({ state: 'scheduled', enabled: true, last_status: 'error', repeat: { completed: 1 } });
    expect(job).not.toHaveProperty('claim');
    expect(job.last_error).toMatch(/^interrupted:/);
    expect(Date.parse(job.next_run_at!)).toBeGreaterThan(Date.now());
    expect(invocations(home)).toEqual([prompt]);

    const after = await runAgent(['cron', 'tick', '--verbose'], { home });
    expect(after.stdout).toBe('No jobs were due.\n');
    expect(invocations(home)).toEqual([prompt]);
  }, 240_000);

  it('a tick killed while one-shots wait for a run slot leaves them waiting, and the next tick runs each once', async () => {
    await appendFile(join(home, 'config.yaml'), 'cron:\n  max_parallel_jobs: 1\n');
    const first = await createJob(home, ['30m', 'First [hang]', '--name', 'First']);
    const waiting = [
      await createJob(home, ['30m', 'Second', '--name', 'Second']),
      await createJob(home, ['30m', 'Third', '--name', 'Third']),
    ];
    await makeDue(home, first, 30_000);
    await makeDue(home, waiting[0]!, 20_000);
    await makeDue(home, waiting[1]!, 10_000);

    const tick = startAgent(['cron', 'tick'], { home });
    const killed = outcomeOf(tick);
    expect(await eventually(() => storedJob(home, first).state === 'running' && invocations(home).length === 1, 15_000)).toBe(true);
    tick.kill('SIGKILL');
    expect((await killed).code).toBeNull();

    for (const id of waiting) {
      expect(storedJob(home, id)).toMatchObject({ state: 'scheduled', enabled: true, last_status: null, repeat: { completed: 0 } });
      expect(storedJob(home, id)).not.toHaveProperty('claim');
    }

    const next = await runAgent(['cron', 'tick'], { home });
    expect(next.code).toBe(0);
    expect(invocations(home)).toEqual(['First [hang]', 'Second', 'Third']);
    for (const id of waiting)
      expect(storedJob(home, id)).toMatchObject({ state: 'completed', last_status: 'ok', repeat: { completed: 1 } });
    expect(storedJob(home, first).last_error).toMatch(/^interrupted:/);
  }, 240_000);
});
