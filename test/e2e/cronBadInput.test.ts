import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AgentRun,
  createJob,
  editStoredJob,
  errorSentence,
  inAScratchHomeEachTest,
  invocations,
  jobsFileOf,
  makeAgentHome,
  removeAgentHome,
  runAgent,
  writeHomeFile,
} from './agentCli.js';

/**
 * What a user sees when something is wrong: exit code 1 for a failure and 2 for a
 * usage error, one `error:` sentence on stderr (errorSentence fails the test on more, including
 * any stack trace), nothing on stdout, and the store left as it was.
 */
describe('agent cron given bad input', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  const agent = (...args: string[]) => runAgent(['cron', ...args], { home });

  function failure(run: AgentRun, code: number): string {
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code, stdout: '' });
    return errorSentence(run);
  }

  const storeBytes = () => readFileSync(jobsFileOf(home));

  describe('schedules', () => {
    it('refuses a schedule of no known form, lists the four forms, and writes nothing', async () => {
      const message = failure(await agent('create', 'next tuesday', 'Plan the week'), 1);

      expect(message).toMatch(/"next tuesday" is not a schedule/);
      expect(message).toMatch(/every 30m.*0 9 \* \* 1-5.*2027-01-15T14:00.*30m/);
      expect(existsSync(jobsFileOf(home))).toBe(false);
    });

    it('leaves an existing store byte for byte as it was when a schedule is refused', async () => {
      await createJob(home, ['every 1h', 'Keep me']);
      const before = storeBytes();

      failure(await agent('create', 'every fortnight', 'Plan the week'), 1);

      expect(storeBytes()).toEqual(before);
    });

    it('names the cron field that is out of range', async () => {
      const [minute, hour] = await Promise.all([agent('create', '61 * * * *', 'x'), agent('create', '0 25 * * *', 'x')]);

      expect(failure(minute, 1)).toMatch(/minute field "61"/);
      expect(failure(hour, 1)).toMatch(/hour field "25"/);
      expect(existsSync(jobsFileOf(home))).toBe(false);
    });

    it("names the cron field whose step is larger than the field, never the cron library's words", async () => {
      const schedules = ['*/61 * * * *', '0 0 */32 * *', '0 0 * */13 *', '0 0 * * 1-5/9'];
      const runs = await Promise.all(schedules.map((schedule) => agent('create', schedule, 'x')));

      expect(runs.map((run) => failure(run, 1))).toEqual([
        'error: Cron minute field "*/61" has step 61, which is not between 1 and 60; use numbers 0-59, "*", lists (a,b), ranges (a-b) and steps (*/n, a-b/n).',
        'error: Cron day-of-month field "*/32" has step 32, which is not between 1 and 31; use numbers 1-31, "*", lists (a,b), ranges (a-b) and steps (*/n, a-b/n).',
        'error: Cron month field "*/13" has step 13, which is not between 1 and 12; use numbers 1-12 or names, "*", lists (a,b), ranges (a-b) and steps (*/n, a-b/n).',
        'error: Cron day-of-week field "1-5/9" has step 9, which is not between 1 and 7; use numbers 0-7 or names, "*", lists (a,b), ranges (a-b) and steps (*/n, a-b/n).',
      ]);
      expect(existsSync(jobsFileOf(home))).toBe(false);
    });

    it('says what is wrong with an interval, a delay or a date, and lists the four forms', async () => {
      const schedules = ['every 0m', 'every 5x', 'every 30', '0m', '2026-02-30T10:00:00', '2027-01-15T14:00:00+25:00'];
      const runs = await Promise.all(schedules.map((schedule) => agent('create', schedule, 'x')));
      const messages = runs.map((run) => failure(run, 1));

      expect(messages.map((message) => message.replace(/; use one of: .*$/, ''))).toEqual([
        'error: "every 0m" is not a valid interval: the number must be a whole number of 1 or more, not 0',
        'error: "every 5x" is not a valid interval: "x" is not a unit (s for seconds, m for minutes, h for hours, d for days)',
        'error: "every 30" is not a valid interval: it has no unit (s for seconds, m for minutes, h for hours, d for days)',
        'error: "0m" is not a schedule: the number must be a whole number of 1 or more, not 0',
        'error: "2026-02-30T10:00:00" is not a real date and time: 2026-02 has no day 30',
        'error: "2027-01-15T14:00:00+25:00" is not a real date and time: +25:00 is not a UTC offset',
      ]);
      for (const message of messages) {
        expect(message).toMatch(
          /; use one of: "every 30m" \(interval\), "0 9 \* \* 1-5" or "@daily" \(cron\), "2027-01-15T14:00:00" \(ISO time\), "30m" or "in 30m" \(delay\)\.$/,
        );
      }
      expect(existsSync(jobsFileOf(home))).toBe(false);
    });

    it('refuses a one-shot in the past', async () => {
      const message = failure(await agent('create', '2020-01-01T09:00', 'Too late'), 1);

      expect(message).toMatch(/"2020-01-01T09:00" is in the past; give a future time/);
      expect(existsSync(jobsFileOf(home))).toBe(false);
    });

    it('takes a one-shot time in the past within cron.one_shot_grace_seconds', async () => {
      await appendFile(join(home, 'config.yaml'), 'cron:\n  one_shot_grace_seconds: 3600\n');
      const tenMinutesAgo = new Date(Date.now() - 600_000).toISOString().slice(0, 16);

      const created = await agent('create', `${tenMinutesAgo}Z`, 'Still wanted', '--no-tick');

      expect(created.code).toBe(0);
      expect(created.stdout).toMatch(/^Created job [0-9a-f]{12} /);
    });
  });

  describe('time zones', () => {
    it('refuses an invalid timezone in config.yaml on every command', async () => {
      const mars = await makeAgentHome({ timezone: 'Mars/Olympus' });
      try {
        const runs = await Promise.all([
          runAgent(['cron', 'list'], { home: mars }),
          runAgent(['cron', 'create', '0 9 * * *', 'Plan'], { home: mars }),
          runAgent(['cron', 'tick'], { home: mars }),
        ]);

        for (const run of runs)
          expect(failure(run, 1)).toMatch(/config\.yaml: timezone: "Mars\/Olympus" is not a valid time zone; use an IANA name/);
        expect(existsSync(jobsFileOf(mars))).toBe(false);
      } finally {
        await removeAgentHome(mars);
      }
    });

    describe('from TZ, when neither config.yaml nor AGENT_TIMEZONE names one', () => {
      let zoneless: string;
      beforeEach(async () => (zoneless = await makeAgentHome({ timezone: null })));
      afterEach(() => removeAgentHome(zoneless));

      it('refuses a TZ that names no zone, naming TZ, instead of reading it as UTC', async () => {
        const runs = await Promise.all([
          runAgent(['cron', 'list'], { home: zoneless, env: { TZ: 'Foo/Bar' } }),
          runAgent(['cron', 'create', '0 9 * * *', 'Plan'], { home: zoneless, env: { TZ: 'Foo/Bar' } }),
        ]);

        for (const run of runs) {
          expect(failure(run, 1)).toBe('error: TZ: "Foo/Bar" is not a valid time zone; use an IANA name such as "Europe/Berlin" or "UTC".');
        }
        expect(existsSync(jobsFileOf(zoneless))).toBe(false);
      });

      it('reads an empty TZ as UTC and a set one as its zone', async () => {
        const utc = await runAgent(['cron', 'create', '0 9 * * *', 'Plan', '--no-tick'], { home: zoneless, env: { TZ: '' } });
        const tokyo = await runAgent(['cron', 'list'], { home: zoneless, env: { TZ: 'Asia/Tokyo' } });

        expect(utc.code).toBe(0);
        expect(utc.stdout).toMatch(/next run \d{4}-\d\d-\d\d 09:00 \(UTC\)/);
        expect(tokyo.code).toBe(0);
        expect(tokyo.stdout).toMatch(/NEXT RUN \(Asia\/Tokyo\)[^]*\d{4}-\d\d-\d\d 18:00/);
      });

      it("lets config.yaml's timezone win over an invalid TZ", async () => {
        const run = await runAgent(['cron', 'list'], { home, env: { TZ: 'Foo/Bar' } });

        expect(run.code).toBe(0);
      });
    });

    it('refuses an invalid AGENT_TIMEZONE even when config.yaml names a valid zone', async () => {
      const run = await runAgent(['cron', 'create', '0 9 * * *', 'Plan'], { home, env: { AGENT_TIMEZONE: 'Nope/Nope' } });

      expect(failure(run, 1)).toMatch(/AGENT_TIMEZONE: "Nope\/Nope" is not a valid time zone/);
      expect(existsSync(jobsFileOf(home))).toBe(false);
    });
  });

  describe('naming jobs', () => {
    it('says so when no job has the id or name given', async () => {
      await createJob(home, ['every 1h', 'Keep me']);
      const before = storeBytes();

      const runs = await Promise.all(
        ['pause', 'resume', 'run', 'remove', 'edit'].map((command) =>
          agent(command, 'nosuchjob', ...(command === 'edit' ? ['--name', 'x'] : [])),
        ),
      );

      for (const run of runs) expect(failure(run, 1)).toBe('error: No job has the id or name "nosuchjob"; see "agent cron list".');
      expect(storeBytes()).toEqual(before);
    });

    it('refuses a name that several jobs share and lists their ids', async () => {
      // Two jobs cannot be given one name; a store edited by hand (or older) can still have it.
      const first = await createJob(home, ['every 1h', 'One', '--name', 'Digest']);
      const second = await createJob(home, ['every 2h', 'Two', '--name', 'Other']);
      await editStoredJob(home, second, (job) => (job.name = 'digest'));

      const message = failure(await agent('run', 'DIGEST'), 1);

      expect(message).toContain(`The name "DIGEST" matches 2 jobs (${first}, ${second}); name one by its id.`);
      expect(invocations(home)).toEqual([]);
    });
  });

  describe('usage errors', () => {
    it('exits 2 for an unknown command, saying it is unknown', async () => {
      const runs = await Promise.all([agent('frob'), agent('lst'), runAgent(['crn', 'list'], { home })]);

      for (const run of runs) expect(failure(run, 2)).toMatch(/unknown (command|argument)/i);
      expect(failure(runs[1]!, 2)).toMatch(/list/);
    });

    it('exits 2 for an unknown flag and names it', async () => {
      const [list, create] = await Promise.all([agent('list', '--jsno'), agent('create', 'every 1h', 'x', '--nmae', 'y')]);

      expect(failure(list, 2)).toMatch(/Unknown flag --jsno; did you mean --json\?/);
      expect(failure(create, 2)).toMatch(/Unknown flag --nmae; did you mean --name\?/);
      expect(existsSync(jobsFileOf(home))).toBe(false);
    });

    it('exits 2 when create gets no schedule and prompt and there is no terminal to ask on', async () => {
      const [bare, scheduleOnly] = await Promise.all([agent('create'), agent('create', 'every 1h')]);

      expect(failure(bare, 2)).toMatch(/no terminal to ask on; run: agent cron create "<schedule>" "<prompt>"/);
      expect(failure(scheduleOnly, 2)).toMatch(/needs a schedule and a prompt/);
      expect(existsSync(jobsFileOf(home))).toBe(false);
    });
  });

  describe('a damaged store', () => {
    it('stops every command with a message that the file is damaged, and never rewrites it', async () => {
      const damaged = Buffer.from('{"jobs": [ {"id": "abc", oops\n');
      await writeHomeFile(home, 'cron/jobs.json', damaged.toString());

      const commands = [
        ['list'],
        ['list', '--json'],
        ['create', 'every 1h', 'x'],
        ['create', 'every 1h', 'x', '--no-tick'],
        ['edit', 'abc', '--name', 'y'],
        ['pause', 'abc'],
        ['resume', 'abc'],
        ['run', 'abc'],
        ['remove', 'abc'],
        ['tick'],
      ];
      const runs = await Promise.all(commands.map((args) => agent(...args)));

      for (const run of runs) {
        expect(failure(run, 1)).toMatch(
          new RegExp(`^error: The job store ${jobsFileOf(home)} is damaged \\(it is not valid JSON: .+\\); it was left untouched`),
        );
      }
      expect(storeBytes()).toEqual(damaged);
    });
  });

  describe('an unusable home', () => {
    it('reports a cron directory that is a regular file, naming the path, on every command', async () => {
      await writeFile(join(home, 'cron'), 'not a directory');

      const runs = await Promise.all([agent('list'), agent('create', 'every 1h', 'x', '--no-tick'), agent('tick')]);

      for (const run of runs) expect(failure(run, 1)).toContain(`make ${join(home, 'cron')} a directory this user can write to`);
      expect(readFileSync(join(home, 'cron'), 'utf8')).toBe('not a directory');
    });

    it('reports an AGENT_HOME below a regular file, naming the path', async () => {
      const parent = await mkdtemp(join(tmpdir(), 'agent-e2e-file-'));
      try {
        const file = join(parent, 'plain-file');
        await writeFile(file, '');
        const homeBelowFile = join(file, 'home');

        const runs = await Promise.all([
          runAgent(['cron', 'list'], { home: homeBelowFile }),
          runAgent(['cron', 'create', 'every 1h', 'x'], { home: homeBelowFile }),
          runAgent(['cron', 'tick'], { home: homeBelowFile }),
        ]);

        for (const run of runs) {
          const message = failure(run, 1);
          expect(message).toContain(homeBelowFile);
          expect(message).toMatch(/part of the path is a file where a directory should be/);
        }
      } finally {
        await rm(parent, { recursive: true, force: true });
      }
    });
  });

  describe('config.yaml', () => {
    it('names the file and the key of a wrong value', async () => {
      const wrong = await makeAgentHome({ extraConfig: 'cron:\n  max_parallel_jobs: four' });
      try {
        const message = failure(await runAgent(['cron', 'list'], { home: wrong }), 1);

        expect(message).toBe(
          `error: ${join(wrong, 'config.yaml')}: cron.max_parallel_jobs must be a whole number of 1 or more (got "four").`,
        );
      } finally {
        await removeAgentHome(wrong);
      }
    });
  });
});

describe('failure alerts settings through the built CLI', () => {
  let home: string;
  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('counts failed runs in a row on the record and shows them; refuses a failure_alerts value it does not know', async () => {
    await appendFile(join(home, 'config.yaml'), 'cron:\n  failure_alerts: every\n  pause_after_failures: 2\n');
    const id = await createJob(home, ['every 1h', 'Fail [hang]', '--name', 'Failing']);
    for (let n = 0; n < 2; n += 1) {
      const run = await runAgent(['cron', 'run', id], { home, env: { AGENT_CRON_TIMEOUT: '1' } });
      expect(run.code).toBe(1);
    }
    const [job] = JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout) as Array<Record<string, unknown>>;
    expect(job).toMatchObject({
      failure_streak: 2,
      state: 'paused',
      paused_reason: expect.stringMatching(/^paused after 2 consecutive failed runs/),
    });

    await writeFile(
      join(home, 'config.yaml'),
      `${readFileSync(join(home, 'config.yaml'), 'utf8').replace('failure_alerts: every', 'failure_alerts: sometimes')}`,
    );
    const refused = await runAgent(['cron', 'list', '--no-tick'], { home });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/cron\.failure_alerts.*must be first, every or off/);
  });
});
