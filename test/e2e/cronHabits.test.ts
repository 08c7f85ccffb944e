import { createJob, inAScratchHomeEachTest, runAgent, storedJob, storedJobs } from './agentCli.js';

/** The words other schedulers taught users (`cron ls`, `@daily`, `in 30m`), through the real executable. */
describe('agent cron, the way users of other schedulers type it', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  const agent = (...args: string[]) => runAgent(['cron', ...args], { home });

  it('ls lists, disable and enable pause and resume, delete and rm remove', async () => {
    const [digest, feeds] = await Promise.all([
      createJob(home, ['every 1h', 'Send the digest', '--name', 'Digest']),
      createJob(home, ['every 1h', 'Check the feeds', '--name', 'Feeds']),
    ]);

    const listed = await agent('ls');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${digest}\\s+Digest\\s+every 1h\\s+scheduled`, 'm'));

    expect(await agent('disable', 'digest')).toMatchObject({ code: 0, stdout: `Paused job ${digest} 'Digest'.\n` });
    expect(storedJob(home, digest)).toMatchObject({ state: 'paused', enabled: false });
    expect((await agent('enable', 'digest')).stdout).toMatch(new RegExp(`^Resumed job ${digest} 'Digest'`));
    expect(storedJob(home, digest)).toMatchObject({ state: 'scheduled', enabled: true });

    expect(await agent('delete', 'digest')).toMatchObject({ code: 0, stdout: `Removed job ${digest} 'Digest'.\n` });
    expect(await agent('rm', 'feeds')).toMatchObject({ code: 0, stdout: `Removed job ${feeds} 'Feeds'.\n` });
    expect(storedJobs(home)).toEqual([]);
  });

  it('status shows the cron part of "agent status": the gateway, the next jobs and the failed ones, not the webhooks', async () => {
    const id = await createJob(home, ['every 1h', 'Send the digest', '--name', 'Digest']);

    const run = await agent('status');

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('Gateway: not running (start it with "agent gateway")');
    expect(run.stdout).toMatch(new RegExp(`^Next jobs:\\n.*\\n  ${id}\\s+Digest\\s+\\d{4}-`, 'm'));
    expect(run.stdout).toContain('Failed jobs: none');
    expect(run.stdout).not.toContain('Webhook');
  });

  it('takes the cron macros, keeps the macro as the schedule shown and fires by the expression it stands for', async () => {
    const run = await agent('create', '@weekly', 'Plan the week', '--name', 'Planner');

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Created job [0-9a-f]{12} 'Planner': @weekly, next run \d{4}-\d\d-\d\d 00:00 \(UTC\)/);
    const [job] = storedJobs(home);
    expect(job!.schedule).toEqual({ kind: 'cron', expr: '0 0 * * 0', display: '@weekly' });
    expect(new Date(job!.next_run_at!).getUTCDay()).toBe(0);
    expect((await agent('ls')).stdout).toMatch(/Planner\s+@weekly\s+scheduled/);
    expect((await agent('show', 'planner')).stdout).toMatch(/^ {2}Schedule: +at 00:00 on Sunday \(@weekly\)$/m);

    const edited = await agent('edit', 'planner', '--schedule', '@HOURLY');
    expect(edited.code).toBe(0);
    expect(storedJobs(home)[0]!.schedule).toEqual({ kind: 'cron', expr: '0 * * * *', display: '@hourly' });
  });

  it('takes "in 30m" and "in 2 hours" as delays for a one-shot', async () => {
    const before = Date.now();
    const [soon, later] = await Promise.all([createJob(home, ['in 30m', 'Stretch']), createJob(home, ['in 2 hours', 'Drink water'])]);

    for (const [id, minutes, display] of [
      [soon, 30, 'once in 30m'],
      [later, 120, 'once in 2 hours'],
    ] as const) {
      const job = storedJob(home, id);
      expect(job.schedule).toMatchObject({ kind: 'once', display });
      const delay = Date.parse(job.next_run_at!) - before;
      expect(delay).toBeGreaterThanOrEqual(minutes * 60_000 - 1000);
      expect(delay).toBeLessThan(minutes * 60_000 + 60_000);
    }
  });

  it('refuses an unknown macro and a delay without a unit in one sentence, listing the forms', async () => {
    const runs = await Promise.all([agent('create', '@reboot', 'x'), agent('create', 'in 5', 'x')]);

    expect(runs.map((run) => [run.code, run.stdout])).toEqual([
      [1, ''],
      [1, ''],
    ]);
    expect(runs[0]!.stderr).toMatch(
      /^error: "@reboot" is not a cron macro: the macros are @hourly, @daily, .*"@daily" \(cron\).*"in 30m" \(delay\)\.\n$/,
    );
    expect(runs[1]!.stderr).toMatch(/^error: "in 5" is not a valid delay: it has no unit/);
    expect(storedJobs(home)).toEqual([]);
  });

  it('--help names the aliases, the macros and the relative delays', async () => {
    const [group, create] = await Promise.all([agent('--help'), agent('create', '--help')]);

    expect(group.stdout).toMatch(/cron list .*\[aliases: ls\]/);
    expect(group.stdout).toMatch(/cron pause <job> .*\[aliases: disable\]/);
    expect(group.stdout).toMatch(/cron resume <job> .*\[aliases: enable\]/);
    expect(group.stdout).toMatch(/cron remove <job> .*\[aliases: rm, delete\]/);
    expect(group.stdout).toMatch(/agent cron status /);
    const createHelp = create.stdout.replace(/\s+/g, ' ');
    for (const form of ['"@hourly"', '"@daily"', '"@midnight"', '"@weekly"', '"@monthly"', '"@yearly"', '"@annually"', '"in 30m"']) {
      expect(createHelp).toContain(form);
    }
  });
});
