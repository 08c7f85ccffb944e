import { defaultMaxListeners, getEventListeners } from 'node:events';
import { RunAgentSession, type ProviderTarget } from '../../../src/application/agent/RunAgentSession.js';
import type { ModelTurnRequest } from '../../../src/application/agent/ports/ChatModel.js';
import { ToolInputError } from '../../../src/application/agent/ports/Tool.js';
import type { AgentRunRequest } from '../../../src/application/ports/AgentRunner.js';
import { CredentialPool } from '../../../src/domain/agent/CredentialPool.js';
import { cronRunToolsets } from '../../../src/domain/toolsets.js';
import { FakeChatModel, turns, type FakeTurn } from '../../support/fakes/FakeChatModel.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingTracing } from '../../support/fakes/RecordingTracing.js';
import { failureOf, sampleRunRequest } from '../../support/agentRuns.js';
import { FixedToolCatalog, RecordingTool } from '../../support/scriptedTools.js';

/*
 * The session loop alone: a scripted model, tools that record their calls, and a timer that
 * moves only when the test moves it. No network, no SDK, no real time.
 */

const warnings = (logger: RecordingLogger) => logger.entries.filter((entry) => entry.level === 'warn').map((entry) => entry.message);

/** Lets the session take the next step after something it waits for happened. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function provider(model: FakeChatModel, overrides: Partial<ProviderTarget> = {}): ProviderTarget {
  return {
    provider: 'primary',
    model: 'model-1',
    chatModel: async () => model,
    credentials: new CredentialPool(['sk-1'], 'TEST_API_KEY'),
    keyHelp: 'TEST_API_KEY',
    ...overrides,
  };
}

function setUp(options: { tools?: RecordingTool[]; maxToolRounds?: number } = {}) {
  const timer = new ManualTimer();
  const logger = new RecordingLogger();
  const session = new RunAgentSession({
    tools: new FixedToolCatalog(options.tools ?? []),
    timer,
    logger,
    maxToolRounds: options.maxToolRounds,
  });
  const run = (chain: ProviderTarget[], request: Partial<AgentRunRequest> = {}, skippedFallbacks?: string[]) =>
    session.execute({ request: sampleRunRequest(request), chain, skippedFallbacks });
  return { timer, logger, run };
}

describe('RunAgentSession: the conversation', () => {
  it('answers with the first turn that calls no tool, naming the provider and model', async () => {
    const model = new FakeChatModel(turns.answer('Sunny.'));

    const result = await setUp().run([provider(model)]);

    expect(result).toMatchObject({ text: 'Sunny.', answeredBy: 'primary (model-1)' });
  });

  it('opens with memory as system text, then each skill, then the earlier turns, then the task', async () => {
    const model = new FakeChatModel(turns.answer('ok'));

    await setUp().run([provider(model)], {
      conversation: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    });

    const [turn] = model.seen;
    expect(turn!.system).toBe('# Memory: MEMORY.md\n\nThe user likes short answers.\n\n# Memory: USER.md\n\nName: Ada');
    expect(turn!.messages).toEqual([
      { role: 'user', text: '# Skill: weather\n\nLook at the sky.' },
      { role: 'user', text: '# Skill: news\n\nRead the paper.' },
      { role: 'user', text: 'hi' },
      { role: 'assistant', text: 'hello', toolCalls: [] },
      { role: 'user', text: 'Report the weather.' },
    ]);
  });

  it('calls the tools a turn asks for, in order, and sends their results with the next turn', async () => {
    const search = new RecordingTool('web_search', (args) => `results for ${String(args.query)}`);
    const model = new FakeChatModel(
      turns.tools({ name: 'web_search', arguments: { query: 'rain' } }, { name: 'web_search', arguments: { query: 'sun' } }),
      turns.answer('Done.'),
    );

    await setUp({ tools: [search] }).run([provider(model)], { unattended: true, privateNetworks: false });

    expect(search.calls).toEqual([
      { args: { query: 'rain' }, unattended: true, privateNetworks: false },
      { args: { query: 'sun' }, unattended: true, privateNetworks: false },
    ]);
    expect(model.seen[1]!.messages.at(-1)).toEqual({
      role: 'tool',
      results: [
        { callId: 'call_1', name: 'web_search', content: 'results for rain', isError: false },
        { callId: 'call_2', name: 'web_search', content: 'results for sun', isError: false },
      ],
    });
  });

  it('offers only the tools of the toolsets asked for: a cron run never sees the job tool', async () => {
    const model = new FakeChatModel(turns.answer('ok'));
    const tools = [new RecordingTool('cronjob'), new RecordingTool('terminal')];

    await setUp({ tools }).run([provider(model)], { toolsets: cronRunToolsets() });

    expect(model.seen[0]!.tools).toEqual(['terminal']);
  });

  it('answers an unknown tool, malformed arguments, refused arguments and a throwing tool with error results, and goes on', async () => {
    const picky = new RecordingTool('terminal', (args) => {
      if (args.boom) throw new Error('disk on fire');
      throw new ToolInputError('terminal needs "command".');
    });
    const model = new FakeChatModel(
      turns.tools(
        { name: 'teleport' },
        { name: 'terminal', arguments: '{not json' },
        { name: 'terminal', arguments: {} },
        { name: 'terminal', arguments: { boom: true } },
      ),
      turns.answer('Sorry.'),
    );

    const result = await setUp({ tools: [picky] }).run([provider(model)], { toolsets: ['terminal'] });

    expect(result.text).toBe('Sorry.');
    const results = (model.seen[1]!.messages.at(-1) as { results: ReadonlyArray<{ content: string; isError: boolean }> }).results;
    expect(results.map(({ content, isError }) => [JSON.parse(content).error, isError])).toEqual([
      ['unknown tool "teleport"; the tools available are: terminal', true],
      [expect.stringMatching(/^the arguments are not valid JSON .*; call "terminal" again with a JSON object/), true],
      ['terminal needs "command".', true],
      ['the tool failed: disk on fire', true],
    ]);
  });

  it('stops a model that keeps calling tools at the round bound, naming what it still asked for', async () => {
    const model = new FakeChatModel(...Array.from({ length: 5 }, () => turns.tools({ name: 'terminal', arguments: {} })));

    const error = await failureOf(
      setUp({ tools: [new RecordingTool('terminal')], maxToolRounds: 2 }).run([provider(model)], { toolsets: ['terminal'] }),
    );

    expect(error.reason).toBe('failed');
    expect(error.message).toBe(
      'stopped after 2 tool-call rounds without a final answer: primary (model-1) still asked for terminal; ' +
        'make the prompt say when the task is done, or split it into smaller jobs.',
    );
    expect(model.seen).toHaveLength(3);
  });
});

describe('RunAgentSession: keys and fallbacks', () => {
  it('repeats a rate-limited call at once with the next key, and rests the first key until its Retry-After', async () => {
    const model = new FakeChatModel(
      turns.failure('rate_limited', 'HTTP 429', { retryAfterMs: 60_000 }),
      turns.answer('First.'),
      turns.answer('Second.'),
      turns.answer('Third.'),
    );
    const chain = [provider(model, { credentials: new CredentialPool(['sk-1', 'sk-2'], 'TEST_API_KEYS') })];
    const { timer, logger, run } = setUp();

    expect((await run(chain)).text).toBe('First.');
    timer.advance(59_999);
    expect((await run(chain)).text).toBe('Second.');
    timer.advance(1);
    expect((await run(chain)).text).toBe('Third.');

    expect(model.seen.map((turn) => turn.apiKey)).toEqual(['sk-1', 'sk-2', 'sk-2', 'sk-1']);
    expect(warnings(logger)).toContain(
      'primary (model-1): key 1 of 2 from TEST_API_KEYS is rate-limited; it rests for 60 s and the call is repeated with the next key',
    );
  });

  it('rests a key for a second at least, and 30 s when the provider names no time, while another key takes the call', async () => {
    const model = new FakeChatModel(
      turns.failure('rate_limited', 'HTTP 429', { retryAfterMs: 0 }),
      turns.failure('rate_limited', 'HTTP 429', { retryAfterMs: null }),
      turns.answer('Third key.'),
    );
    const chain = [provider(model, { credentials: new CredentialPool(['sk-1', 'sk-2', 'sk-3'], 'TEST_API_KEYS') })];
    const { logger, run } = setUp();

    expect((await run(chain)).text).toBe('Third key.');

    expect(model.seen.map((turn) => turn.apiKey)).toEqual(['sk-1', 'sk-2', 'sk-3']);
    expect(warnings(logger)).toEqual([
      'primary (model-1): key 1 of 3 from TEST_API_KEYS is rate-limited; it rests for 1 s and the call is repeated with the next key',
      'primary (model-1): key 2 of 3 from TEST_API_KEYS is rate-limited; it rests for 30 s and the call is repeated with the next key',
    ]);
  });

  it('hands the whole conversation to the next provider when one cannot be reached or answers 5xx', async () => {
    const search = new RecordingTool('web_search', () => 'sunny');
    const first = new FakeChatModel(
      turns.tools({ name: 'web_search', arguments: { query: 'weather' } }),
      turns.failure('server', 'HTTP 503'),
    );
    const second = new FakeChatModel(turns.answer('Sunny.'));
    const { logger, run } = setUp({ tools: [search] });

    const result = await run([provider(first), provider(second, { provider: 'backup', model: 'model-2', credentials: null })]);

    expect(result).toMatchObject({ text: 'Sunny.', answeredBy: 'backup (model-2)' });
    expect(search.calls).toHaveLength(1);
    expect(second.seen[0]!.messages).toEqual(first.seen[1]!.messages);
    expect(second.seen[0]!.apiKey).toBeNull();
    expect(warnings(logger)).toContain('primary (model-1) failed (HTTP 503); falling back to backup (model-2)');
  });

  it('keeps the fallback to the end of the run once it took over', async () => {
    const first = new FakeChatModel(turns.failure('unreachable', 'no connection'));
    const second = new FakeChatModel(turns.tools({ name: 'clarify' }), turns.answer('Done.'));

    await setUp({ tools: [new RecordingTool('clarify')] }).run([provider(first), provider(second, { provider: 'backup' })]);

    expect(first.seen).toHaveLength(1);
    expect(second.seen).toHaveLength(2);
  });

  it.each([
    [
      'a refused key',
      turns.failure('auth', 'HTTP 401: bad key', { status: 401 }),
      'The provider primary (model-1) failed: HTTP 401: bad key; check the key from TEST_API_KEY.',
    ],
    [
      'an unknown model',
      turns.failure('rejected', 'HTTP 404: no such model', { status: 404 }),
      'The provider primary (model-1) failed: HTTP 404: no such model; check that the model "model-1" exists there.',
    ],
    ['a bad request', turns.failure('rejected', 'HTTP 400: bad', { status: 400 }), 'The provider primary (model-1) failed: HTTP 400: bad.'],
  ])('ends the run at %s without trying a fallback', async (_case, failure, message) => {
    const backup = new FakeChatModel(turns.answer('never'));

    const error = await failureOf(setUp().run([provider(new FakeChatModel(failure)), provider(backup, { provider: 'backup' })]));

    expect(error.message).toBe(message);
    expect(backup.seen).toHaveLength(0);
  });

  it('tells a provider that needs a key where to set it', async () => {
    const model = new FakeChatModel(turns.failure('auth', 'HTTP 401: key required', { status: 401 }));

    const error = await failureOf(setUp().run([provider(model, { credentials: null })]));

    expect(error.message).toBe('The provider primary (model-1) failed: HTTP 401: key required; it needs a key: set TEST_API_KEY.');
  });

  it('never repeats a key the provider quotes in its error', async () => {
    const model = new FakeChatModel(turns.failure('auth', 'Incorrect API key provided: sk-secret', { status: 401 }));

    const error = await failureOf(setUp().run([provider(model, { credentials: new CredentialPool(['sk-secret'], 'TEST_API_KEY') })]));

    expect(error.message).not.toContain('sk-secret');
    expect(error.message).toContain('[key hidden]');
  });

  it('names every provider it tried, and those it could not, when all fail', async () => {
    const chain = [
      provider(new FakeChatModel(turns.failure('server', 'HTTP 500: boom'))),
      provider(new FakeChatModel(turns.failure('unreachable', 'no connection')), { provider: 'backup', model: 'model-2' }),
    ];

    const error = await failureOf(setUp().run(chain, {}, ['fallback "spare": it has no API key.']));

    expect(error.message).toBe(
      'Every provider failed: primary (model-1): HTTP 500: boom; backup (model-2): no connection. Not tried: fallback "spare": it has no API key.',
    );
  });
});

describe('RunAgentSession: the idle budget and cancellation', () => {
  /** A run whose model streams nothing until told, under an idle budget of 40 s. */
  async function stalledRun() {
    const model = new FakeChatModel(turns.stall());
    const { timer, run } = setUp();
    let settled = false;
    const running = run([provider(model)], { idleTimeoutMs: 40_000 });
    running.catch(() => undefined).finally(() => (settled = true));
    await settle();
    return { model, timer, running, settled: () => settled };
  }

  it('stops a model that streams nothing for the whole budget, and not a moment before', async () => {
    const { timer, running, settled } = await stalledRun();

    timer.advance(39_999);
    await settle();
    expect(settled()).toBe(false);
    timer.advance(1);
    const error = await failureOf(running);

    expect(error.reason).toBe('idle_timeout');
    expect(error.message).toBe(
      'idle timeout: no streamed token or tool call for 40 s while waiting for the model primary (model-1); ' +
        'the run was stopped (raise AGENT_CRON_TIMEOUT, or set it to 0 for no limit).',
    );
  });

  it('counts every streamed token as activity', async () => {
    const { model, timer, running, settled } = await stalledRun();

    for (let minute = 0; minute < 10; minute += 1) {
      timer.advance(30_000);
      model.stream('.');
      await settle();
    }
    expect(settled()).toBe(false);
    timer.advance(40_000);

    expect((await failureOf(running)).reason).toBe('idle_timeout');
  });

  it('stops a tool that hangs, names it, and aborts its signal', async () => {
    let toolSignal: AbortSignal | undefined;
    const hanging = new RecordingTool('terminal', (_args, { signal }) => {
      toolSignal = signal;
      return new Promise<string>(() => undefined);
    });
    const model = new FakeChatModel(turns.tools({ name: 'terminal', arguments: {} }));
    const { timer, run } = setUp({ tools: [hanging] });
    const running = run([provider(model)], { idleTimeoutMs: 5_000, toolsets: ['terminal'] });
    await settle();

    timer.advance(5_000);
    const error = await failureOf(running);

    expect(error.message).toContain('for 5 s while waiting for the tool "terminal"');
    expect(toolSignal?.aborted).toBe(true);
  });

  it('has no budget when the request sets none', async () => {
    const model = new FakeChatModel(turns.stall());
    const controller = new AbortController();
    const { timer, run } = setUp();
    const running = run([provider(model)], { idleTimeoutMs: null, signal: controller.signal });
    await settle();

    timer.advance(24 * 3_600_000);
    await settle();
    controller.abort();

    expect((await failureOf(running)).reason).toBe('aborted');
  });

  it('ends a run cancelled through its signal as aborted, saying what it waited for', async () => {
    const model = new FakeChatModel(turns.stall());
    const controller = new AbortController();
    const running = setUp().run([provider(model)], { signal: controller.signal });
    await settle();

    controller.abort();
    const error = await failureOf(running);

    expect(error.reason).toBe('aborted');
    expect(error.message).toBe('The run was cancelled while waiting for the model primary (model-1).');
  });

  it('does not start a run whose signal is already aborted', async () => {
    const model = new FakeChatModel(turns.answer('never'));
    const controller = new AbortController();
    controller.abort();

    const error = await failureOf(setUp().run([provider(model)], { signal: controller.signal }));

    expect(error.message).toBe('The run was cancelled before it started.');
    expect(model.seen).toHaveLength(0);
  });
});

/**
 * How many abort listeners the signals a run hands to its model calls and tool calls held at
 * most, each call having left one behind as the openai SDK does. Node prints
 * MaxListenersExceededWarning when one signal gets more than `defaultMaxListeners` (10). (Jest
 * gives each test file a copy of `process` that Node's own warnings never reach, so counting the
 * listeners is how a unit test sees it; the end-to-end test in chatTools reads stderr.)
 */
class ListenerCount {
  most = 0;

  leaveOne(signal: AbortSignal): void {
    signal.addEventListener('abort', () => undefined, { once: true });
    this.most = Math.max(this.most, getEventListeners(signal, 'abort').length);
  }
}

/** A model that leaves a listener on the signal of every call. */
class ListenerLeavingModel extends FakeChatModel {
  constructor(
    private readonly count: ListenerCount,
    ...script: FakeTurn[]
  ) {
    super(...script);
  }

  override streamTurn(request: ModelTurnRequest) {
    this.count.leaveOne(request.signal);
    return super.streamTurn(request);
  }
}

describe('RunAgentSession: abort listeners', () => {
  /** A tool that leaves a listener on its signal too, and notes how many the run's signal holds at each call. */
  function listenerLeavingTool(count: ListenerCount, runSignal: AbortSignal) {
    let mostOnRunSignal = 0;
    const tool = new RecordingTool('terminal', (_args, { signal }) => {
      count.leaveOne(signal);
      mostOnRunSignal = Math.max(mostOnRunSignal, getEventListeners(runSignal, 'abort').length);
      return 'ok';
    });
    return { tool, mostOnRunSignal: () => mostOnRunSignal };
  }

  it.each([
    ['40 tool calls in sequence', Array.from({ length: 40 }, () => turns.tools({ name: 'terminal' }))],
    ['40 tool calls in one turn', [turns.tools(...Array.from({ length: 40 }, (_, n) => ({ name: 'terminal', id: `call_${n}` })))]],
  ])("%s pile no listeners on one signal (no MaxListenersExceededWarning) and leave none on the run's", async (_case, script) => {
    const controller = new AbortController();
    const count = new ListenerCount();
    const { tool, mostOnRunSignal } = listenerLeavingTool(count, controller.signal);
    const model = new ListenerLeavingModel(count, ...script, turns.answer('Done.'));

    const result = await setUp({ tools: [tool], maxToolRounds: 50 }).run([provider(model)], {
      signal: controller.signal,
      toolsets: ['terminal'],
    });

    expect(result.text).toBe('Done.');
    expect(tool.calls).toHaveLength(40);
    expect(count.most).toBeLessThanOrEqual(defaultMaxListeners);
    expect(mostOnRunSignal()).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('still aborts the tool call under way when the run is cancelled', async () => {
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const hanging = new RecordingTool('terminal', (_args, { signal }) => {
      toolSignal = signal;
      return new Promise<string>(() => undefined);
    });
    const count = new ListenerCount();
    const model = new ListenerLeavingModel(
      count,
      ...Array.from({ length: 12 }, () => turns.tools({ name: 'clarify' })),
      turns.tools({ name: 'terminal' }),
    );
    const running = setUp({ tools: [hanging, new RecordingTool('clarify')] }).run([provider(model)], {
      signal: controller.signal,
      toolsets: ['terminal', 'clarify'],
    });
    for (let step = 0; step < 100 && toolSignal === undefined; step += 1) await settle();

    controller.abort();

    expect((await failureOf(running)).reason).toBe('aborted');
    expect(toolSignal?.aborted).toBe(true);
    expect(count.most).toBeLessThanOrEqual(defaultMaxListeners);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('RunAgentSession: usage and budgets', () => {
  const perTurn = { input_tokens: 1000, output_tokens: 200, cached_input_tokens: 400 };
  const looping = (count: number) => Array.from({ length: count }, (_, index) => turns.tools({ name: 'terminal', id: `call_${index}` }));
  const priced = () => ({ input_per_mtok: 2, output_per_mtok: 10, cached_input_per_mtok: 1 });

  function budgetRun(budget: AgentRunRequest['budget'], prices = true) {
    const model = new FakeChatModel(...looping(10));
    model.usage = perTurn;
    const tool = new RecordingTool('terminal');
    const timer = new ManualTimer();
    const counted: Array<{ provider: string; model: string; input: number; cost: number | null }> = [];
    const session = new RunAgentSession({ tools: new FixedToolCatalog([tool]), timer });
    const run = session.execute({
      request: sampleRunRequest({ toolsets: cronRunToolsets(), budget }),
      chain: [provider(model)],
      prices: prices ? priced : undefined,
      onTurnUsage: (provider, modelName, counts, cost) => counted.push({ provider, model: modelName, input: counts.input_tokens, cost }),
    });
    return { model, tool, run, counted };
  }

  it('sums every turn, counts the tool calls run, and prices the run', async () => {
    const model = new FakeChatModel(turns.tools({ name: 'terminal' }, { name: 'terminal', id: 'call_2' }), turns.answer('Done.'));
    model.usage = perTurn;
    const session = new RunAgentSession({ tools: new FixedToolCatalog([new RecordingTool('terminal')]), timer: new ManualTimer() });

    const result = await session.execute({
      request: sampleRunRequest({ toolsets: cronRunToolsets() }),
      chain: [provider(model)],
      prices: priced,
    });

    expect(result.usage).toEqual({ input_tokens: 2000, output_tokens: 400, cached_input_tokens: 800, model_turns: 2, tool_calls: 2 });
    // 1,200 uncached input at $2, 800 cached at $1, 400 output at $10, per million.
    expect(result.costUsd).toBeCloseTo((1200 * 2 + 800 * 1 + 400 * 10) / 1_000_000, 9);
  });

  it('has no cost for a model without a price, and tokens all the same', async () => {
    const model = new FakeChatModel(turns.answer('Hi.'));
    model.usage = perTurn;
    const session = new RunAgentSession({ tools: new FixedToolCatalog([]), timer: new ManualTimer() });

    const result = await session.execute({ request: sampleRunRequest(), chain: [provider(model)] });

    expect(result.costUsd).toBeNull();
    expect(result.usage?.input_tokens).toBe(1000);
  });

  it('stops before the next model turn once the turns are used up, without running the last turn’s tools', async () => {
    const { model, tool, run } = budgetRun({ max_turns: 3 });

    const error = await failureOf(run);

    expect(error.message).toBe('budget reached: 3 model turns of 3');
    expect(model.seen).toHaveLength(3);
    expect(tool.calls).toHaveLength(2);
    expect(error.spend?.usage).toEqual({
      input_tokens: 3000,
      output_tokens: 600,
      cached_input_tokens: 1200,
      model_turns: 3,
      tool_calls: 2,
    });
  });

  it('stops once the tokens reach the limit, in the words of the ledger', async () => {
    const { model, run } = budgetRun({ max_tokens: 3000 });

    const error = await failureOf(run);

    expect(error.message).toBe('budget reached: 3,600 tokens of 3,000');
    expect(model.seen).toHaveLength(3);
  });

  it('stops once the cost reaches the limit, and a cost limit holds only where the cost is known', async () => {
    const { run } = budgetRun({ max_cost: 0.01 });
    // Each turn: (600 × 2 + 400 × 1 + 200 × 10) / 1e6 = $0.0036.
    expect((await failureOf(run)).message).toBe('budget reached: $0.0108 of $0.01');

    const unpriced = budgetRun({ max_cost: 0.01, max_turns: 5 }, false);
    expect((await failureOf(unpriced.run)).message).toBe('budget reached: 5 model turns of 5');
  });

  it('tells each turn’s tokens and cost, for the metrics', async () => {
    const { run, counted } = budgetRun({ max_turns: 2 });
    await failureOf(run);

    expect(counted).toEqual([
      { provider: 'primary', model: 'model-1', input: 1000, cost: 0.0036 },
      { provider: 'primary', model: 'model-1', input: 1000, cost: 0.0036 },
    ]);
  });
});

describe('RunAgentSession: spans (docs/traces.md)', () => {
  it('makes a span per model call, with its tokens, and per tool call, both children of the run span current', async () => {
    const tracing = new RecordingTracing();
    const search = new RecordingTool('web_search', () => 'results');
    const model = new FakeChatModel(
      turns.tools({ id: 'call_1', name: 'web_search', arguments: {} }),
      turns.tools({ id: 'call_2', name: 'no_such_tool' }),
      turns.answer('Done.'),
    );
    model.usage = { input_tokens: 30, output_tokens: 4, cached_input_tokens: 10 };
    const session = new RunAgentSession({ tools: new FixedToolCatalog([search]), timer: new ManualTimer(), tracing });
    const run = tracing.start({ kind: 'cron_run', jobId: 'job', jobName: 'job', runId: 'job.1', slot: null });

    await run.within(() =>
      session.execute({ request: sampleRunRequest(), chain: [provider(model, { api: 'openai', endpoint: 'http://127.0.0.1:1/v1' })] }),
    );

    expect(tracing.spans.slice(1).map((span) => [span.what, span.parent, span.notes])).toEqual([
      [
        { kind: 'model_call', api: 'openai', provider: 'primary', model: 'model-1', endpoint: 'http://127.0.0.1:1/v1' },
        1,
        [{ usage: { inputTokens: 30, outputTokens: 4, cachedInputTokens: 10 } }],
      ],
      [{ kind: 'tool_call', tool: 'web_search', callId: 'call_1' }, 1, []],
      [expect.objectContaining({ kind: 'model_call' }), 1, [expect.objectContaining({ usage: expect.any(Object) })]],
      [{ kind: 'tool_call', tool: 'no_such_tool', callId: 'call_2' }, 1, [{ error: 'the tool "no_such_tool" answered with an error' }]],
      [expect.objectContaining({ kind: 'model_call' }), 1, expect.any(Array)],
    ]);
  });
});
