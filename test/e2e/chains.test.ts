import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { eventually } from '../support/processLiveness.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';
import { localModelLines } from './configLines.js';

describe('chains of jobs, through the built gateway', () => {
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

  const agent = (args: string[]) => runAgent([...args, '--no-tick'], { home });

  it.each(['files', 'postgres'] as const)('on %s: a → b → c, the last seeing the first answer through the second', async (store) => {
    home = await makeAgentHome();
    llm = await FakeLlmServer.start();
    if (store === 'postgres') {
      database = await scratchDatabase();
      await (await database.open()).close();
    }
    const storeLines = database ? ['database:', `  url: ${database.url}`] : [];
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm), ...storeLines, ''].join('\n'));
    llm.reply(replies.text('Feeds say KESTREL-417.'), replies.text('b read: KESTREL-417 (from a).'), replies.text('c is done.'));
    const due = new Date(Date.now() + 1500).toISOString().replace(/\.\d{3}Z$/, 'Z');
    expect((await agent(['cron', 'create', due, 'Fetch the feeds', '--name', 'a', '--deliver', 'local'])).code).toBe(0);
    const b = await agent(['cron', 'create', '--after', 'a', 'Summarise what a found', '--name', 'b', '--deliver', 'local']);
    expect(b.stderr).toBe('');
    expect(b.stdout).toMatch(/^Created job \w+ 'b': only after other jobs, delivers to local\.\n$/);
    expect((await agent(['cron', 'create', '--after', 'b:ok', 'Report on b', '--name', 'c', '--deliver', 'local'])).code).toBe(0);

    // A cycle is refused when made, in one sentence.
    const cycle = await agent(['cron', 'edit', 'a', '--after', 'c']);
    expect(cycle.code).toBe(1);
    expect(cycle.stderr.trim()).toBe(
      "error: Job 'a' cannot run after 'c': 'c' already runs after 'b', which runs after 'a' (c → b → a → c).",
    );

    const { gateway, output } = await startGatewayUntil(home, 'gateway started');
    children.push(gateway);
    if (!(await eventually(() => output().includes("'c': ok"), 30_000))) throw new Error(output());

    expect(llm.requests).toHaveLength(3);
    const [, ofB, ofC] = llm.requests.map((request) => JSON.stringify(request.body));
    expect(ofB).toContain('KESTREL-417');
    expect(ofB).toContain("runs after job 'a'");
    // c saw a's answer only through b's.
    expect(ofC).toContain('b read: KESTREL-417 (from a).');
    expect(ofC).not.toContain('Feeds say');
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');

    const shownB = JSON.parse((await agent(['cron', 'show', 'b', '--json'])).stdout) as Record<string, unknown>;
    expect(shownB).toMatchObject({
      schedule: { kind: 'after' },
      last_status: 'ok',
      after: [{ on: 'ok' }],
      followed_by: [{ name: 'c', on: 'ok' }],
      chained_from: { status: 'ok', pending: false },
    });
    const text = (await agent(['cron', 'show', 'b'])).stdout;
    expect(text).toMatch(/Runs after:\s+'a' \(\w+\)/);
    expect(text).toMatch(/Followed by:\s+'c' \(\w+\)/);
  });

  it('documents --after in --help and refuses a link to no job in one sentence', async () => {
    home = await makeAgentHome();
    llm = await FakeLlmServer.start();
    expect((await agent(['cron', 'create', '--help'])).stdout).toContain('--after');
    expect((await agent(['cron', 'edit', '--help'])).stdout).toContain('--no-after');
    const missing = await agent(['cron', 'create', '--after', 'nope', 'x']);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
  });
});
