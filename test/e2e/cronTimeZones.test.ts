import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createJob, errorSentence, inAScratchHomeEachTest, invocations, makeDue, runAgent, storedJob, storedJobs } from './agentCli.js';

const NEW_YORK = 'America/New_York';
const HOUR_MS = 3_600_000;

/** `YYYY-MM-DD HH:MM:SS` shown in `timeZone` at `instant`, worked out by Intl alone. */
function wallClock(instant: string | Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instant));
  const part = (type: string) => parts.find((each) => each.type === type)!.value;
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')}`;
}

/** A job's own time zone (`--tz`), next to `timezone: Europe/Berlin` in config.yaml. */
describe('a job with its own time zone, end to end', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh), { timezone: 'Europe/Berlin' });

  const agent = (...args: string[]) => runAgent(['cron', ...args], { home });

  it('reads its cron expression in that zone, and list, show and --json say so', async () => {
    const created = await agent('create', '0 9 * * *', 'Morning brief', '--tz', NEW_YORK, '--name', 'Brief', '--no-tick');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(
      /^Created job [0-9a-f]{12} 'Brief': 0 9 \* \* \*, next run \d{4}-\d\d-\d\d 09:00 \(America\/New_York\), delivers to origin\.\n$/,
    );
    const berlin = await createJob(home, ['0 9 * * *', 'Berlin brief', '--name', 'Local']);

    const listed = await agent('list', '--json', '--no-tick');
    const [brief, local] = JSON.parse(listed.stdout) as Array<{ id: string; timezone: string | null; next_run_at: string }>;
    expect(brief).toMatchObject({ timezone: NEW_YORK });
    expect(wallClock(brief!.next_run_at, NEW_YORK)).toMatch(/ 09:00:00$/);
    expect(Date.parse(brief!.next_run_at) - Date.now()).toBeLessThanOrEqual(25 * HOUR_MS);
    expect(local).toMatchObject({ id: berlin, timezone: null });
    expect(wallClock(local!.next_run_at, 'Europe/Berlin')).toMatch(/ 09:00:00$/);

    const table = (await agent('list', '--no-tick')).stdout.split('\n');
    expect(table[0]).toMatch(/NEXT RUN \(Europe\/Berlin\)/);
    expect(table.find((line) => line.includes('Brief'))).toMatch(/ \d{4}-\d\d-\d\d 09:00 \(America\/New_York\) /);
    expect(table.find((line) => line.includes('Local'))).toMatch(/ \d{4}-\d\d-\d\d 09:00 {2,}-/);

    const shown = await agent('show', 'Brief', '--no-tick');
    const lines = shown.stdout.split('\n');
    expect(lines).toContain('  Time zone:           America/New_York');
    expect(lines).toContain('Next 5 runs (America/New_York):');
    const next = lines.indexOf('Next 5 runs (America/New_York):');
    expect(lines.slice(next + 1, next + 6)).toEqual(Array(5).fill(expect.stringMatching(/^ {2}\d{4}-\d\d-\d\d 09:00 {2}\w{3}$/)));
    const json = JSON.parse((await agent('show', 'Brief', '--json', '--no-tick')).stdout) as { timezone: string; next_runs: string[] };
    expect(json.timezone).toBe(NEW_YORK);
    expect(json.next_runs.map((at) => wallClock(at, NEW_YORK).slice(11))).toEqual(Array(5).fill('09:00:00'));
    expect((await agent('show', 'Local', '--no-tick')).stdout).toContain('  Time zone:           Europe/Berlin\n');
  });

  it('fires a one-shot written without an offset at that time in its zone, its report named and dated there', async () => {
    // New York's wall clock of this very minute: due now when read there, hours away (or gone) in Berlin.
    const now = wallClock(new Date(), NEW_YORK);
    const id = await createJob(home, [`${now.slice(0, 10)}T${now.slice(11, 16)}`, 'Ring the bell', '--tz', NEW_YORK, '--deliver', 'local']);
    const job = storedJob(home, id);
    expect(job).toMatchObject({ timezone: NEW_YORK, schedule: { display: `once at ${now.slice(0, 16)}` } });
    expect(wallClock(job.next_run_at!, NEW_YORK)).toBe(`${now.slice(0, 16)}:00`);

    const tick = await agent('tick');

    expect(tick.code).toBe(0);
    expect(invocations(home)).toEqual([expect.stringContaining('Ring the bell')]);
    const ran = storedJob(home, id);
    expect(ran).toMatchObject({ state: 'completed', last_status: 'ok' });
    const reports = readdirSync(join(home, 'cron', 'output', id));
    expect(reports).toEqual([`${wallClock(ran.last_run_at!, NEW_YORK).replace(' ', '_').replaceAll(':', '-')}.md`]);
    expect(readFileSync(join(home, 'cron', 'output', id, reports[0]!), 'utf8')).toContain(
      `- Run at: ${wallClock(ran.last_run_at!, NEW_YORK).slice(0, 16)} (America/New_York)`,
    );
    const runs = await agent('runs', id, '--no-tick');
    expect(runs.stdout.split('\n')[0]).toMatch(/^TIME \(America\/New_York\) +STATUS/);
  });

  it('counts its next run in its zone after a run, and in the configured zone again after edit --no-tz', async () => {
    const id = await createJob(home, ['0 9 * * *', 'Morning brief', '--tz', NEW_YORK, '--deliver', 'local']);
    await makeDue(home, id);

    expect((await agent('tick')).code).toBe(0);

    const ran = storedJob(home, id);
    expect(ran.last_status).toBe('ok');
    expect(wallClock(ran.next_run_at!, NEW_YORK)).toMatch(/ 09:00:00$/);
    expect(Date.parse(ran.next_run_at!)).toBeGreaterThan(Date.now());

    const edited = await agent('edit', id, '--no-tz', '--no-tick');
    expect(edited.stdout).toMatch(/, next run \d{4}-\d\d-\d\d 09:00 \(Europe\/Berlin\)\.\n$/);
    const back = storedJob(home, id);
    expect(back.timezone).toBeNull();
    expect(wallClock(back.next_run_at!, 'Europe/Berlin')).toMatch(/ 09:00:00$/);
  });

  it('refuses an unknown zone in one sentence, exit 1, and writes nothing', async () => {
    const created = await agent('create', '0 9 * * *', 'Morning brief', '--tz', 'Mars/Base', '--no-tick');

    expect(created.code).toBe(1);
    expect(errorSentence(created)).toMatch(
      /^error: Unknown time zone "Mars\/Base"; use an IANA name such as Europe\/Berlin or America\/New_York \(`timedatectl list-timezones` lists them, .*\)\.$/,
    );
    expect(existsSync(join(home, 'cron', 'jobs.json'))).toBe(false);

    const id = await createJob(home, ['0 9 * * *', 'Morning brief', '--tz', NEW_YORK]);
    const before = storedJobs(home);
    const edited = await agent('edit', id, '--tz', 'Mars/Base', '--no-tick');
    expect(edited.code).toBe(1);
    expect(errorSentence(edited)).toMatch(/^error: Unknown time zone "Mars\/Base"/);
    expect(storedJobs(home)).toEqual(before);

    const empty = await agent('edit', id, '--tz', '', '--no-tick');
    expect(empty.code).toBe(2);
    expect(errorSentence(empty)).toBe('error: --tz needs a value; give one, or give --no-tz (the configured time zone).');
  });
});
