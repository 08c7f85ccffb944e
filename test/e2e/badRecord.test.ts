import { readFile, writeFile } from 'node:fs/promises';
import { createJob, errorSentence, inAScratchHomeEachTest, invocations, jobsFileOf, makeDue, runAgent, storedJobs } from './agentCli.js';

/** A store holding one good job and, after it, a record whose next run is not a time. */
async function storeWithABadRecord(home: string): Promise<{ good: string; badRecord: Record<string, unknown> }> {
  const good = await createJob(home, ['every 1h', 'Good job', '--name', 'good', '--deliver', 'local']);
  const document = JSON.parse(await readFile(jobsFileOf(home), 'utf8')) as { jobs: Array<Record<string, unknown>> };
  const badRecord = { ...document.jobs[0]!, id: 'bad000000001', name: 'bad', next_run_at: 'soon', custom: 42 };
  document.jobs.push(badRecord);
  await writeFile(jobsFileOf(home), JSON.stringify(document, null, 2));
  return { good, badRecord };
}

const storedBadRecord = async (home: string) =>
  (JSON.parse(await readFile(jobsFileOf(home), 'utf8')) as { jobs: Array<Record<string, unknown>> }).jobs.find(
    (record) => record.id === 'bad000000001',
  );

describe('a stored record whose next run is not a date', () => {
  let home: string;
  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('is reported by list, kept untouched by list, tick and edits of other jobs, and explained when named', async () => {
    const { good, badRecord } = await storeWithABadRecord(home);

    const list = await runAgent(['cron', 'list'], { home });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('good');
    expect(list.stderr).toMatch(/bad000000001.*next_run_at "soon" is not a date/);

    expect((await runAgent(['cron', 'tick'], { home })).code).toBe(0);
    expect((await runAgent(['cron', 'edit', good, '--prompt', 'Better job', '--no-tick'], { home })).code).toBe(0);
    expect(storedJobs(home).find((job) => job.id === good)!.prompt).toBe('Better job');
    expect(await storedBadRecord(home)).toEqual(badRecord);

    const edit = await runAgent(['cron', 'edit', 'bad000000001', '--prompt', 'x', '--no-tick'], { home });
    expect(edit.code).toBe(1);
    expect(errorSentence(edit)).toMatch(
      /^error: The stored record of job bad000000001 cannot be read \(its next_run_at "soon" is not a date and time\)/,
    );
    expect(await storedBadRecord(home)).toEqual(badRecord);
  });
});

describe('a stored record whose cron expression is not valid (a hand-edited store)', () => {
  let home: string;
  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('does not stop a due job from running, and list reports the record, naming the field', async () => {
    const good = await createJob(home, ['every 1h', 'Good job', '--name', 'good', '--deliver', 'local']);
    await makeDue(home, good);
    const document = JSON.parse(await readFile(jobsFileOf(home), 'utf8')) as { jobs: Array<Record<string, unknown>> };
    const badRecord = {
      ...document.jobs[0]!,
      id: 'bad000000001',
      name: 'bad',
      schedule: { kind: 'cron', expr: '*/61 * * * *', display: '*/61 * * * *' },
    };
    document.jobs.push(badRecord);
    await writeFile(jobsFileOf(home), JSON.stringify(document, null, 2));

    const tick = await runAgent(['cron', 'tick'], { home });

    expect({ code: tick.code, stderr: tick.stderr }).toEqual({ code: 0, stderr: '' });
    expect(invocations(home)).toEqual(['Good job']);
    expect(await storedBadRecord(home)).toEqual(badRecord);

    const list = await runAgent(['cron', 'list'], { home });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('good');
    expect(list.stderr).toMatch(
      /bad000000001\) could not be read because its cron expression "\*\/61 \* \* \* \*" is not valid: the minute field "\*\/61" has step 61, which is not between 1 and 60;/,
    );

    const edit = await runAgent(['cron', 'edit', 'bad000000001', '--prompt', 'x', '--no-tick'], { home });
    expect(edit.code).toBe(1);
    expect(errorSentence(edit)).toMatch(/cannot be read \(its cron expression "\*\/61 \* \* \* \*" is not valid: the minute field/);
  });
});
