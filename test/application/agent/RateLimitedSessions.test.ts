import { ProviderThrottle } from '../../../src/application/agent/ProviderThrottle.js';
import { RunAgentSession, type ProviderTarget } from '../../../src/application/agent/RunAgentSession.js';
import { ModelCallError, type ChatModel, type ModelTurnRequest } from '../../../src/application/agent/ports/ChatModel.js';
import type { AgentRunRequest, AgentRunResult } from '../../../src/application/ports/AgentRunner.js';
import { CredentialPool } from '../../../src/domain/agent/CredentialPool.js';
import type { ModelTurn } from '../../../src/domain/agent/transcript.js';
import { failureOf, sampleRunRequest } from '../../support/agentRuns.js';
import { FakeChatModel, turns } from '../../support/fakes/FakeChatModel.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { FixedToolCatalog } from '../../support/scriptedTools.js';
import { seededRandom } from '../../support/seededRandom.js';

/*
 * Many sessions on one rate-limited provider, sharing its throttle as the sessions of one
 * process do (ConfiguredAgentRunner keeps one per provider): the shared Retry-After, the
 * back-off, cancellation, the bound of a call's wait, and the adaptive concurrency. Time is a
 * ManualTimer moved in small steps, the jitter a seeded generator.
 */

/** Lets every session take the steps that need no time. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const HTTP_429 = 'fake://provider answered HTTP 429 (rate-limited): slow down';

function rateLimited(retryAfterMs: number | null): ModelCallError {
  return new ModelCallError('rate_limited', HTTP_429, { status: 429, retryAfterMs });
}

function answered(request: ModelTurnRequest): ModelTurn {
  request.onResponseStarted?.();
  request.onActivity();
  request.onText('ok');
  return { text: 'ok', toolCalls: [] };
}

/** A model whose every call is answered by `reply(n)` (1-based), at once; it records when each call came. */
class RecordingModel implements ChatModel {
  readonly endpoint = 'fake://provider';
  readonly callTimes: number[] = [];

  constructor(
    private readonly timer: ManualTimer,
    private readonly reply: (call: number) => ModelCallError | 'ok',
  ) {}

  async streamTurn(request: ModelTurnRequest): Promise<ModelTurn> {
    const reply = this.reply(this.callTimes.push(this.timer.monotonicNow()));
    if (reply !== 'ok') throw reply;
    return answered(request);
  }
}

/**
 * A model that serves `limit` calls at once, each for a second, and refuses any call beyond
 * with a 429 (without Retry-After) after 50 ms, as a loaded provider does. It records the most
 * calls it had in flight when a call arrived after its first refusal.
 */
class ConcurrencyLimitedModel implements ChatModel {
  readonly endpoint = 'fake://limited';
  active = 0;
  refusals = 0;
  peakAfterRefusal = 0;
  answers = 0;
  private serving = 0;

  constructor(
    private readonly timer: ManualTimer,
    private readonly limit: number,
  ) {}

  async streamTurn(request: ModelTurnRequest): Promise<ModelTurn> {
    this.active += 1;
    if (this.refusals > 0) this.peakAfterRefusal = Math.max(this.peakAfterRefusal, this.active);
    try {
      if (this.serving >= this.limit) {
        await this.timer.wait(50, request.signal);
        this.refusals += 1;
        throw rateLimited(null);
      }
      this.serving += 1;
      try {
        request.onResponseStarted?.();
        await this.timer.wait(1_000, request.signal);
        this.answers += 1;
        return answered(request);
      } finally {
        this.serving -= 1;
      }
    } finally {
      this.active -= 1;
    }
  }
}

function setUp(seed = 1) {
  const timer = new ManualTimer();
  const logger = new RecordingLogger();
  const throttle = new ProviderThrottle({ name: 'primary', timer, random: seededRandom(seed), logger });
  const session = new RunAgentSession({ tools: new FixedToolCatalog([]), timer, logger, random: seededRandom(seed + 1) });
  const target = (model: ChatModel, overrides: Partial<ProviderTarget> = {}): ProviderTarget => ({
    provider: 'primary',
    model: 'model-1',
    chatModel: async () => model,
    credentials: new CredentialPool(['sk-1'], 'TEST_API_KEY'),
    keyHelp: 'TEST_API_KEY',
    throttle,
    ...overrides,
  });
  /** Starts a run; its outcome is kept, so that a failing run is no unhandled rejection. */
  const start = (chain: ProviderTarget[], request: Partial<AgentRunRequest> = {}) => {
    const run = {
      result: null as AgentRunResult | null,
      error: null as unknown,
      done: false,
      promise: null as unknown as Promise<AgentRunResult>,
    };
    run.promise = session.execute({ request: sampleRunRequest(request), chain });
    run.promise.then(
      (result) => Object.assign(run, { result, done: true }),
      (error: unknown) => Object.assign(run, { error, done: true }),
    );
    return run;
  };
  /** Moves time on in steps of `stepMs` until `done`, at most `maxMs`. */
  const until = async (done: () => boolean, stepMs = 10, maxMs = 900_000) => {
    for (let moved = 0; !done(); moved += stepMs) {
      if (moved > maxMs) throw new Error(`not done after ${maxMs} ms`);
      timer.advance(stepMs);
      await settle();
    }
  };
  /** Moves time on by `ms` in steps of `stepMs`. */
  const pass = async (ms: number, stepMs = 100) => {
    for (let moved = 0; moved < ms; moved += stepMs) {
      timer.advance(stepMs);
      await settle();
    }
  };
  const warnings = () => logger.entries.filter((entry) => entry.level === 'warn').map((entry) => entry.message);
  return { timer, logger, throttle, target, start, until, pass, warnings };
}

describe('sessions on a rate-limited provider: the shared Retry-After', () => {
  it('keeps 50 sessions from calling until the Retry-After one of them got, then lets them go spread out', async () => {
    const { timer, target, start, until, warnings } = setUp();
    const model = new RecordingModel(timer, (call) => (call === 1 ? rateLimited(7_000) : 'ok'));
    const first = start([target(model)]);
    await settle();
    expect(model.callTimes).toEqual([0]);

    timer.advance(1_000);
    const others = Array.from({ length: 49 }, () => start([target(model)]));
    await until(() => timer.monotonicNow() >= 6_990);
    expect(model.callTimes).toEqual([0]);

    const runs = [first, ...others];
    await until(() => runs.every((run) => run.done));

    expect(runs.map((run) => run.result?.text)).toEqual(runs.map(() => 'ok'));
    const later = model.callTimes.slice(1);
    expect(later).toHaveLength(50);
    expect(Math.min(...later)).toBeGreaterThanOrEqual(7_000);
    // Spread over half the closure after it opens (3.5 s), in the 10 ms steps the test moves time in.
    expect(Math.max(...later)).toBeLessThanOrEqual(7_000 + 3_500 + 10);
    expect(new Set(later).size).toBeGreaterThan(25);
    expect(warnings().filter((message) => message.includes('Retry-After'))).toEqual([
      'primary is rate-limiting (HTTP 429): every call to it waits 7 s as its Retry-After asks, then they go again spread over 3.5 s',
    ]);
  });

  it('with several keys, rotates first, and holds the provider only until its first key is usable again', async () => {
    const { timer, target, start, until } = setUp();
    const model = new FakeChatModel(
      turns.failure('rate_limited', HTTP_429, { retryAfterMs: 5_000 }),
      turns.failure('rate_limited', HTTP_429, { retryAfterMs: 60_000 }),
      turns.answer('Back on the first key.'),
    );
    const credentials = new CredentialPool(['sk-1', 'sk-2'], 'TEST_API_KEYS');

    const run = start([target(model, { credentials })]);
    await until(() => run.done);

    expect(run.result?.text).toBe('Back on the first key.');
    expect(model.seen.map((turn) => turn.apiKey)).toEqual(['sk-1', 'sk-2', 'sk-1']);
    expect(timer.monotonicNow()).toBeGreaterThanOrEqual(5_000);
    expect(timer.monotonicNow()).toBeLessThan(5_000 + 2_500 + 10);
  });

  it('does not let the idle budget run out while a session waits on purpose', async () => {
    const { timer, target, start, until } = setUp();
    const model = new RecordingModel(timer, (call) => (call === 1 ? rateLimited(60_000) : 'ok'));

    const run = start([target(model)], { idleTimeoutMs: 5_000 });
    await until(() => run.done, 100);

    expect(run.result?.text).toBe('ok');
    expect(model.callTimes).toHaveLength(2);
  });

  it('ends the wait of a cancelled run at once', async () => {
    const { throttle, target, start } = setUp();
    const model = new RecordingModel(new ManualTimer(), () => rateLimited(60_000));
    const cancel = new AbortController();

    const run = start([target(model)], { signal: cancel.signal });
    await settle();
    cancel.abort();
    const error = await failureOf(run.promise);

    expect(error.reason).toBe('aborted');
    expect(model.callTimes).toHaveLength(1);
    expect(throttle.load.inFlight).toBe(0);
  });

  it('ends at once the wait of a cancelled run queued for a place in flight, and the others go on', async () => {
    const { throttle, target, start, until, pass } = setUp();
    const holding = start([target(new FakeChatModel(turns.stall()))], { idleTimeoutMs: null });
    await settle();
    // Refused while the provider serves one call: one call at a time from then on.
    const limited = new RecordingModel(new ManualTimer(), (call) => (call === 1 ? rateLimited(null) : 'ok'));
    const cancel = new AbortController();
    const queued = start([target(limited)], { signal: cancel.signal });
    await until(() => throttle.load.limit === 1);
    await pass(2_000);
    expect(limited.callTimes).toHaveLength(1);

    cancel.abort();
    const error = await failureOf(queued.promise);

    expect(error.reason).toBe('aborted');
    expect(holding.done).toBe(false);
    expect(throttle.load).toEqual({ inFlight: 1, limit: 1 });
  });
});

describe('sessions on a rate-limited provider: the back-off', () => {
  it('repeats a call refused without Retry-After after 1 s, doubling, ±50 %, at most 60 s', async () => {
    const { timer, target, start, until } = setUp(11);
    const model = new RecordingModel(timer, (call) => (call <= 9 ? rateLimited(null) : 'ok'));

    const run = start([target(model)]);
    await until(() => run.done, 10);

    expect(run.result?.text).toBe('ok');
    const gaps = model.callTimes.slice(1).map((time, index) => time - model.callTimes[index]!);
    gaps.forEach((gap, index) => {
      const base = Math.min(60_000, 1_000 * 2 ** index);
      expect(gap).toBeGreaterThanOrEqual(base / 2);
      expect(gap).toBeLessThanOrEqual(Math.min(60_000, base * 1.5) + 10);
    });
  });

  it('gives up after 10 minutes of waiting in all, saying so, and the fallback takes over', async () => {
    const { timer, target, start, until, warnings } = setUp();
    const refusing = new RecordingModel(timer, () => rateLimited(null));
    const backup = new FakeChatModel(turns.answer('From the backup.'));

    const run = start([target(refusing), target(backup, { provider: 'backup', credentials: null, throttle: undefined })]);
    await until(() => run.done, 100);

    expect(run.result).toMatchObject({ text: 'From the backup.', answeredBy: 'backup (model-1)' });
    expect(timer.monotonicNow()).toBeLessThanOrEqual(600_000 + 100);
    expect(warnings().at(-1)).toMatch(
      /^primary \(model-1\) failed \(rate-limited: fake:\/\/provider answered HTTP 429 \(rate-limited\): slow down; a call waits at most 600 s for a rate-limited provider and this one had waited \d+ s\); falling back to backup \(model-1\)$/,
    );
  });

  it('does not wait for a Retry-After longer than a call waits: the run fails at once, saying why', async () => {
    const { target, start } = setUp();
    const model = new RecordingModel(new ManualTimer(), () => rateLimited(3_600_000));

    const run = start([target(model, { credentials: null })]);
    const error = await failureOf(run.promise);

    expect(error.message).toBe(
      'The provider primary (model-1) failed: rate-limited: primary asks every call to wait 3600 s (Retry-After); ' +
        'a call waits at most 600 s for a rate-limited provider.',
    );
  });
});

describe('sessions on a rate-limited provider: the adaptive concurrency', () => {
  it.each([
    [20, 400],
    [100, 1_000],
  ])(
    'a model serving %i calls at once and refusing more, facing %i sessions: every session answers, and after the first refusals no more than 10 % over are in flight',
    async (limit, sessions) => {
      const { timer, throttle, target, start, until } = setUp();
      const model = new ConcurrencyLimitedModel(timer, limit);

      const runs = Array.from({ length: sessions }, () => start([target(model)]));
      await until(() => runs.every((run) => run.done), 10);

      expect(runs.filter((run) => run.result?.text !== 'ok')).toEqual([]);
      expect(model.answers).toBe(sessions);
      expect(model.refusals).toBeGreaterThan(0);
      expect(model.peakAfterRefusal).toBeLessThanOrEqual(limit * 1.1 + 1);
      expect(throttle.load.inFlight).toBe(0);
    },
  );
});
