import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { FakeLlmServer, replies, type ScriptedUsage } from '../support/fakeLlmServer.js';
import { freePort } from '../support/freePort.js';
import { scratchDatabase } from '../support/postgres.js';
import { eventually } from '../support/processLiveness.js';
import { parsePrometheusText, sampleValue } from '../support/prometheusText.js';
import { localModelLines, webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';
import {
  makeAgentHome,
  makeDue,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startGatewayUntil,
  storedJob,
  writeHomeFile,
} from './agentCli.js';

/*
 * What runs spend, through the built executable: models on a local server that stream their
 * usage in their own format (OpenAI's last chunk, Anthropic's message_start and message_delta),
 * the ledger's sums, the prices of config.yaml, the budgets that stop a run, and /metrics.
 */

const LLM_KEY = { TEST_LLM_KEY: 'test-llm-key' };
/** $2 per million input tokens, $1 per million cached, $10 per million output. */
const PRICE_LINES = [
  'models:',
  '  prices:',
  '    local/test-model:',
  '      input_per_mtok: 2',
  '      output_per_mtok: 10',
  '      cached_input_per_mtok: 1',
];

/** What `usage` costs at PRICE_LINES' prices. */
const costOf = (...usages: ScriptedUsage[]) =>
  usages.reduce(
    (sum, usage) =>
      sum +
      ((usage.input_tokens - (usage.cached_input_tokens ?? 0)) * 2 + (usage.cached_input_tokens ?? 0) * 1 + usage.output_tokens * 10) / 1e6,
    0,
  );

describe('usage, cost and budgets through the built executable', () => {
  let home: string;
  let llm: FakeLlmServer;
  const running: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    home = await makeAgentHome();
  });

  afterEach(async () => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await llm.close();
    await removeAgentHome(home);
  });

  const configure = (type: 'openai' | 'anthropic', extra: string[] = []) =>
    writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm, type), ...extra, ''].join('\n'));

  const agent = (...args: string[]) => runAgent(args, { home, env: LLM_KEY });

  async function createStatusJob(...flags: string[]): Promise<string> {
    const created = await agent(
      'cron',
      'create',
      'every 1h',
      'Check the status',
      '--name',
      'status',
      '--deliver',
      'local',
      '--no-tick',
      '--json',
      ...flags,
    );
    expect(created).toMatchObject({ code: 0 });
    return (JSON.parse(created.stdout) as { id: string }).id;
  }

  async function runsOf(job: string): Promise<Array<Record<string, any>>> {
    const listed = await agent('cron', 'runs', job, '--json');
    expect(listed).toMatchObject({ code: 0 });
    return JSON.parse(listed.stdout) as Array<Record<string, any>>;
  }

  describe.each(['openai', 'anthropic'] as const)('with an %s-compatible model', (type) => {
    it('keeps in the ledger the exact sum of every model turn, and its cost at the configured price', async () => {
      await configure(type, PRICE_LINES);
      await createStatusJob();
      const first: ScriptedUsage = { input_tokens: 1200, output_tokens: 40, cached_input_tokens: 800, cache_creation_input_tokens: 100 };
      const second: ScriptedUsage = { input_tokens: 1500, output_tokens: 75, cached_input_tokens: 1000, cache_creation_input_tokens: 0 };
      llm.reply(
        replies.withUsage(replies.toolCalls({ name: 'no_such_tool', arguments: {} }), first),
        replies.withUsage(replies.text('All good.'), second),
      );

      expect(await agent('cron', 'run', 'status', '--no-tick')).toMatchObject({ code: 0 });

      const [run] = await runsOf('status');
      expect(run!.usage).toEqual({ input_tokens: 2700, output_tokens: 115, cached_input_tokens: 1800, model_turns: 2, tool_calls: 1 });
      expect(run!.cost_usd).toBeCloseTo(costOf(first, second), 6);
      if (type === 'openai') expect(llm.requests[0]!.body.stream_options).toEqual({ include_usage: true });
      const shown = await agent('cron', 'show', 'status');
      expect(shown.stdout).toMatch(/Spent, last 24 h: +1 run, 2,700 in \/ 115 out tokens \(1,800 cached\), \$0\.00\d+/);
      const table = await agent('cron', 'runs', 'status');
      expect(table.stdout).toContain('2,700 in / 115 out');
    }, 60_000);
  });

  it('shows tokens and no cost for a model without a price', async () => {
    await configure('openai');
    await createStatusJob();
    llm.reply(replies.withUsage(replies.text('Fine.'), { input_tokens: 300, output_tokens: 20 }));

    const ran = await agent('cron', 'run', 'status', '--no-tick', '--json');
    expect(ran).toMatchObject({ code: 0 });
    expect(JSON.parse(ran.stdout)).toMatchObject({ usage: { input_tokens: 300, output_tokens: 20, model_turns: 1 }, cost_usd: null });

    const [run] = await runsOf('status');
    expect(run!.usage).toMatchObject({ input_tokens: 300, output_tokens: 20, model_turns: 1 });
    expect(run!.cost_usd).toBeNull();
  }, 60_000);

  it('stops a model that keeps calling tools at --max-turns 3: error, nothing delivered, the fourth turn never asked for', async () => {
    await configure('openai', PRICE_LINES);
    const id = await createStatusJob('--max-turns', '3');
    llm.always = replies.toolCalls({ name: 'no_such_tool', arguments: {} });

    const run = await agent('cron', 'run', 'status', '--no-tick');

    expect(run.code).not.toBe(0);
    expect(llm.requests).toHaveLength(3);
    const [recorded] = await runsOf('status');
    expect(recorded).toMatchObject({ status: 'error', error: 'budget reached: 3 model turns of 3', response: null });
    expect(recorded!.usage).toMatchObject({ model_turns: 3, tool_calls: 2 });
    expect(storedJob(home, id)).toMatchObject({
      last_status: 'error',
      last_error: 'budget reached: 3 model turns of 3',
      failure_streak: 1,
    });
    expect(storedJob(home, id).budget).toEqual({ max_turns: 3 });
  }, 60_000);

  it('sets, shows and undoes the budget flags, and refuses a wrong amount in one sentence', async () => {
    await configure('openai');
    const id = await createStatusJob('--max-turns', '4', '--max-tokens', '40000', '--max-cost', '$0.50');

    expect(storedJob(home, id).budget).toEqual({ max_turns: 4, max_tokens: 40000, max_cost: 0.5 });
    expect((await agent('cron', 'show', 'status', '--no-tick')).stdout).toMatch(/Budget: +4 model turns, 40,000 tokens, \$0\.50 a run\n/);
    expect(await agent('cron', 'edit', 'status', '--no-max-turns', '--max-cost-per-day', '2', '--no-tick')).toMatchObject({ code: 0 });
    expect(storedJob(home, id).budget).toEqual({ max_tokens: 40000, max_cost: 0.5, max_cost_per_day: 2 });
    const refused = await agent('cron', 'edit', 'status', '--max-cost', 'cheap', '--no-tick');
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe('error: --max-cost must be an amount of US dollars above 0 such as 0.50, not "cheap".');
  }, 60_000);

  it('stops a run at agent.budget.max_tokens when the job sets no limit of its own', async () => {
    await configure('anthropic', ['agent:', '  budget:', '    max_tokens: 2000']);
    await createStatusJob();
    llm.usage = { input_tokens: 900, output_tokens: 100 };
    llm.always = replies.toolCalls({ name: 'no_such_tool', arguments: {} });

    await agent('cron', 'run', 'status', '--no-tick');

    expect(llm.requests).toHaveLength(2);
    expect((await runsOf('status'))[0]).toMatchObject({ status: 'error', error: 'budget reached: 2,000 tokens of 2,000' });
  }, 60_000);

  it('blocks the fourth run of a day past --max-cost-per-day without calling the model', async () => {
    await configure('openai', PRICE_LINES);
    await createStatusJob('--max-cost-per-day', '0.01');
    // Each run: 1,000 input and 200 output tokens, $0.004.
    llm.usage = { input_tokens: 1000, output_tokens: 200, cached_input_tokens: 0 };
    llm.always = replies.text('Done.');

    for (let run = 1; run <= 3; run += 1) expect(await agent('cron', 'run', 'status', '--no-tick')).toMatchObject({ code: 0 });
    const fourth = await agent('cron', 'run', 'status', '--no-tick');

    expect(fourth.code).not.toBe(0);
    expect(llm.requests).toHaveLength(3);
    const [blocked, ...earlier] = await runsOf('status');
    expect(blocked).toMatchObject({
      status: 'blocked_config',
      error: 'daily budget reached ($0.012 of $0.01 in the last 24 h for this job)',
    });
    expect(earlier.map((run) => run.status)).toEqual(['ok', 'ok', 'ok']);
    const shown = JSON.parse((await agent('cron', 'show', 'status', '--json')).stdout) as Record<string, any>;
    expect(shown.spent.last_24h).toMatchObject({ runs: 4, cost_usd: 0.012 });
    expect(shown.budget).toEqual({ max_cost_per_day: 0.01 });
  }, 90_000);

  it("keeps a webhook run's usage and cost, and stops it at its route's budget", async () => {
    const port = await freePort();
    await configure('anthropic', [
      ...PRICE_LINES,
      ...webhookListenerLines(port, 'a-secret'),
      '        github:',
      '          prompt: "Review PR {number}"',
      '        looping:',
      '          prompt: "Review PR {number} again"',
      '          budget: {max_turns: 2}',
    ]);
    const usage: ScriptedUsage = { input_tokens: 500, output_tokens: 50, cached_input_tokens: 100 };
    llm.usage = usage;
    llm.reply(replies.text('Looks good.'));
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on', { env: LLM_KEY });
    running.push(gateway);

    expect((await postPullRequestEvent(port, 'a-secret', 'delivery-1', { action: 'opened', number: 7 }, 'github')).status).toBe(202);
    expect(await eventually(() => output().includes('Looks good.'), 20_000)).toBe(true);
    llm.always = replies.toolCalls({ name: 'no_such_tool', arguments: {} });
    expect((await postPullRequestEvent(port, 'a-secret', 'delivery-2', { action: 'opened', number: 8 }, 'looping')).status).toBe(202);
    expect(await eventually(() => output().includes('budget reached: 2 model turns of 2'), 20_000)).toBe(true);

    const listed = await agent('webhook', 'runs', '--json');
    const runs = JSON.parse(listed.stdout) as Array<Record<string, any>>;
    const byRoute = (route: string) => runs.find((run) => run.route === route)!;
    expect(byRoute('github')).toMatchObject({
      usage: { input_tokens: 500, output_tokens: 50, cached_input_tokens: 100, model_turns: 1, tool_calls: 0 },
    });
    expect(byRoute('github').cost_usd).toBeCloseTo(costOf(usage), 9);
    expect(byRoute('looping')).toMatchObject({ outcome: 'run_failed', status: 'error', error: 'budget reached: 2 model turns of 2' });
    expect(byRoute('looping').usage).toMatchObject({ input_tokens: 1000, model_turns: 2, tool_calls: 1 });
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
  }, 90_000);

  it('keeps the sums and the daily cap on PostgreSQL too', async () => {
    const database = await scratchDatabase();
    try {
      const env = { ...LLM_KEY, AGENT_DATABASE_URL: database.url };
      const onDatabase = (...args: string[]) => runAgent(args, { home, env });
      await configure('openai', [...PRICE_LINES, 'agent:', '  budget:', '    max_cost_per_day: 0.008']);
      expect(await onDatabase('db', 'migrate')).toMatchObject({ code: 0 });
      const created = await onDatabase(
        'cron',
        'create',
        'every 1h',
        'Check',
        '--name',
        'status',
        '--deliver',
        'local',
        '--no-tick',
        '--max-turns',
        '5',
      );
      expect(created).toMatchObject({ code: 0 });
      llm.usage = { input_tokens: 1000, output_tokens: 200, cached_input_tokens: 0 };
      llm.always = replies.text('Done.');

      for (let run = 1; run <= 2; run += 1) expect(await onDatabase('cron', 'run', 'status', '--no-tick')).toMatchObject({ code: 0 });
      const third = await onDatabase('cron', 'run', 'status', '--no-tick');

      expect(third.code).not.toBe(0);
      expect(llm.requests).toHaveLength(2);
      const runs = JSON.parse((await onDatabase('cron', 'runs', 'status', '--json')).stdout) as Array<Record<string, any>>;
      expect(runs.map((run) => [run.status, run.usage?.input_tokens ?? null, run.cost_usd])).toEqual([
        ['blocked_config', null, null],
        ['ok', 1000, 0.004],
        ['ok', 1000, 0.004],
      ]);
      expect(runs[0]!.error).toBe('daily budget reached ($0.008 of $0.008 in the last 24 h for all runs)');
      const shown = JSON.parse((await onDatabase('cron', 'show', 'status', '--json')).stdout) as Record<string, any>;
      expect(shown.spent.last_30_days).toMatchObject({ runs: 3, cost_usd: 0.008, usage: { input_tokens: 2000, output_tokens: 400 } });
      expect(shown.budget).toEqual({ max_turns: 5 });
    } finally {
      await database.drop();
    }
  }, 90_000);

  it('counts the tokens and the cost of a gateway run in /metrics', async () => {
    const port = await freePort();
    await configure('openai', [
      ...PRICE_LINES,
      'platforms:',
      '  webhook:',
      '    enabled: true',
      '    extra:',
      '      host: 127.0.0.1',
      `      port: ${port}`,
      '      secret: a-secret',
      '      metrics: true',
    ]);
    const id = await createStatusJob();
    const usage: ScriptedUsage = { input_tokens: 1000, output_tokens: 200, cached_input_tokens: 400 };
    llm.usage = usage;
    llm.always = replies.text('Done.');
    await makeDue(home, id, 2_000);
    const { gateway } = await startGatewayUntil(home, 'webhook listening on', { env: LLM_KEY });
    running.push(gateway);

    expect(await eventually(() => storedJob(home, id).last_status === 'ok', 20_000)).toBe(true);
    const metrics = parsePrometheusText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());

    const labels = { provider: 'local', model: 'test-model' };
    expect(sampleValue(metrics, 'agent_model_tokens_total', { ...labels, kind: 'input' })).toBe(1000);
    expect(sampleValue(metrics, 'agent_model_tokens_total', { ...labels, kind: 'output' })).toBe(200);
    expect(sampleValue(metrics, 'agent_model_tokens_total', { ...labels, kind: 'cached_input' })).toBe(400);
    expect(sampleValue(metrics, 'agent_cost_usd_total', labels)).toBeCloseTo(costOf(usage), 9);
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
  }, 90_000);
});
