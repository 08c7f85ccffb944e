import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isRunning, eventually } from '../support/processLiveness.js';
import {
  createJob,
  hungModelPids,
  inAScratchHomeEachTest,
  invocations,
  makeDue,
  runAgent,
  storedJob,
  storedJobs,
  writeHomeFile,
} from './agentCli.js';

/** `agent cron …` as a user meets it: the real executable, a scratch AGENT_HOME, a stand-in model. */
describe('agent cron, end to end', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  const agent = (...args: string[]) => runAgent(['cron', ...args], { home });

  function outputFilesOf(id: string): string[] {
    const directory = join(home, 'cron', 'output', id);
    return existsSync(directory) ? readdirSync(directory) : [];
  }

  describe('creating and listing', () => {
    it('says "No scheduled jobs." when there are none, and writes no store', async () => {
      const run = await agent('list');

      expect(run).toEqual({ code: 0, stdout: 'No scheduled jobs.\n', stderr: '' });
      expect(existsSync(join(home, 'cron', 'jobs.json'))).toBe(false);
    });

    it('refuses an edit that changes nothing, naming the flags, as a usage error', async () => {
      const id = await createJob(home, ['every 2h', 'Summarise', '--deliver', 'local']);

      const run = await agent('edit', id);

      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: Nothing to change: give at least one of --schedule, --prompt, .*\n$/);
    });

    it('takes --skill before the positionals without swallowing them, once per flag', async () => {
      const run = await agent('create', '--skill', 'triage', '--skill', 'tone', 'every 2h', 'Summarise', '--deliver', 'local');

      expect(run.code).toBe(0);
      const [, id] = /^Created job ([0-9a-f]{12})/.exec(run.stdout) ?? [];
      expect(storedJob(home, id!)).toMatchObject({ prompt: 'Summarise', schedule: { expr: 'every 2h' }, skills: ['triage', 'tone'] });
    });

    it('create takes the schedule and prompt as positionals and stores every flag', async () => {
      await writeHomeFile(home, 'scripts/prepare.mjs', 'console.log("figures for today");\n');
      await writeHomeFile(home, 'skills/triage/SKILL.md', '# Triage\n');
      await writeHomeFile(home, 'skills/tone/SKILL.md', '# Tone\n');

      const run = await agent(
        'create',
        'every 2h',
        'Summarise what changed in the repo',
        '--name',
        'Digest',
        '--deliver',
        'local',
        '--skill',
        'triage',
        '--skill',
        'tone',
        '--script',
        'prepare.mjs',
        '--repeat',
        '3',
        '--model',
        'small',
        '--provider',
        'command',
      );

      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      const [, id] =
        /^Created job ([0-9a-f]{12}) 'Digest': every 2h, next run \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\), delivers to local\.\n$/.exec(
          run.stdout,
        ) ?? [];
      expect(id).toBeDefined();
      const job = storedJob(home, id!);
      expect(job).toMatchObject({
        name: 'Digest',
        prompt: 'Summarise what changed in the repo',
        schedule: { kind: 'interval', expr: 'every 2h', display: 'every 2h', minutes: 120 },
        skills: ['triage', 'tone'],
        deliver: 'local',
        script: 'prepare.mjs',
        repeat: { times: 3, completed: 0 },
        model: 'small',
        provider: 'command',
        state: 'scheduled',
        enabled: true,
        last_status: null,
      });
      expect(Date.parse(job.next_run_at!) - Date.parse(job.created_at)).toBe(2 * 3600_000);
    });

    it('"add" is an alias of create, and a naive ISO time is read in AGENT_TIMEZONE', async () => {
      const run = await runAgent(['cron', 'add', '2099-01-15T14:00', 'Wish Ada a happy birthday'], {
        home,
        env: { AGENT_TIMEZONE: 'Europe/Berlin' },
      });

      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        /^Created job [0-9a-f]{12} 'Wish Ada a happy birthday': once at 2099-01-15 14:00, next run 2099-01-15 14:00 \(Europe\/Berlin\), delivers to origin\.\n$/,
      );
      expect(storedJobs(home)).toEqual([
        expect.objectContaining({
          schedule: expect.objectContaining({ kind: 'once', run_at: '2099-01-15T13:00:00Z' }),
          next_run_at: '2099-01-15T13:00:00Z',
          repeat: { times: 1, completed: 0 },
          deliver: 'origin',
        }),
      ]);
    });

    it('list prints a table with id, name, schedule, state, next run, last status and target', async () => {
      const digest = await createJob(home, ['every 2h', 'Summarise', '--name', 'Digest']);
      const planner = await createJob(home, ['0 9 * * 1-5', 'Plan my day', '--name', 'Planner', '--deliver', 'telegram:-100123']);
      await agent('pause', 'planner', '--no-tick');

      const run = await agent('list');

      expect(run.code).toBe(0);
      const [header, ...rows] = run.stdout.trimEnd().split('\n');
      expect(header!.split(/\s{2,}/)).toEqual(['ID', 'NAME', 'SCHEDULE', 'STATE', 'NEXT RUN (UTC)', 'LAST STATUS', 'DELIVER']);
      expect(rows.map((row) => row.split(/\s{2,}/))).toEqual([
        [digest, 'Digest', 'every 2h', 'scheduled', expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d$/), '-', 'origin'],
        [planner, 'Planner', '0 9 * * 1-5', 'paused', expect.stringMatching(/^\d{4}-\d\d-\d\d 09:00$/), '-', 'telegram:-100123'],
      ]);
      expect(run.stdout).not.toMatch(/\u001b\[/);
    });

    it('list --json prints the stored records as JSON', async () => {
      await Promise.all([createJob(home, ['every 2h', 'Summarise', '--name', 'Digest']), createJob(home, ['30m', 'Stretch'])]);

      const run = await agent('list', '--json');

      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual(storedJobs(home));
      expect(
        storedJobs(home)
          .map((job) => job.name)
          .sort(),
      ).toEqual(['Digest', 'Stretch']);
    });

    it('list --json keeps stdout pure JSON when its tick runs a job; the tick report goes to stderr', async () => {
      const id = await createJob(home, ['every 1h', 'Count the stars', '--deliver', 'local']);
      await makeDue(home, id, 3600_000);

      const run = await agent('list', '--json');

      expect(run.code).toBe(0);
      const listed = JSON.parse(run.stdout) as Array<{ id: string; last_status: string }>;
      expect(listed).toEqual([expect.objectContaining({ id, last_status: 'ok' })]);
      expect(run.stderr).toMatch(new RegExp(`^Ran job ${id} 'Count the stars': ok \\(output: .+\\.md\\)\\n$`));
      expect(invocations(home)).toEqual(['Count the stars']);
    });
  });

  describe('changing jobs', () => {
    it('edit changes each field it is given and leaves the others alone', async () => {
      await writeHomeFile(home, 'scripts/first.mjs', 'console.log(1);\n');
      await writeHomeFile(home, 'scripts/second.mjs', 'console.log(2);\n');
      const id = await createJob(home, ['every 2h', 'Summarise', '--name', 'Digest', '--skill', 'triage', '--script', 'first.mjs']);
      const before = storedJob(home, id);

      const run = await agent(
        'edit',
        id,
        '--schedule',
        '0 9 * * 1-5',
        '--prompt',
        'Summarise the week',
        '--name',
        'Weekly',
        '--deliver',
        'local',
        '--skill',
        'tone',
        '--skill',
        'brevity',
        '--script',
        'second.mjs',
        '--repeat',
        '5',
        '--model',
        'large',
        '--provider',
        'command',
      );

      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        new RegExp(`^Updated job ${id} 'Weekly': 0 9 \\* \\* 1-5, scheduled, next run \\d{4}-\\d\\d-\\d\\d 09:00 \\(UTC\\)\\.\\n$`),
      );
      expect(storedJob(home, id)).toEqual({
        ...before,
        schedule: { kind: 'cron', expr: '0 9 * * 1-5', display: '0 9 * * 1-5' },
        next_run_at: expect.stringMatching(/T09:00:00Z$/),
        prompt: 'Summarise the week',
        name: 'Weekly',
        deliver: 'local',
        skills: ['tone', 'brevity'],
        script: 'second.mjs',
        repeat: { times: 5, completed: 0 },
        model: 'large',
        provider: 'command',
      });
    });

    it('edit --clear-skills, --clear-script, --repeat 0, --no-model and --no-provider remove those settings', async () => {
      await writeHomeFile(home, 'scripts/first.mjs', 'console.log(1);\n');
      const id = await createJob(home, [
        'every 2h',
        'Summarise',
        '--skill',
        'triage',
        '--script',
        'first.mjs',
        '--repeat',
        '3',
        '--model',
        'small',
        '--provider',
        'command',
      ]);

      const run = await agent('edit', id, '--clear-skills', '--clear-script', '--repeat', '0', '--no-model', '--no-provider');

      expect(run.code).toBe(0);
      expect(storedJob(home, id)).toMatchObject({
        skills: [],
        script: null,
        repeat: { times: null, completed: 0 },
        model: null,
        provider: null,
        prompt: 'Summarise',
      });
    });

    it('pause stops a job from being scheduled; resume puts it back with its next run counted from now', async () => {
      const id = await createJob(home, ['every 1h', 'Check the feeds', '--name', 'Feeds']);
      await makeDue(home, id, 3600_000);

      const paused = await agent('pause', 'feeds', '--no-tick');
      expect(paused).toMatchObject({ code: 0, stdout: `Paused job ${id} 'Feeds'.\n` });
      expect(storedJob(home, id)).toMatchObject({ state: 'paused', enabled: false });

      const tick = await agent('tick', '--verbose');
      expect(tick.stdout).toBe('No jobs were due.\n');
      expect(invocations(home)).toEqual([]);

      const beforeResume = Date.now();
      const resumed = await agent('resume', id);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toMatch(new RegExp(`^Resumed job ${id} 'Feeds': every 1h, scheduled, next run .+ \\(UTC\\)\\.\\n$`));
      const job = storedJob(home, id);
      expect(job).toMatchObject({ state: 'scheduled', enabled: true, paused_at: null });
      expect(Date.parse(job.next_run_at!)).toBeGreaterThanOrEqual(Math.floor(beforeResume / 1000) * 1000 + 3600_000);
      expect(invocations(home)).toEqual([]);
    });

    it('pause --reason keeps the reason, shows it in list, show and status, and resume clears it', async () => {
      const id = await createJob(home, ['every 1h', 'Check the feeds', '--name', 'Feeds']);

      const paused = await agent('pause', 'feeds', '--reason', 'Feed server is down until Monday', '--no-tick');
      expect(paused).toMatchObject({ code: 0, stdout: `Paused job ${id} 'Feeds': Feed server is down until Monday.\n` });
      expect(storedJob(home, id)).toMatchObject({ state: 'paused', paused_reason: 'Feed server is down until Monday' });
      const listed = JSON.parse((await agent('list', '--json', '--no-tick')).stdout) as Array<Record<string, unknown>>;
      expect(listed[0]).toMatchObject({ state: 'paused', paused_reason: 'Feed server is down until Monday' });
      expect((await agent('list', '--no-tick')).stdout).toContain(`Paused because:\n  ${id} 'Feeds': Feed server is down until Monday`);
      expect((await agent('show', id, '--no-tick')).stdout).toMatch(/^ {2}Paused because: +Feed server is down until Monday$/m);
      const status = await agent('status', '--no-tick');
      expect(status.stdout).toMatch(new RegExp(`^Paused jobs:\\n  ${id} 'Feeds' since .+ — Feed server is down until Monday$`, 'm'));

      const refused = await agent('pause', id, '--reason', 'two\nlines', '--no-tick');
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr).toBe(
        'error: The pause reason holds a line break or another control character; write it as one line of text.\n',
      );

      expect((await agent('resume', id)).code).toBe(0);
      expect(storedJob(home, id)).toMatchObject({ state: 'scheduled', paused_at: null, paused_reason: null });
      expect((await agent('show', id, '--no-tick')).stdout).not.toContain('Paused because');
    });

    it('remove deletes the record and its output directory', async () => {
      const [id, gone] = await Promise.all([
        createJob(home, ['every 1h', 'Keep me', '--name', 'Keeper']),
        createJob(home, ['every 1h', 'Forget me', '--name', 'Goner']),
      ]);
      await agent('run', gone, '--no-tick');
      expect(outputFilesOf(gone)).toHaveLength(1);

      const run = await agent('remove', gone);

      expect(run).toMatchObject({ code: 0, stdout: `Removed job ${gone} 'Goner'.\n` });
      expect(storedJobs(home).map((job) => job.id)).toEqual([id]);
      expect(existsSync(join(home, 'cron', 'output', gone))).toBe(false);
    });

    it('"rm" is an alias of remove and takes a name', async () => {
      const id = await createJob(home, ['every 1h', 'Forget me', '--name', 'Goner']);

      const run = await agent('rm', 'GONER');

      expect(run).toMatchObject({ code: 0, stdout: `Removed job ${id} 'Goner'.\n` });
      expect(storedJobs(home)).toEqual([]);
    });
  });

  describe('running jobs', () => {
    it('run by id runs the job now, writes its output file under cron/output/<id>/ and prints the answer', async () => {
      const id = await createJob(home, ['every 1h', 'Say hello', '--name', 'Greeter', '--deliver', 'local']);

      const run = await agent('run', id);

      expect(run.code).toBe(0);
      const [, outputPath] =
        new RegExp(`^Ran job ${id} 'Greeter': ok \\(output: (.+)\\)\\n\\nAnswer to: Say hello\\n$`).exec(run.stdout) ?? [];
      expect(outputPath).toBeDefined();
      expect(outputPath!.startsWith(join(home, 'cron', 'output', id, ''))).toBe(true);
      expect(outputPath).toMatch(/\/\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d\.md$/);
      const report = readFileSync(outputPath!, 'utf8');
      expect(report).toContain('# Cron job: Greeter');
      expect(report).toContain(`- Job id: ${id}`);
      expect(report).toContain('Answer to: Say hello');
      expect(storedJob(home, id)).toMatchObject({ state: 'scheduled', last_status: 'ok', repeat: { completed: 1 } });
      expect(invocations(home)).toEqual(['Say hello']);
    });

    it('run finds a job by its name, ignoring case', async () => {
      const id = await createJob(home, ['every 1h', 'Plan my day', '--name', 'Morning Planner']);

      const run = await agent('run', 'morning PLANNER');

      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Ran job ${id} 'Morning Planner': ok`));
      expect(outputFilesOf(id)).toHaveLength(1);
      expect(invocations(home)).toEqual(['Plan my day']);
    });

    it('tick runs the due jobs, prints what ran, and completes a one-shot', async () => {
      const [recurring, oneShot, notDue] = await Promise.all([
        createJob(home, ['every 1h', 'Water the plants', '--name', 'Plants']),
        createJob(home, ['30m', 'Stretch', '--name', 'Stretch']),
        createJob(home, ['every 1h', 'Not yet', '--name', 'Later']),
      ]);
      await makeDue(home, recurring, 3 * 3600_000);
      await makeDue(home, oneShot, 5_000);
      const started = Date.now();

      const run = await agent('tick');

      expect(run.code).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(new RegExp(`^Ran job ${oneShot} 'Stretch': ok \\(output: .+\\.md\\)$`)),
          expect.stringMatching(new RegExp(`^Ran job ${recurring} 'Plants': ok \\(output: .+\\.md\\)$`)),
        ]),
      );
      expect(invocations(home).sort()).toEqual(['Stretch', 'Water the plants']);
      expect(storedJob(home, oneShot)).toMatchObject({ state: 'completed', enabled: false, next_run_at: null, last_status: 'ok' });
      const plants = storedJob(home, recurring);
      expect(plants).toMatchObject({ state: 'scheduled', last_status: 'ok', repeat: { times: null, completed: 1 } });
      // Missed slots are not replayed: the next run is an hour after this tick.
      expect(Date.parse(plants.next_run_at!)).toBeGreaterThanOrEqual(Math.floor(started / 1000) * 1000 + 3600_000);
      expect(storedJob(home, notDue)).toMatchObject({ last_status: null, repeat: { completed: 0 } });
    });

    it('tick prints nothing when nothing is due, so a crontab entry mails nothing; --verbose says so', async () => {
      await createJob(home, ['every 1h', 'Not yet']);

      const [quiet, verbose] = [await agent('tick'), await agent('tick', '--verbose')];

      expect(quiet).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(verbose).toEqual({ code: 0, stdout: 'No jobs were due.\n', stderr: '' });
      expect(invocations(home)).toEqual([]);
    });

    it('run refuses a one-shot that is not due yet, since the run would use it up, and --force runs it', async () => {
      const id = await createJob(home, ['2099-01-15T14:00', 'Wish Ada a happy birthday', '--name', 'Birthday', '--deliver', 'local']);
      const before = readFileSync(join(home, 'cron', 'jobs.json'));

      const refused = await agent('run', 'birthday');

      expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 1, stdout: '' });
      expect(refused.stderr).toBe(
        "error: Job 'Birthday' is a one-shot due at 2099-01-15 14:00 (UTC), and running it now would use it up; give --force to run it anyway.\n",
      );
      expect(readFileSync(join(home, 'cron', 'jobs.json'))).toEqual(before);
      expect(invocations(home)).toEqual([]);

      const forced = await agent('run', 'birthday', '--force');

      expect(forced.code).toBe(0);
      expect(forced.stdout).toMatch(new RegExp(`^Ran job ${id} 'Birthday': ok`));
      expect(storedJob(home, id)).toMatchObject({ state: 'completed', last_status: 'ok' });
      expect(invocations(home)).toEqual(['Wish Ada a happy birthday']);
    });

    it('every command but tick runs a tick first: a due job fires when "agent cron list" runs', async () => {
      const id = await createJob(home, ['every 1h', 'Fire on list', '--name', 'Eager']);
      await makeDue(home, id, 3600_000);

      const run = await agent('list');

      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(new RegExp(`^Ran job ${id} 'Eager': ok`));
      expect(run.stdout).toMatch(new RegExp(`^${id}\\s+Eager\\s+every 1h\\s+scheduled\\s+\\S+ \\S+\\s+ok\\s+origin$`, 'm'));
      expect(invocations(home)).toEqual(['Fire on list']);
    });

    it('--no-tick skips that tick: the due job stays due', async () => {
      const id = await createJob(home, ['every 1h', 'Wait for it', '--name', 'Patient']);
      await makeDue(home, id, 3600_000);

      const [list, pause] = await Promise.all([agent('list', '--no-tick'), agent('pause', id, '--no-tick')]);

      expect([list.code, pause.code]).toEqual([0, 0]);
      expect(list.stderr + pause.stderr).toBe('');
      expect(invocations(home)).toEqual([]);
      expect(storedJob(home, id)).toMatchObject({ last_status: null, repeat: { completed: 0 } });
    });

    it('a run that prints nothing for AGENT_CRON_TIMEOUT seconds is killed: run exits 1 with an "idle timeout" error', async () => {
      const id = await createJob(home, ['every 1h', 'Think forever [hang]', '--name', 'Mute']);

      // 3 s: long enough for the stand-in model (a Node program) to start and record its pid first,
      // on a machine whose cores are busy; with 1 s it was once killed before it had.
      const run = await runAgent(['cron', 'run', id], { home, env: { AGENT_CRON_TIMEOUT: '3' } });

      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(new RegExp(`^Ran job ${id} 'Mute': error: idle timeout: no output for 3 s`));
      const job = storedJob(home, id);
      expect(job.last_status).toBe('error');
      expect(job.last_error).toMatch(/^idle timeout/);
      expect(job).toMatchObject({ state: 'scheduled', repeat: { completed: 1 } });
      expect(job).not.toHaveProperty('claim');
      const [model] = hungModelPids(home);
      expect(model).toBeDefined();
      expect(await eventually(() => !isRunning(model!))).toBe(true);
    });
  });
});
