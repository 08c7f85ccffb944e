import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { scratchDatabaseForSuite } from '../support/postgres.js';
import { eventually } from '../support/processLiveness.js';
import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';
import {
  createJob,
  errorSentence,
  inAScratchHomeEachTest,
  invocations,
  jobsFileOf,
  makeDue,
  runAgent,
  startGatewayUntil,
  storedJob,
  storedJobs,
  writeHomeFile,
} from './agentCli.js';

const HOUR = 3_600_000;

/** `agent cron runs <job> --json`, parsed. */
async function ledgerRuns(home: string, job: string): Promise<Array<Record<string, unknown>>> {
  const run = await runAgent(['cron', 'runs', job, '--json', '--no-tick'], { home });
  if (run.code !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as Array<Record<string, unknown>>;
}

/** Stops a gateway the way an operator does, and waits for it to exit. */
async function stop(gateway: ChildProcess): Promise<void> {
  if (gateway.exitCode !== null || gateway.signalCode !== null) return;
  const exited = once(gateway, 'exit');
  gateway.kill('SIGTERM');
  await exited;
}

describe('the catch-up policy, end to end', () => {
  let home: string;
  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('cron.catch_up: skip — a job overdue by two slots after the CLI was away does not run; the ledger shows the slot skipped, the next run is ahead', async () => {
    await appendFile(join(home, 'config.yaml'), 'cron:\n  catch_up: skip\n');
    const id = await createJob(home, ['every 1h', 'Water the plants', '--name', 'Plants', '--deliver', 'local']);
    // Nothing ran for two and a half hours: the slot and the next two were missed.
    await makeDue(home, id, 2.5 * HOUR);
    const slot = storedJob(home, id).next_run_at!;
    const before = Date.now();

    const tick = await runAgent(['cron', 'tick'], { home });

    expect(tick.code).toBe(0);
    expect(tick.stdout).toMatch(
      new RegExp(
        `^Job ${id} 'Plants' was not run: skipped: the job was due at ${slot} but nothing ran it until \\S+ \\(3 slots missed\\); with the catch-up policy skip it waits for its next run at \\S+\\.\\n$`,
      ),
    );
    expect(invocations(home)).toEqual([]);
    const job = storedJob(home, id);
    expect(job).toMatchObject({ state: 'scheduled', last_status: null, last_run_at: null, repeat: { completed: 0 } });
    expect(Date.parse(job.next_run_at!)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + HOUR);
    expect(await ledgerRuns(home, id)).toEqual([
      expect.objectContaining({
        status: 'skipped',
        slot: new Date(slot).toISOString().replace('.000Z', 'Z'),
        model: null,
        response: null,
        summary: expect.stringMatching(/^skipped: /),
      }),
    ]);
    const listed = await runAgent(['cron', 'runs', id, '--no-tick'], { home });
    expect(listed.stdout.split('\n')[1]).toMatch(/ {2}skipped {2}- +- +skipped: the job was due at /);
  });

  it("a job's own --catch-up skip is skipped by the gateway, with a log line, while a job following the default (once) runs once", async () => {
    const skipping = await createJob(home, ['every 1h', 'Skip me', '--name', 'skipper', '--deliver', 'local', '--catch-up', 'skip']);
    const catching = await createJob(home, ['every 1h', 'Catch up', '--name', 'catcher', '--deliver', 'local']);
    expect(storedJob(home, skipping).catch_up).toBe('skip');
    expect(storedJob(home, catching).catch_up).toBeNull();
    // The gateway was down over two slots of each.
    await makeDue(home, skipping, 2.5 * HOUR);
    await makeDue(home, catching, 2.5 * HOUR);

    const { gateway, output } = await startGatewayUntil(home, 'gateway started');
    try {
      const done = await eventually(
        () => output().includes("job 'skipper' skipped its overdue slot") && storedJob(home, catching).last_status === 'ok',
        15_000,
      );
      if (!done) throw new Error(output());
    } finally {
      await stop(gateway);
    }

    expect(output()).toMatch(/job 'skipper' skipped its overdue slot of \S+ \(catch-up policy skip\); next run at \S+/);
    expect(invocations(home)).toEqual(['Catch up']);
    expect(Date.parse(storedJob(home, skipping).next_run_at!)).toBeGreaterThan(Date.now());
    expect((await ledgerRuns(home, skipping)).map((run) => run.status)).toEqual(['skipped']);
    expect((await ledgerRuns(home, catching)).map((run) => run.status)).toEqual(['ok']);
  });

  it('skip still runs a slot the tick finds a few seconds late', async () => {
    const id = await createJob(home, ['every 1h', 'Just in time', '--deliver', 'local', '--catch-up', 'skip']);
    await makeDue(home, id, 5_000);

    const tick = await runAgent(['cron', 'tick'], { home });

    expect(tick.stdout).toMatch(new RegExp(`^Ran job ${id} 'Just in time': ok`));
    expect(invocations(home)).toEqual(['Just in time']);
  });

  it('refuses a catch-up policy it does not know, in config.yaml and on the command line, in one sentence', async () => {
    const before = readFileSync(join(home, 'config.yaml'), 'utf8');
    await appendFile(join(home, 'config.yaml'), 'cron:\n  catch_up: always\n');

    const [list, check] = [await runAgent(['cron', 'list', '--no-tick'], { home }), await runAgent(['config', 'check'], { home })];

    expect(list.code).toBe(1);
    expect(errorSentence(list)).toMatch(/config\.yaml: cron\.catch_up must be once or skip \(got "always"\)\.$/);
    expect(check.code).toBe(1);
    expect(check.stdout + check.stderr).toMatch(/cron\.catch_up must be once or skip \(got "always"\)/);

    await writeFile(join(home, 'config.yaml'), before);
    const runs = [
      await runAgent(['cron', 'create', 'every 1h', 'x', '--catch-up', 'sometimes', '--no-tick'], { home }),
      await runAgent(['cron', 'create', 'every 1h', 'x', '--no-catch-up', '--no-tick'], { home }),
    ];
    expect(runs.map((run) => [run.code, errorSentence(run)])).toEqual([
      [2, 'error: --catch-up must be one of once, skip, not "sometimes".'],
      [2, 'error: --no-catch-up is not an option; give --catch-up a value or leave it out.'],
    ]);
    expect(storedJobs(home)).toEqual([]);
  });
});

describe('jobs without the agent, end to end', () => {
  let home: string;
  let telegram: FakeTelegramServer;
  inAScratchHomeEachTest((fresh) => (home = fresh));

  beforeEach(async () => {
    telegram = await FakeTelegramServer.start();
    const settings = Object.entries(telegram.settings).map(([key, value]) => `    ${key}: ${JSON.stringify(value)}`);
    await appendFile(join(home, 'config.yaml'), ['platforms:', '  telegram:', ...settings, ''].join('\n'));
  });

  afterEach(async () => {
    await telegram.close();
  });

  async function scriptOnly(script: string, name = 'Disks'): Promise<string> {
    await writeHomeFile(home, `scripts/${name}.mjs`, script);
    return createJob(home, ['every 1h', '--script', `${name}.mjs`, '--no-agent', '--name', name, '--deliver', 'telegram:-1001234567890']);
  }

  it("delivers its script's output, wrapped, with no agent started; the ledger has no model and the report says so", async () => {
    const id = await scriptOnly("console.log('sda1: 91% full');\n");
    expect(storedJob(home, id)).toMatchObject({ no_agent: true, script: 'Disks.mjs', prompt: '' });
    await makeDue(home, id);

    const tick = await runAgent(['cron', 'tick'], { home });

    expect(tick.stdout).toMatch(new RegExp(`^Ran job ${id} 'Disks': ok`));
    expect(invocations(home)).toEqual([]);
    expect(telegram.delivered).toEqual([
      `Cronjob Response: Disks\n(job_id: ${id})\n-------------\n\nsda1: 91% full\n\nNote: The agent cannot see this message, and therefore cannot respond to it.`,
    ]);
    const [run] = await ledgerRuns(home, id);
    expect(run).toMatchObject({ status: 'ok', model: null, response: 'sda1: 91% full' });
    expect(readFileSync(run!.file as string, 'utf8')).toContain('\n- Agent: not run (no_agent)\n');

    const show = await runAgent(['cron', 'show', id, '--no-tick'], { home });
    expect(show.stdout).toMatch(/\n {2}Agent: +not run: the script's output is delivered as the answer \(--no-agent\)\n/);
    const list = await runAgent(['cron', 'list', '--no-tick'], { home });
    expect(list.stdout.trimEnd().split('\n').slice(-2)).toEqual([
      "Without the agent (the script's output is delivered):",
      `  ${id} 'Disks'`,
    ]);
    const [listed] = JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout) as Array<
      Record<string, unknown>
    >;
    expect(listed).toMatchObject({ id, no_agent: true, catch_up: null });
    expect(JSON.parse((await runAgent(['cron', 'show', id, '--json', '--no-tick'], { home })).stdout)).toMatchObject({
      no_agent: true,
      catch_up: null,
    });
  });

  it.each([
    ['[SILENT]', "console.log('all disks fine [SILENT]');\n"],
    ['empty output', '\n'],
  ])('delivers nothing when the script prints %s', async (_what, script) => {
    const id = await scriptOnly(script);

    const run = await runAgent(['cron', 'run', id, '--no-tick'], { home });

    expect(run.code).toBe(0);
    expect(telegram.delivered).toEqual([]);
    expect(invocations(home)).toEqual([]);
    expect(storedJob(home, id)).toMatchObject({ last_status: 'ok', last_error: null });
  });

  it('records a failing script as an error with its Script Error text', async () => {
    const id = await scriptOnly("console.error('df: /mnt: no such file');\nprocess.exit(3);\n");

    const run = await runAgent(['cron', 'run', id, '--no-tick'], { home });

    expect(run.code).toBe(1);
    expect(invocations(home)).toEqual([]);
    expect(storedJob(home, id)).toMatchObject({
      last_status: 'error',
      last_error: 'Script Error: The script exited with code 3.\n\ndf: /mnt: no such file',
    });
    expect(telegram.delivered).toEqual([
      "⚠️ Cron job 'Disks' failed: Script Error: The script exited with code 3.\n\ndf: /mnt: no such file",
    ]);
  });

  it('refuses --no-agent without a script in one sentence; edit --agent and --no-agent switch the agent on and off', async () => {
    const refused = await runAgent(['cron', 'create', 'every 1h', 'Disks', '--no-agent', '--no-tick'], { home });
    expect(refused.code).toBe(2);
    expect(errorSentence(refused)).toBe(
      'error: --no-agent runs the pre-run script instead of the agent, and no script was given; add --script <file> or leave --no-agent out.',
    );
    expect(storedJobs(home)).toEqual([]);

    const id = await scriptOnly("console.log('sda1: 91% full');\n");
    const before = readFileSync(jobsFileOf(home));
    const noPrompt = await runAgent(['cron', 'edit', id, '--agent', '--no-tick'], { home });
    expect(noPrompt.code).toBe(1);
    expect(errorSentence(noPrompt)).toBe("error: Job 'Disks' has no prompt for the agent; give it the task the agent should do.");
    const noScript = await runAgent(['cron', 'edit', id, '--clear-script', '--no-tick'], { home });
    expect(noScript.code).toBe(1);
    expect(errorSentence(noScript)).toMatch(/^error: Job 'Disks' is to run without the agent but has no pre-run script/);
    expect(readFileSync(jobsFileOf(home))).toEqual(before);

    expect((await runAgent(['cron', 'edit', id, '--agent', '--prompt', 'Comment on the disks', '--no-tick'], { home })).code).toBe(0);
    expect(storedJob(home, id)).toMatchObject({ no_agent: false, prompt: 'Comment on the disks' });
    const ran = await runAgent(['cron', 'run', id, '--no-tick'], { home });
    expect(ran.code).toBe(0);
    expect(invocations(home)).toEqual(['Comment on the disks']);

    expect((await runAgent(['cron', 'edit', id, '--no-agent', '--no-tick'], { home })).code).toBe(0);
    expect(storedJob(home, id).no_agent).toBe(true);
    expect(readdirSync(join(home, 'cron', 'output', id))).toHaveLength(1);
  });
});

describe('both new fields and a skipped slot on the PostgreSQL job store, end to end', () => {
  let home: string;
  const scratch = scratchDatabaseForSuite();
  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('keeps catch_up and no_agent in the JSONB records, and records a skipped slot in agent_runs', async () => {
    const env = { AGENT_DATABASE_URL: scratch.url };
    const agent = (...args: string[]) => runAgent(args, { home, env });
    await writeHomeFile(home, 'scripts/disks.mjs', "console.log('sda1: 91% full');\n");

    const created = await agent(
      'cron',
      'create',
      'every 1h',
      '--script',
      'disks.mjs',
      '--no-agent',
      '--catch-up',
      'skip',
      '--name',
      'Disks',
      '--deliver',
      'local',
      '--no-tick',
    );
    expect(created.code).toBe(0);
    const [row] = await scratch.database.query<{ id: string; record: Record<string, unknown> }>('SELECT id, record FROM agent_jobs');
    expect(row!.record).toMatchObject({ no_agent: true, catch_up: 'skip', script: 'disks.mjs' });
    const [listed] = JSON.parse((await agent('cron', 'list', '--json', '--no-tick')).stdout) as Array<Record<string, unknown>>;
    expect(listed).toMatchObject({ no_agent: true, catch_up: 'skip' });

    // The gateway and the CLI were away over two slots.
    const overdue = new Date(Date.now() - 2.5 * HOUR).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await scratch.database.query(
      "UPDATE agent_jobs SET next_run_at = $2::timestamptz, record = jsonb_set(record, '{next_run_at}', to_jsonb($2::text)) WHERE id = $1",
      [row!.id, overdue],
    );
    const tick = await agent('cron', 'tick');

    expect(tick.stdout).toMatch(/was not run: skipped: /);
    const runs = JSON.parse((await agent('cron', 'runs', row!.id, '--json', '--no-tick')).stdout) as Array<Record<string, unknown>>;
    expect(runs).toEqual([expect.objectContaining({ status: 'skipped', model: null })]);
    const stored = await scratch.database.query<{ status: string; model: unknown }>(
      "SELECT record->>'status' AS status, record->'model' AS model FROM agent_runs WHERE subject = $1",
      [row!.id],
    );
    expect(stored).toEqual([{ status: 'skipped', model: null }]);
    const [job] = JSON.parse((await agent('cron', 'list', '--json', '--no-tick')).stdout) as Array<Record<string, unknown>>;
    expect(Date.parse(job!.next_run_at as string)).toBeGreaterThan(Date.now());

    expect(
      (await agent('cron', 'edit', row!.id, '--catch-up', 'once', '--agent', '--prompt', 'Comment on the disks', '--no-tick')).code,
    ).toBe(0);
    const [edited] = await scratch.database.query<{ record: Record<string, unknown> }>('SELECT record FROM agent_jobs WHERE id = $1', [
      row!.id,
    ]);
    expect(edited!.record).toMatchObject({ no_agent: false, catch_up: 'once', prompt: 'Comment on the disks' });
  });
});
