import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { processesMarked } from '../support/processTrees.js';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { eventually } from '../support/processLiveness.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import {
  makeAgentHome,
  outcomeOf,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startAgent,
  startGatewayUntil,
  writeHomeFile,
} from './agentCli.js';
import { commandModelLines } from './configLines.js';

/** The variable every process of one start carries (the agent programs inherit it): how survivors are found. */
const TREE = 'E2E_RUN_TREE';

/** The pids whose environment holds `TREE=<value>`, read from /proc: what one start left running. */
const processesOf = (value: string): number[] => processesMarked(TREE, value);

function killAll(value: string): void {
  for (const pid of processesOf(value)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

/**
 * An agent program (a shell) that starts `sleep 120` in the background, records its own pid and
 * the background one's, and then takes 30 s to answer: killed mid-run, its grandchild has no
 * parent that dies with the agent.
 */
function backgroundingAgent(home: string): string[] {
  const script = [
    `sleep 120 &`,
    `echo $! >> ${join(home, 'grandchildren.pids')}`,
    `echo $$ >> ${join(home, 'agents.pids')}`,
    'sleep 30',
    'echo done',
  ].join('\n');
  return commandModelLines(['sh', '-c', script]);
}

const recorded = (home: string, file: string): number[] =>
  existsSync(join(home, file)) ? readFileSync(join(home, file), 'utf8').split('\n').filter(Boolean).map(Number) : [];

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface LedgerRun {
  id: string;
  status: string;
  error: string | null;
}

/**
 * What is started in a test is killed after it whatever happened: every process of each start
 * (found by its mark, grandchildren included) and the `agent` processes themselves.
 */
function startsOfEachTest() {
  const marks: string[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const mark of marks.splice(0)) killAll(mark);
  });
  return {
    /** A new mark for one start's processes. */
    mark(): string {
      const mark = randomBytes(6).toString('hex');
      marks.push(mark);
      return mark;
    },
    track<T extends ChildProcess>(child: T): T {
      children.push(child);
      return child;
    },
  };
}

describe('runs whose process was killed with -9, and the processes they started', () => {
  const starts = startsOfEachTest();
  let home: string;
  let database: ScratchDatabase | null = null;

  beforeAll(requireBuiltAgent);

  afterEach(async () => {
    await removeAgentHome(home);
    await database?.drop();
    database = null;
  });

  const runsOf = async (job: string): Promise<LedgerRun[]> => {
    const listed = await runAgent(['cron', 'runs', job, '--json', '--no-tick'], { home });
    if (listed.code !== 0) throw new Error(`agent cron runs failed (${listed.code}):\n${listed.stderr}`);
    return JSON.parse(listed.stdout) as LedgerRun[];
  };

  async function killedMidRunThenRestarted(store: 'files' | 'postgres'): Promise<void> {
    home = await makeAgentHome();
    if (store === 'postgres') {
      database = await scratchDatabase();
      // Its schema, as `agent db migrate` would set it up.
      await (await database.open()).close();
    }
    const storeLines = database ? ['database:', `  url: ${database.url}`, '  lease_seconds: 3'] : [];
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...backgroundingAgent(home), ...storeLines, ''].join('\n'));
    const created = await runAgent(
      ['cron', 'create', iso(Date.now() + 1000), 'Take your time', '--name', 'slow', '--deliver', 'local', '--no-tick'],
      { home },
    );
    const job = /^Created job ([0-9a-f]{12}) /.exec(created.stdout)?.[1];
    if (!job) throw new Error(`agent cron create failed (${created.code}):\n${created.stderr}`);

    const first = starts.mark();
    const { gateway } = await startGatewayUntil(home, 'gateway started', { env: { [TREE]: first }, withinMs: 20_000 });
    starts.track(gateway);
    expect(await eventually(() => recorded(home, 'grandchildren.pids').length === 1, 20_000)).toBe(true);
    // Mid-run, and shown running by the ledger.
    expect(await eventuallyAsync(async () => (await runsOf(job))[0]?.status === 'running', 20_000)).toBe(true);
    const [grandchild] = recorded(home, 'grandchildren.pids');
    expect(processesOf(first)).toContain(grandchild);

    gateway.kill('SIGKILL');
    await once(gateway, 'exit');
    const second = starts.mark();
    const restarted = await startGatewayUntil(home, 'gateway started', { env: { [TREE]: second }, withinMs: 20_000 });
    starts.track(restarted.gateway);

    // No process of the killed gateway's run survives the restart by more than 5 s.
    expect(await eventually(() => processesOf(first).length === 0, 5_000)).toBe(true);
    // The ledger is settled by the restarted gateway's first look, which may come just after its start line.
    expect(await eventuallyAsync(async () => (await runsOf(job))[0]?.status !== 'running', 20_000)).toBe(true);
    const [run] = await runsOf(job);
    expect(run).toMatchObject({ status: 'error' });
    expect(run!.error).toMatch(/^interrupted: the process \S+ that ran it is gone$/);
    restarted.gateway.kill('SIGTERM');
    await once(restarted.gateway, 'exit');
  }

  it('on the file store: the restarted gateway kills the grandchild and records the run interrupted', async () => {
    await killedMidRunThenRestarted('files');
  });

  it('on PostgreSQL: the restarted gateway kills the grandchild and records the run interrupted', async () => {
    await killedMidRunThenRestarted('postgres');
  });
});

describe('a command stopped by a signal', () => {
  const starts = startsOfEachTest();
  let home: string;

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    home = await makeAgentHome();
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...backgroundingAgent(home), ''].join('\n'));
  });

  afterEach(async () => {
    await removeAgentHome(home);
  });

  /** `agent cron run` of a new job whose agent program has started its background grandchild. */
  async function slowRunUnderWay() {
    const created = await runAgent(['cron', 'create', 'every 1h', 'Take your time', '--name', 'slow', '--deliver', 'local', '--no-tick'], {
      home,
    });
    const job = /^Created job ([0-9a-f]{12}) /.exec(created.stdout)![1]!;
    const mark = starts.mark();
    const run = starts.track(startAgent(['cron', 'run', job], { home, env: { [TREE]: mark } }));
    const ended = outcomeOf(run);
    expect(await eventually(() => recorded(home, 'grandchildren.pids').length === 1, 20_000)).toBe(true);
    const [grandchild] = recorded(home, 'grandchildren.pids');
    return { job, mark, run, ended, grandchild };
  }

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('agent cron run on %s kills the whole tree, records the run interrupted at once and exits %i', async (signal, code) => {
    const { job, mark, run, ended, grandchild } = await slowRunUnderWay();

    run.kill(signal);
    const outcome = await ended;

    expect(outcome.code).toBe(code);
    expect(outcome.stderr).toContain(`${signal} received`);
    expect(processesOf(mark)).toEqual([]);
    expect(processesOf(mark)).not.toContain(grandchild);
    const listed = JSON.parse((await runAgent(['cron', 'runs', job, '--json', '--no-tick'], { home })).stdout) as LedgerRun[];
    expect(listed[0]).toMatchObject({ status: 'error', error: `interrupted: agent was stopped by ${signal} before the run finished` });
    const shown = JSON.parse((await runAgent(['cron', 'show', job, '--json', '--no-tick'], { home })).stdout) as {
      state: string;
      last_error: string;
    };
    expect(shown).toMatchObject({ state: 'scheduled', last_error: `interrupted: agent was stopped by ${signal} before the run finished` });
  });

  it('agent cron run killed with -9: the next command, even with --no-tick, records the run interrupted and ends what it left running', async () => {
    const { job, mark, run, ended, grandchild } = await slowRunUnderWay();

    run.kill('SIGKILL');
    await ended;
    expect(processesOf(mark)).toContain(grandchild);
    const listed = await runAgent(['cron', 'runs', job, '--json', '--no-tick'], { home });

    expect(listed.stderr).toContain(`Job ${job} 'slow' was interrupted earlier and is back in service`);
    expect((JSON.parse(listed.stdout) as LedgerRun[])[0]).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/^interrupted: the process \S+ that ran it is gone$/),
    });
    const shown = JSON.parse((await runAgent(['cron', 'show', job, '--json', '--no-tick'], { home })).stdout) as {
      state: string;
      last_status: string;
    };
    expect(shown).toMatchObject({ state: 'scheduled', last_status: 'error' });
    expect(processesOf(mark)).toEqual([]);
  });

  it('agent chat -q on SIGINT kills the agent program and what it started, and exits 130', async () => {
    const mark = starts.mark();
    const chat = starts.track(startAgent(['chat', '-q', 'Take your time', '--no-tick'], { home, env: { [TREE]: mark } }));
    const ended = outcomeOf(chat);
    expect(await eventually(() => recorded(home, 'grandchildren.pids').length === 1, 20_000)).toBe(true);

    chat.kill('SIGINT');
    const outcome = await ended;

    expect(outcome.code).toBe(130);
    expect(processesOf(mark)).toEqual([]);
  });
});

/** eventually, for a condition that must be awaited. */
async function eventuallyAsync(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
