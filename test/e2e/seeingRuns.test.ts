import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { renderWebhookRunRecord } from '../../src/domain/webhook/webhookRunRecord.js';
import { aRunRecord } from '../contract/WebhookRunRecords.contract.js';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import {
  AGENT_EXECUTABLE,
  createJob,
  errorSentence,
  makeDue,
  outcomeOf,
  inAScratchHomeEachTest,
  makeAgentHome,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  writeHomeFile,
  startGatewayUntil,
} from './agentCli.js';
import { spawn } from '../support/testProcesses.js';

/** Every file under `home` with its size and modification time, to tell that nothing changed. */
function snapshot(home: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else files[relative(home, path)] = `${statSync(path).size}:${statSync(path).mtimeMs}`;
    }
  };
  walk(home);
  return files;
}

/** Every directory and file under `root`, modes set by `mode(isDirectory)`. */
function chmodTree(root: string, mode: (isDirectory: boolean) => number): void {
  chmodSync(root, mode(true));
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) chmodTree(path, mode);
    else chmodSync(path, mode(false));
  }
}

/** `agent …` as a user who may read the home but not write it (root would write anyway, so another user). */
function runAsReader(args: string[], home: string) {
  const asOtherUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const child = spawn(process.execPath, [AGENT_EXECUTABLE, ...args], {
    env: { PATH: process.env.PATH, AGENT_HOME: home, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...asOtherUser,
  });
  return outcomeOf(child);
}

/** `agent cron show` and `agent cron runs`, as a user meets them. */
describe('seeing a job and its runs, end to end', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh), { timezone: 'Europe/Berlin' });

  const agent = (...args: string[]) => runAgent(['cron', ...args], { home });

  it('show gives every field in words, the next five runs of a recurring job and its last runs', async () => {
    const id = await createJob(home, ['0 9 * * 1-5', 'Plan my day', '--name', 'Planner', '--deliver', 'local', '--skill', 'triage']);
    expect((await agent('run', 'planner', '--no-tick')).code).toBe(0);

    const run = await agent('show', 'PLANNER', '--no-tick');

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(`Job ${id} 'Planner'`);
    const field = (label: string) =>
      lines
        .find((line) => line.trimStart().startsWith(`${label}:`))
        ?.slice(label.length + 3)
        .trim();
    expect(field('Id')).toBe(id);
    expect(field('State')).toBe('scheduled (enabled)');
    expect(field('Schedule')).toBe('at 09:00 on Monday through Friday (0 9 * * 1-5)');
    expect(field('Time zone')).toBe('Europe/Berlin');
    expect(field('Prompt')).toBe('Plan my day');
    expect(field('Skills')).toBe('triage');
    expect(field('Script')).toBe('none');
    expect(field('Repeat')).toBe('no limit (1 run so far)');
    expect(field('Delivers to')).toBe('the output file only (local)');
    expect(field('Last status')).toBe('ok');
    expect(field('Last error')).toBe('-');
    expect(field('Last run')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d$/);
    expect(field('Next run')).toMatch(/^\d{4}-\d\d-\d\d 09:00$/);
    const next = lines.indexOf('Next 5 runs (Europe/Berlin):');
    expect(lines.slice(next + 1, next + 6)).toEqual(
      Array(5).fill(expect.stringMatching(/^ {2}\d{4}-\d\d-\d\d 09:00 {2}(Mon|Tue|Wed|Thu|Fri)$/)),
    );
    expect(run.stdout).toMatch(
      /Recent runs \(newest first\):\n {2}TIME \(Europe\/Berlin\) +STATUS +TOKENS +COST +ANSWER OR ERROR\n {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +ok +- +- +Answer to: Plan my day\n/,
    );
  });

  it('show --json prints the record with next_runs and recent_runs', async () => {
    const id = await createJob(home, ['every 2h', 'Summarise', '--name', 'Digest', '--deliver', 'local']);
    await agent('run', id, '--no-tick');

    const run = await agent('show', id, '--json', '--no-tick');

    expect(run.code).toBe(0);
    const shown = JSON.parse(run.stdout);
    expect(shown).toMatchObject({ id, name: 'Digest', deliver: 'local', last_status: 'ok' });
    expect(shown.next_runs).toHaveLength(5);
    expect(Date.parse(shown.next_runs[1]) - Date.parse(shown.next_runs[0])).toBe(2 * 3600_000);
    expect(shown.recent_runs).toEqual([
      expect.objectContaining({ status: 'ok', summary: 'Answer to: Summarise', response: 'Answer to: Summarise' }),
    ]);
  });

  it('show and runs refuse an unknown job with one sentence and exit code 1', async () => {
    for (const command of ['show', 'runs']) {
      const run = await agent(command, 'nothing-like-it', '--no-tick');
      expect(run.code).toBe(1);
      expect(errorSentence(run)).toBe('error: No job has the id or name "nothing-like-it"; see "agent cron list".');
    }
  });

  it('runs lists the runs from the output files, newest first, reading reports of older versions too', async () => {
    const id = await createJob(home, ['every 1h', 'Count the stars', '--name', 'Stars', '--deliver', 'local']);
    await agent('run', id, '--no-tick');
    // A report written by an earlier version: no status line, a run that failed.
    await writeHomeFile(
      home,
      `cron/output/${id}/2020-01-06_09-00-00.md`,
      '# Cron job: Stars\n\n- Job id: x\n- Run at: 2020-01-06 09:00 (Europe/Berlin)\n\n## Prompt\n\nCount the stars\n\n## Error\n\nthe sky was cloudy\nall night\n',
    );

    const run = await agent('runs', 'stars', '--no-tick');

    expect(run.code).toBe(0);
    const [header, ...rows] = run.stdout.trimEnd().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['TIME (Europe/Berlin)', 'STATUS', 'TOKENS', 'COST', 'ANSWER OR ERROR']);
    // A command agent that prints no usage has no tokens and no cost; nor has a run only its report tells of.
    expect(rows.map((row) => row.split(/\s{2,}/))).toEqual([
      [expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/), 'ok', '-', '-', 'Answer to: Count the stars'],
      ['2020-01-06 09:00:00', '-', '-', '-', 'the sky was cloudy'],
    ]);

    const json = JSON.parse((await agent('runs', id, '--json', '--limit', '1', '--no-tick')).stdout);
    expect(json).toEqual([
      expect.objectContaining({
        status: 'ok',
        summary: 'Answer to: Count the stars',
        file: expect.stringContaining(join('cron', 'output', id)),
      }),
    ]);
  });

  it('runs --json gives each run from the run ledger: its id, when it ended, the model, each target and the report', async () => {
    const id = await createJob(home, ['every 1h', 'Count the stars', '--name', 'Stars', '--deliver', 'local']);
    await agent('run', id, '--no-tick');

    const [run] = JSON.parse((await agent('runs', id, '--json', '--no-tick')).stdout) as Array<Record<string, unknown>>;
    expect(run).toMatchObject({
      id: expect.stringMatching(new RegExp(`^${id}\\.\\d{8}T\\d{9}Z$`)),
      status: 'ok',
      slot: null,
      model: expect.any(String),
      response: 'Answer to: Count the stars',
      deliveries: [{ target: 'local', outcome: 'delivered', message_ids: [], error: null }],
      file: expect.stringContaining(join('cron', 'output', id)),
    });
    expect(Date.parse(run!.finished_at as string)).toBeGreaterThanOrEqual(Date.parse(run!.run_at as string));
    const stored = readdirSync(join(home, 'runs', 'cron', id));
    expect(stored).toEqual([expect.stringMatching(new RegExp(`^\\d{8}-\\d{6}-\\d{3}_${run!.id as string}\\.json$`))]);
    const shown = JSON.parse((await agent('show', id, '--json', '--no-tick')).stdout) as { recent_runs: Array<Record<string, unknown>> };
    expect(shown.recent_runs[0]).toMatchObject({ id: run!.id, status: 'ok' });
  });

  it('runs says so when a job has not run yet, and refuses a bad --limit in one sentence', async () => {
    await createJob(home, ['every 1h', 'Wait', '--name', 'Fresh']);

    expect((await agent('runs', 'fresh', '--no-tick')).stdout).toMatch(/^Job [0-9a-f]{12} 'Fresh' has no recorded runs\.\n$/);
    const bad = await agent('runs', 'fresh', '--limit', '0', '--no-tick');
    expect(bad.code).toBe(2);
    expect(errorSentence(bad)).toMatch(/^error: --limit must be a whole number of 1 or more, not "0"/);
  });

  describe('in a home this user cannot write', () => {
    afterEach(() => chmodTree(home, (isDirectory) => (isDirectory ? 0o755 : 0o644)));

    it('show, runs and webhook runs still work; a due job is not run', async () => {
      const id = await createJob(home, ['every 1h', 'Look around', '--name', 'Looker', '--deliver', 'local']);
      await agent('run', id, '--no-tick');
      await makeDue(home, id);
      await writeHomeFile(home, 'webhooks/output/pr-review/2026-06-01_08-01-02_event1.md', renderWebhookRunRecord(aRunRecord(1)));
      const invocationsBefore = readFileSync(join(home, 'invocations.log'), 'utf8');
      chmodTree(home, (isDirectory) => (isDirectory ? 0o555 : 0o444));

      const show = await runAsReader(['cron', 'show', 'looker'], home);
      const runs = await runAsReader(['cron', 'runs', id, '--json'], home);
      const webhookRuns = await runAsReader(['webhook', 'runs'], home);

      expect(show.code).toBe(0);
      expect(show.stdout).toMatch(new RegExp(`^Job ${id} 'Looker'\n`));
      expect(show.stderr).toMatch(/^warning: .*not writable/);
      expect(runs.code).toBe(0);
      expect(JSON.parse(runs.stdout)).toEqual([expect.objectContaining({ status: 'ok', summary: 'Answer to: Look around' })]);
      expect(webhookRuns).toMatchObject({ code: 0, stderr: '' });
      expect(webhookRuns.stdout).toMatch(
        /\n2026-06-01 10:01:02 +event1 +pr-review +pull_request +delivery-1 +- +- +delivered to octo\/widgets#12\n$/,
      );
      expect(readFileSync(join(home, 'invocations.log'), 'utf8')).toBe(invocationsBefore);
    });
  });

  it('show and runs change nothing in the home', async () => {
    const id = await createJob(home, ['every 1h', 'Look', '--deliver', 'local']);
    await agent('run', id, '--no-tick');
    const before = snapshot(home);

    expect((await agent('show', id, '--no-tick')).code).toBe(0);
    expect((await agent('runs', id, '--no-tick')).code).toBe(0);

    expect(snapshot(home)).toEqual(before);
  });
});

/** Webhook runs recorded and listed, `webhook test --event`, curl's form-encoded JSON, the subscribe warning. */
describe('seeing webhook runs, end to end', () => {
  let home: string;
  let port: number;
  const running: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    port = await freePort();
    home = await makeAgentHome({ timezone: 'UTC' });
  });

  afterEach(async () => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await removeAgentHome(home);
  });

  const webhook = (...args: string[]) => runAgent(['webhook', ...args], { home });

  async function enableListener(): Promise<void> {
    const config = readFileSync(join(home, 'config.yaml'), 'utf8');
    await writeHomeFile(
      home,
      'config.yaml',
      `${config}platforms:\n  webhook:\n    enabled: true\n    extra:\n      host: 127.0.0.1\n      port: ${port}\n`,
    );
  }

  async function startGateway(): Promise<{ gateway: ChildProcess; output: () => string }> {
    const started = await startGatewayUntil(home, 'webhook listening on');
    running.push(started.gateway);
    return started;
  }

  it('subscribe warns in one line on stderr when the listener is disabled, and saves the subscription', async () => {
    const run = await webhook('subscribe', 'alerts');

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Created webhook subscription 'alerts'\./);
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^warning: .*platforms\.webhook\.enabled: true.*config\.yaml/),
    ]);
    expect((await webhook('list')).stdout).toContain('alerts');

    await enableListener();
    expect((await webhook('subscribe', 'alerts')).stderr).toBe('');
  });

  it('records every run and lists them: test --event, a curl-style form-encoded JSON body, newest first', async () => {
    expect((await webhook('runs')).stdout).toBe('No webhook runs.\n');
    await enableListener();
    await webhook('subscribe', 'alerts', '--prompt', 'Alert {labels.alertname}');
    const secret = JSON.parse(readFileSync(join(home, 'webhook_subscriptions.json'), 'utf8')).alerts.secret as string;
    const { gateway } = await startGateway();

    const test = await webhook('test', 'alerts', '--event', 'alert.firing', '--payload', '{"labels":{"alertname":"DiskFull"}}');
    expect(test.code).toBe(0);
    expect(test.stdout).toMatch(
      /^POST http:\/\/127\.0\.0\.1:\d+\/webhooks\/alerts \(event alert\.firing\): 202\n.*"event":"alert\.firing"/,
    );
    expect(await eventually(() => webhookRecords(home).length === 1, 10_000)).toBe(true);
    // What `curl -d '{…}'` sends: a JSON object labelled as a form.
    const curl = await fetch(`http://127.0.0.1:${port}/webhooks/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${secret}`, 'x-request-id': 'curl-1' },
      body: '{"type":"alert.resolved","labels":{"alertname":"CpuHigh"}}',
    });
    expect(curl.status).toBe(202);
    expect(await eventually(() => webhookRecords(home).filter((text) => text.includes('- Outcome: delivered')).length === 2, 10_000)).toBe(
      true,
    );

    const listed = await webhook('runs', 'alerts');
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['TIME (UTC)', 'ID', 'ROUTE', 'EVENT', 'DELIVERY ID', 'TOKENS', 'COST', 'OUTCOME']);
    expect(rows.map((row) => row.split(/\s{2,}/).slice(2))).toEqual([
      ['alerts', 'alert.resolved', 'curl-1', '-', '-', 'delivered to the log'],
      ['alerts', 'alert.firing', expect.any(String), '-', '-', 'delivered to the log'],
    ]);
    const json = JSON.parse((await webhook('runs', '--json', '--limit', '1')).stdout);
    // The ID column is the run's id, as --json gives it.
    expect(rows[0]!.split(/\s{2,}/)[1]).toBe(json[0].id);
    expect(json).toEqual([
      expect.objectContaining({
        route: 'alerts',
        event: 'alert.resolved',
        delivery_id: 'curl-1',
        outcome: 'delivered',
        prompt: 'Alert CpuHigh',
        answer: 'Answer to: Alert CpuHigh',
        // From the run ledger.
        id: json[0].event_id,
        status: 'ok',
        model: expect.any(String),
        finished_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        deliveries: [{ target: 'the log', outcome: 'delivered', message_ids: [], error: null }],
      }),
    ]);
    gateway.kill('SIGTERM');
    expect((await once(gateway, 'exit'))[0]).toBe(0);
  });
});

/** The text of every webhook run record under the home. */
function webhookRecords(home: string): string[] {
  const directory = join(home, 'webhooks', 'output', 'alerts');
  try {
    return readdirSync(directory)
      .filter((name) => name.endsWith('.md'))
      .map((name) => readFileSync(join(directory, name), 'utf8'));
  } catch {
    return [];
  }
}
