import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../support/freePort.js';
import { eventually, isRunning } from '../support/processLiveness.js';
import {
  AGENT_EXECUTABLE,
  createJob,
  editStoredJob,
  hungModelPids,
  inAScratchHomeEachTest,
  invocations,
  runAgent,
  startAgent,
  storedJob,
  storedJobs,
  startGateway,
  startGatewayUntil,
} from './agentCli.js';
import { clearOfMinuteTicks, nextMinuteTick, untilTheClockReads } from './minuteTicks.js';

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A gateway started on `home`, its stdout collected. */
/** Waits for the exit, at most `withinMs`; the exit code, or 'still running'. */
async function exitWithin(child: ChildProcess, withinMs: number): Promise<number | null | 'still running'> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    once(child, 'exit').then(([code]) => code as number | null),
    new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), withinMs))),
  ]);
  clearTimeout(timer);
  if (result === 'still running') child.kill('SIGKILL');
  return result;
}

describe('agent gateway: on time under long runs', () => {
  let home: string;
  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('starts one-shots due during a 25-second run at their time, not at the next minute tick, including one created while it runs', async () => {
    const long = await createJob(home, ['every 1h', 'Long report [sleep 25]', '--name', 'long', '--deliver', 'local']);
    // The shots, 6 to 18 s after the start, fall between two minute ticks and at least 10 s before the second.
    const start = clearOfMinuteTicks(Date.now() + 6_000, 12_000, 10_000) - 6_000;
    await untilTheClockReads(start);
    await editStoredJob(home, long, (job) => (job.next_run_at = iso(Date.now() - 1_000)));
    const shots: Array<{ id: string; dueAt: number }> = [];
    for (const [index, delay] of [6_000, 12_000].entries()) {
      const id = await createJob(home, ['10m', `Quick ${index}`, '--name', `quick ${index}`, '--deliver', 'local']);
      const dueAt = start + delay;
      await editStoredJob(home, id, (job) => {
        job.next_run_at = iso(dueAt);
        if (job.schedule.kind === 'once') job.schedule.run_at = iso(dueAt);
      });
      shots.push({ id, dueAt: Date.parse(iso(dueAt)) });
    }
    const { gateway, output } = startGateway(home);
    try {
      expect(await eventually(() => hungModelPids(home).length > 0, 15_000)).toBe(true);
      // Created by another process while the gateway runs, due 18 s after the start.
      const thirdDue = Date.parse(iso(start + 18_000));
      const created = await runAgent(['cron', 'create', iso(thirdDue), 'Quick 2', '--name', 'quick 2', '--deliver', 'local', '--no-tick'], {
        home,
      });
      expect(created.code).toBe(0);
      shots.push({ id: /Created job (\w+)/.exec(created.stdout)![1]!, dueAt: thirdDue });

      expect(await eventually(() => shots.every((shot) => storedJob(home, shot.id).last_status === 'ok'), 40_000)).toBe(true);
      for (const shot of shots) {
        const ranAt = Date.parse(storedJob(home, shot.id).last_run_at!);
        expect({ shot: shot.id, early: ranAt < shot.dueAt, atTheMinuteTick: ranAt >= nextMinuteTick(shot.dueAt) }).toEqual({
          shot: shot.id,
          early: false,
          atTheMinuteTick: false,
        });
      }
      // The long run was still going while all three ran, and none of them waited for its slot.
      expect(storedJob(home, long).state).toBe('running');
    } finally {
      gateway.kill('SIGTERM');
      await exitWithin(gateway, 45_000);
    }
    expect(output()).not.toMatch(/job 'quick \d' (was fired and waits for a free run slot|started [\d.]+ s late: every run slot was busy)/);
  }, 120_000);
});

describe('agent gateway: claimed a second ahead, started at the slot', () => {
  let home: string;
  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('runs the pre-run script of a one-shot at its slot, never before, and dates the run at the slot', async () => {
    await mkdir(join(home, 'scripts'), { recursive: true });
    const stamp = join(home, 'script-started.log');
    await writeFile(
      join(home, 'scripts', 'stamp.mjs'),
      `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(stamp)}, Date.now() + '\\n');\nconsole.log('stamped');\n`,
    );
    await startGatewayUntil(home, 'gateway started');
    const dueAt = Math.ceil((Date.now() + 4_000) / 1000) * 1000;
    const created = await runAgent(
      ['cron', 'create', iso(dueAt), 'Report', '--name', 'stamped', '--script', 'stamp.mjs', '--deliver', 'local', '--no-tick'],
      { home },
    );
    expect(created.code).toBe(0);
    const id = /Created job (\w+)/.exec(created.stdout)![1]!;

    const records = join(home, 'runs', 'cron', id);
    const finished = () => {
      const [record] = existsSync(records) ? readdirSync(records).filter((name) => name.endsWith('.json')) : [];
      const run = record ? (JSON.parse(readFileSync(join(records, record), 'utf8')) as { started_at: string; status: string }) : null;
      return run && run.status !== 'running' ? run : null;
    };
    expect(await eventually(() => finished() !== null && storedJob(home, id).last_status === 'ok', 30_000)).toBe(true);
    const scriptStarted = Number(readFileSync(stamp, 'utf8').trim());
    const run = finished();

    expect(scriptStarted).toBeGreaterThanOrEqual(dueAt);
    expect(run).toMatchObject({ status: 'ok', started_at: new Date(dueAt).toISOString() });
    expect(storedJob(home, id).last_run_at).toBe(iso(dueAt));
  });
});

describe('agent gateway: stopping when told', () => {
  let home: string;
  inAScratchHomeEachTest((fresh) => (home = fresh), { extraConfig: 'gateway:\n  shutdown_grace_seconds: 1' });

  it('on SIGTERM during a run, waits the grace period, kills the run, records it interrupted and exits 0', async () => {
    const id = await createJob(home, ['every 1h', 'Never answers [hang]', '--name', 'stuck', '--deliver', 'local']);
    await editStoredJob(home, id, (job) => (job.next_run_at = iso(Date.now() - 1_000)));
    const { gateway, output } = startGateway(home);
    expect(await eventually(() => hungModelPids(home).length > 0, 15_000)).toBe(true);
    const [agentPid] = hungModelPids(home);

    gateway.kill('SIGTERM');
    const code = await exitWithin(gateway, 11_000);

    expect(code).toBe(0);
    expect(await eventually(() => !isRunning(agentPid!), 2_000)).toBe(true);
    const job = storedJob(home, id);
    expect(job).toMatchObject({ state: 'scheduled', last_status: 'error' });
    expect(job.last_error).toMatch(/^interrupted: /);
    expect(output()).toContain('SIGTERM received; stopping');
  }, 120_000);

  it('stops at once when the signal comes during start-up', async () => {
    // A provider that does not exist: its warning is the first thing start-up says.
    await appendFile(join(home, 'config.yaml'), 'cron:\n  provider: nonesuch\n');
    const { gateway, output } = startGateway(home);
    expect(await eventually(() => output().includes('nonesuch'), 10_000, 1)).toBe(true);
    gateway.kill('SIGTERM');

    expect(await exitWithin(gateway, 11_000)).toBe(0);
    expect(output()).toContain('SIGTERM received; stopping');
  });

  it('exits at once with code 1 on a second signal', async () => {
    const id = await createJob(home, ['every 1h', 'Never answers [hang]', '--name', 'stuck', '--deliver', 'local']);
    await editStoredJob(home, id, (job) => (job.next_run_at = iso(Date.now() - 1_000)));
    const { gateway, output } = startGateway(home);
    expect(await eventually(() => hungModelPids(home).length > 0, 15_000)).toBe(true);
    expect(await eventually(() => output().includes('gateway started'), 5_000)).toBe(true);

    gateway.kill('SIGINT');
    expect(await eventually(() => output().includes('SIGINT received'), 5_000)).toBe(true);
    gateway.kill('SIGTERM');

    expect(await exitWithin(gateway, 5_000)).toBe(1);
  }, 120_000);
});

describe('from inside a cron run', () => {
  let home: string;
  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('gives the agent program of a cron run the job id in AGENT_CRON_RUN', async () => {
    const id = await createJob(home, ['every 1h', 'Check', '--name', 'check', '--deliver', 'local']);

    const run = await runAgent(['cron', 'run', id], { home });

    expect(run.code).toBe(0);
    expect(invocations(home)).toHaveLength(1);
    expect(readFileSync(join(home, 'cron-runs.log'), 'utf8').trim()).toBe(id);
  });

  it('a pre-run script calling agent cron create is refused with one sentence, and no job is made', async () => {
    await mkdir(join(home, 'scripts'), { recursive: true });
    const report = join(home, 'inner.out');
    await writeFile(
      join(home, 'scripts', 'sneaky.sh'),
      `#!/bin/sh\n"${process.execPath}" "${AGENT_EXECUTABLE}" cron create "every 1h" "made from inside" --name inner > "${report}" 2>&1\necho "exit=$?" >> "${report}"\n`,
      { mode: 0o755 },
    );
    const id = await createJob(home, ['every 1h', 'Check', '--name', 'check', '--deliver', 'local', '--script', 'sneaky.sh']);

    const run = await runAgent(['cron', 'run', id], { home });

    expect(run.code).toBe(0);
    const inner = readFileSync(report, 'utf8').trim().split('\n');
    expect(inner).toHaveLength(2);
    expect(inner[0]).toMatch(/^error: .*inside a cron run/);
    expect(inner[1]).toBe('exit=1');
    expect(storedJobs(home).map((job) => job.name)).toEqual(['check']);
    // Listing still works from inside a run.
    expect((await runAgent(['cron', 'list'], { home, env: { AGENT_CRON_RUN: id } })).code).toBe(0);
  });
});

describe('a one-shot refused by pre-dispatch validation', () => {
  let home: string;
  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('is paused, not used up; fixed and resumed, it runs', async () => {
    const id = await createJob(home, ['10m', 'Ping the team', '--name', 'ping', '--deliver', 'telegram:123']);
    await editStoredJob(home, id, (job) => {
      job.next_run_at = iso(Date.now() - 5_000);
      if (job.schedule.kind === 'once') job.schedule.run_at = job.next_run_at;
    });

    await runAgent(['cron', 'tick'], { home });

    expect(storedJob(home, id)).toMatchObject({ state: 'paused', enabled: false, last_status: 'blocked_config', repeat: { completed: 0 } });
    expect(storedJob(home, id).last_error).toMatch(/telegram/i);
    expect(invocations(home)).toEqual([]);

    expect((await runAgent(['cron', 'edit', id, '--deliver', 'local', '--no-tick'], { home })).code).toBe(0);
    expect((await runAgent(['cron', 'resume', id, '--no-tick'], { home })).code).toBe(0);
    const tick = await runAgent(['cron', 'tick'], { home });

    expect(tick.stdout).toMatch(/Ran job \w+ 'ping': ok/);
    expect(storedJob(home, id)).toMatchObject({ state: 'completed', last_status: 'ok', repeat: { completed: 1 } });
  });
});

describe('agent gateway --log-format json', () => {
  let home: string;
  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('writes only JSON lines to stdout, the listening line and warnings included', async () => {
    const port = await freePort();
    await appendFile(
      join(home, 'config.yaml'),
      `timezon: UTC\nplatforms:\n  webhook:\n    enabled: true\n    extra: {host: 127.0.0.1, port: ${port}, secret: s3cret}\n`,
    );
    const id = await createJob(home, ['every 1h', 'Report', '--name', 'report', '--deliver', 'local']);
    await editStoredJob(home, id, (job) => (job.next_run_at = iso(Date.now() - 1_000)));
    const gateway = startAgent(['gateway', '--log-format', 'json'], { home });
    let stdout = '';
    gateway.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));

    expect(await eventually(() => storedJob(home, id).last_status === 'ok', 15_000)).toBe(true);
    gateway.kill('SIGTERM');
    expect(await exitWithin(gateway, 11_000)).toBe(0);

    const lines = stdout.trimEnd().split('\n');
    const entries = lines.map((line) => JSON.parse(line) as { level: string; message: string });
    const messages = entries.map((entry) => entry.message);
    expect(messages).toContain(`webhook listening on 127.0.0.1:${port} — routes: (none)`);
    expect(messages.some((message) => message.includes('unknown key "timezon"'))).toBe(true);
    expect(messages.some((message) => /^Ran job \w+ 'report': ok/.test(message))).toBe(true);
  }, 120_000);
});
