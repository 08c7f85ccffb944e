import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { eventually } from '../support/processLiveness.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';
import { localModelLines, webhookListenerLines } from './configLines.js';
import { freePort } from '../support/freePort.js';
import { postPullRequestEvent } from './signedDelivery.js';

interface LedgerRun {
  id: string;
  status: string;
  error: string | null;
  attempt?: number;
  retry_of?: string;
}

describe('retries with back-off, through the built gateway', () => {
  let home: string;
  let llm: FakeLlmServer;
  let database: ScratchDatabase | null = null;
  const children: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await llm.close();
    await removeAgentHome(home);
    await database?.drop();
    database = null;
  });

  const runsOf = async (job: string): Promise<LedgerRun[]> =>
    JSON.parse((await runAgent(['cron', 'runs', job, '--json', '--no-tick'], { home })).stdout) as LedgerRun[];

  it.each(['files', 'postgres'] as const)(
    'on %s: a model that answers 503 twice and then 200 makes three attempts, linked to the first, and one delivery',
    async (store) => {
      home = await makeAgentHome();
      llm = await FakeLlmServer.start();
      if (store === 'postgres') {
        database = await scratchDatabase();
        await (await database.open()).close();
      }
      const storeLines = database ? ['database:', `  url: ${database.url}`] : [];
      await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm), ...storeLines, ''].join('\n'));
      llm.reply(replies.error(503, 'overloaded'), replies.error(503, 'overloaded'), replies.text('The ', 'summary.'));
      const due = new Date(Date.now() + 1500).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const created = await runAgent(
        ['cron', 'create', due, 'Summarise', '--name', 'daily', '--deliver', 'local', '--retry', '3', '--retry-backoff', '1s', '--no-tick'],
        { home },
      );
      expect(created.code).toBe(0);
      const { gateway, output } = await startGatewayUntil(home, 'gateway started');
      children.push(gateway);

      if (!(await eventually(() => output().includes("'daily': ok"), 30_000))) throw new Error(output());
      const runs = (await runsOf('daily')).reverse();

      expect(llm.requests).toHaveLength(3);
      expect(runs.map((run) => [run.status, run.attempt, run.retry_of ?? null])).toEqual([
        ['error', 1, null],
        ['error', 2, runs[0]!.id],
        ['ok', 3, runs[0]!.id],
      ]);
      expect(output()).toMatch(/job 'daily' failed and runs again at \S+ \(attempt 2\)/);
      const shown = JSON.parse((await runAgent(['cron', 'show', 'daily', '--json', '--no-tick'], { home })).stdout) as Record<
        string,
        unknown
      >;
      expect(shown).toMatchObject({ state: 'completed', last_status: 'ok', repeat: { completed: 1 } });
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    },
  );

  it('refuses a --retry-backoff without --retry, and a count beyond 20, in one sentence', async () => {
    home = await makeAgentHome();
    llm = await FakeLlmServer.start();
    const noCount = await runAgent(['cron', 'create', 'every 1h', 'x', '--retry-backoff', '30s', '--no-tick'], { home });
    const tooMany = await runAgent(['cron', 'create', 'every 1h', 'x', '--retry', '21', '--no-tick'], { home });

    expect(noCount.code).toBe(2);
    expect(noCount.stderr).toContain('give --retry <n> too');
    expect(tooMany.code).toBe(1);
    expect(tooMany.stderr).toContain('The retry count 21 is not valid; give a whole number from 0 to 20.');
  });
});

describe("a webhook route's retry, through the built gateway", () => {
  let home: string;
  let llm: FakeLlmServer;
  const children: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await llm.close();
    await removeAgentHome(home);
  });

  /** A home whose webhook route `github` retries as `retry` says, against a fake model; the listener's port. */
  async function homeWithRoute(retry: string): Promise<number> {
    home = await makeAgentHome();
    llm = await FakeLlmServer.start();
    const port = await freePort();
    await writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        ...localModelLines(llm),
        ...webhookListenerLines(port, 'a-secret'),
        '        github:',
        '          events: [pull_request]',
        '          prompt: "Review PR {number}"',
        `          retry: ${retry}`,
        '',
      ].join('\n'),
    );
    return port;
  }

  it('runs an event whose model answered 503 twice three times: three ledger records linked to the first, one answer', async () => {
    const port = await homeWithRoute('{times: 3, backoff: 1s}');
    llm.reply(replies.error(503, 'overloaded'), replies.error(503, 'overloaded'), replies.text('Looks ', 'good.'));
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    children.push(gateway);

    const posted = await postPullRequestEvent(port, 'a-secret', 'delivery-1', { action: 'opened', number: 7 });
    expect(posted.status).toBe(202);
    const show = async (id: string) =>
      JSON.parse((await runAgent(['runs', 'show', id, '--json'], { home })).stdout) as Record<string, unknown>;
    const finalRun = async () => {
      const runs = JSON.parse((await runAgent(['webhook', 'runs', '--json'], { home })).stdout) as Array<{ id: string }>;
      return runs[0] ? show(runs[0].id) : null;
    };
    let last: Record<string, unknown> | null;
    for (const deadline = Date.now() + 30_000; (last = await finalRun())?.status !== 'ok';) {
      if (Date.now() > deadline) throw new Error(output());
      await new Promise((resolve) => setTimeout(resolve, 300));
    }

    expect(llm.requests).toHaveLength(3);
    expect(output()).toMatch(/webhook run on route 'github' failed \(.*503.*\); attempt 2 in 1s/);
    const id = String(last!.id);
    expect(last).toMatchObject({ attempt: 3, retry_of: `${id}~1` });
    expect(await show(`${id}~1`)).toMatchObject({ status: 'error', attempt: 1 });
    expect(await show(`${id}~2`)).toMatchObject({ status: 'error', attempt: 2, retry_of: `${id}~1` });
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
  });

  it('goes on after a kill -9 in its wait from the next attempt: three attempts in all, as the route allows, never a fourth', async () => {
    const port = await homeWithRoute('{times: 2, backoff: 5s}');
    llm.reply(replies.error(503, 'overloaded'), replies.error(503, 'overloaded'), replies.error(503, 'overloaded'), replies.text('Never.'));
    const first = await startGatewayUntil(home, 'webhook listening on');
    children.push(first.gateway);
    expect((await postPullRequestEvent(port, 'a-secret', 'delivery-1', { action: 'opened', number: 7 })).status).toBe(202);
    if (!(await eventually(() => /attempt 2 in/.test(first.output()), 20_000))) throw new Error(first.output());
    first.gateway.kill('SIGKILL');
    await once(first.gateway, 'exit');
    expect(llm.requests).toHaveLength(1);

    const second = await startGatewayUntil(home, 'webhook listening on');
    children.push(second.gateway);
    const runs = async () => JSON.parse((await runAgent(['webhook', 'runs', '--json'], { home })).stdout) as Array<{ outcome: string }>;
    for (const deadline = Date.now() + 40_000; (await runs())[0]?.outcome !== 'run_failed';) {
      if (Date.now() > deadline) throw new Error(second.output());
      await new Promise((resolve) => setTimeout(resolve, 300));
    }

    expect(second.output()).toMatch(/webhook run on route 'github' goes on with attempt 2/);
    expect(llm.requests).toHaveLength(3);
    second.gateway.kill('SIGTERM');
    await once(second.gateway, 'exit');
  });
});
