import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { processesMarked } from '../support/processTrees.js';
import { join } from 'node:path';
import { eventually } from '../support/processLiveness.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import {
  errorSentence,
  makeAgentHome,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startGatewayUntil,
  writeHomeFile,
} from './agentCli.js';
import { commandModelLines } from './configLines.js';

/** The variable every process of one start carries (the agent programs inherit it): how its tree is found. */
const TREE = 'E2E_STOP_TREE';

/** The live pids of one start, but for the gateway's launcher (docs/processes.md). */
const processesOf = (value: string): number[] => processesMarked(TREE, value, 'launcher.js');

/** An agent program that starts `sleep 120` in the background, notes it, and takes 30 s to answer. */
function thirtySecondAgent(home: string): string[] {
  const script = [`sleep 120 &`, `echo $! >> ${join(home, 'grandchildren.pids')}`, 'sleep 30', 'echo done'].join('\n');
  return commandModelLines(['sh', '-c', script]);
}

const grandchildren = (home: string): number[] =>
  existsSync(join(home, 'grandchildren.pids'))
    ? readFileSync(join(home, 'grandchildren.pids'), 'utf8').split('\n').filter(Boolean).map(Number)
    : [];

interface LedgerRun {
  status: string;
  error: string | null;
}

describe('time limits and cancel, through the built CLI and gateway', () => {
  let home: string;
  let database: ScratchDatabase | null = null;
  const marks: string[] = [];
  const children: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const mark of marks.splice(0)) for (const pid of processesOf(mark)) process.kill(pid, 'SIGKILL');
    await removeAgentHome(home);
    await database?.drop();
    database = null;
  });

  const mark = () => {
    const made = randomBytes(6).toString('hex');
    marks.push(made);
    return made;
  };

  async function homeWith(store: 'files' | 'postgres'): Promise<void> {
    home = await makeAgentHome();
    if (store === 'postgres') {
      database = await scratchDatabase();
      await (await database.open()).close();
    }
    const storeLines = database ? ['database:', `  url: ${database.url}`] : [];
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...thirtySecondAgent(home), ...storeLines, ''].join('\n'));
  }

  const runsOf = async (job: string): Promise<LedgerRun[]> =>
    JSON.parse((await runAgent(['cron', 'runs', job, '--json', '--no-tick'], { home })).stdout) as LedgerRun[];

  it.each(['files', 'postgres'] as const)(
    'on %s: agent cron cancel from another terminal stops the 30 s run on the gateway, its tree gone within 2 s',
    async (store) => {
      await homeWith(store);
      const due = new Date(Date.now() + 1500).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const created = await runAgent(['cron', 'create', due, 'Take your time', '--name', 'slow', '--deliver', 'local', '--no-tick'], {
        home,
      });
      expect(created.code).toBe(0);
      const tree = mark();
      const { gateway, output } = await startGatewayUntil(home, 'gateway started', { env: { [TREE]: tree } });
      children.push(gateway);
      expect(await eventually(() => grandchildren(home).length === 1, 20_000)).toBe(true);

      const asked = Date.now();
      const cancelled = await runAgent(['cron', 'cancel', 'slow'], { home, env: { USER: 'alice' } });
      const tookMs = Date.now() - asked;

      expect(cancelled.code).toBe(0);
      expect(cancelled.stdout).toMatch(/^Cancelled the run of job [0-9a-f]{12} 'slow': cancelled by \S+\.\n$/);
      expect(processesOf(tree).filter((pid) => pid !== gateway.pid)).toEqual([]);
      expect(grandchildren(home).length).toBe(1);
      // The command's own start-up included: the gateway stopped the run within 2 s of the request.
      expect(tookMs).toBeLessThan(4000);
      const [run] = await runsOf('slow');
      expect(run).toMatchObject({ status: 'error', error: expect.stringMatching(/^cancelled by \S+$/) });
      expect(output()).toMatch(/cancelling the run of job 'slow', as \S+ asked/);
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    },
  );

  it('--timeout stops agent cron run past its limit: the tree is killed and the run is "timed out after 3s"', async () => {
    await homeWith('files');
    const created = await runAgent(
      ['cron', 'create', 'every 1h', 'Take your time', '--name', 'slow', '--deliver', 'local', '--timeout', '3s', '--no-tick'],
      { home },
    );
    expect(created.code).toBe(0);
    const tree = mark();

    const ran = await runAgent(['cron', 'run', 'slow', '--json'], { home, env: { [TREE]: tree } });

    expect(ran.code).toBe(1);
    expect(JSON.parse(ran.stdout)).toMatchObject({ status: 'error', error: 'timed out after 3s' });
    expect(processesOf(tree)).toEqual([]);
    expect(await runsOf('slow')).toEqual([expect.objectContaining({ status: 'error', error: 'timed out after 3s' })]);
    const shown = await runAgent(['cron', 'show', 'slow', '--no-tick'], { home });
    expect(shown.stdout).toMatch(/Time limit:\s+3s a run/);
  });

  it('refuses to cancel a job with no run under way, and a bad --timeout, in one sentence each', async () => {
    await homeWith('files');
    await runAgent(['cron', 'create', 'every 1h', 'Hello', '--name', 'idle', '--deliver', 'local', '--no-tick'], { home });

    const cancelled = await runAgent(['cron', 'cancel', 'idle'], { home });
    const badTimeout = await runAgent(['cron', 'edit', 'idle', '--timeout', '10', '--no-tick'], { home });

    expect(cancelled.code).toBe(1);
    expect(errorSentence(cancelled)).toBe("error: Job 'idle' is scheduled, with no run under way to cancel.");
    expect(badTimeout.code).toBe(2);
    expect(badTimeout.stderr).toContain('--timeout "10" is not a length of time: it has no unit');
  });
});

describe('the overlap policy, through the built CLI', () => {
  let home: string;

  beforeAll(requireBuiltAgent);
  afterEach(async () => removeAgentHome(home));

  it('is kept on the job and shown, and a policy it does not know is refused in one sentence', async () => {
    home = await makeAgentHome();
    const created = await runAgent(['cron', 'create', 'every 1h', 'x', '--name', 'hourly', '--overlap', 'queue', '--json', '--no-tick'], {
      home,
    });
    const shown = await runAgent(['cron', 'show', 'hourly', '--no-tick'], { home });
    const allow = await runAgent(['cron', 'edit', 'hourly', '--overlap', 'allow', '--no-tick'], { home });
    const shownAllow = await runAgent(['cron', 'show', 'hourly', '--no-tick'], { home });
    const unknown = await runAgent(['cron', 'edit', 'hourly', '--overlap', 'parallel', '--no-tick'], { home });

    expect(JSON.parse(created.stdout)).toMatchObject({ overlap: 'queue' });
    expect(shown.stdout).toMatch(/Overlap:\s+queue: a slot that comes during a run runs once it ends/);
    expect(allow.code).toBe(0);
    expect(shownAllow.stdout).toMatch(/Overlap:\s+allow: a slot that comes during a run runs beside it/);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--overlap must be one of skip, queue, allow, not "parallel".');
  });
});

describe('the overlap policy of a job due every second whose run takes 3 s, through the built gateway', () => {
  let home: string;
  const children: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await removeAgentHome(home);
  });

  interface Run {
    status: string;
    started_at: string;
    finished_at: string | null;
    slot: string | null;
  }

  let database: ScratchDatabase | null = null;
  afterEach(async () => {
    await database?.drop();
    database = null;
  });

  async function runsWith(overlap: 'skip' | 'queue' | 'allow', store: 'files' | 'postgres' = 'files'): Promise<Run[]> {
    home = await makeAgentHome();
    if (store === 'postgres') {
      database = await scratchDatabase();
      await (await database.open()).close();
    }
    const storeLines = database ? ['database:', `  url: ${database.url}`] : [];
    await writeHomeFile(
      home,
      'config.yaml',
      ['timezone: UTC', ...commandModelLines(['sh', '-c', 'sleep 3; echo done']), ...storeLines, ''].join('\n'),
    );
    const created = await runAgent(
      ['cron', 'create', 'every 1s', 'x', '--name', 'fast', '--deliver', 'local', '--overlap', overlap, '--no-tick'],
      {
        home,
      },
    );
    expect(created.code).toBe(0);
    const { gateway, output } = await startGatewayUntil(home, 'gateway started');
    children.push(gateway);
    // Two runs ended, and what came between them.
    if (!(await eventually(() => (output().match(/'fast': ok/g) ?? []).length >= 2, 30_000))) throw new Error(output());
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
    const listed = await runAgent(['cron', 'runs', 'fast', '--json', '--limit', '50', '--no-tick'], { home });
    const runs = (JSON.parse(listed.stdout) as Array<Run & { run_at: string }>).map((run) => ({ ...run, started_at: run.run_at }));
    return runs.reverse();
  }

  const ran = (runs: Run[]) => runs.filter((run) => run.status !== 'skipped');

  it('skip: the slots that come during a run are recorded skipped, and no two runs overlap', async () => {
    const runs = await runsWith('skip');

    expect(runs.filter((run) => run.status === 'skipped').length).toBeGreaterThanOrEqual(1);
    const done = ran(runs).filter((run) => run.finished_at !== null);
    for (let i = 1; i < done.length; i += 1) {
      expect(Date.parse(done[i]!.started_at)).toBeGreaterThanOrEqual(Date.parse(done[i - 1]!.finished_at!));
    }
  });

  it('queue: nothing is skipped, and the next run starts as soon as the one before ends', async () => {
    const runs = await runsWith('queue');

    expect(runs.filter((run) => run.status === 'skipped')).toEqual([]);
    const [first, second] = ran(runs);
    const gapMs = Date.parse(second!.started_at) - Date.parse(first!.finished_at!);
    expect(gapMs).toBeGreaterThanOrEqual(0);
    expect(gapMs).toBeLessThan(1500);
  });

  it.each(['files', 'postgres'] as const)(
    'allow, on %s: each slot runs beside the runs before it, nothing is skipped, and never more than cron.max_parallel_jobs at once',
    async (store) => {
      const runs = await runsWith('allow', store);

      expect(runs.filter((run) => run.status === 'skipped')).toEqual([]);
      const [first, second] = ran(runs);
      // The second started while the first still ran: a slot a second after it, not three.
      expect(Date.parse(second!.started_at)).toBeLessThan(Date.parse(first!.finished_at!));
      for (const run of ran(runs)) {
        const at = Date.parse(run.started_at);
        const beside = ran(runs).filter(
          (other) => Date.parse(other.started_at) <= at && (other.finished_at === null || Date.parse(other.finished_at) > at),
        );
        // cron.max_parallel_jobs is 4 with a command agent.
        expect(beside.length).toBeLessThanOrEqual(4);
      }
      const recorded = ran(runs).map((run) => run.started_at);
      expect(new Set(recorded).size).toBe(recorded.length);
    },
  );
});
