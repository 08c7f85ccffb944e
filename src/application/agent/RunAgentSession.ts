import type { CredentialPool } from '../../domain/agent/CredentialPool.js';
import {
  DEFAULT_MAX_TOOL_ROUNDS,
  everyProviderFailedMessage,
  idleTimeoutMessage,
  labelOf,
  roundLimitMessage,
  type ProviderLink,
} from '../../domain/agent/providerChain.js';
import {
  openingOf,
  parseToolArguments,
  toolErrorResult,
  type ModelTurn,
  type RequestedToolCall,
  type ToolCallResult,
  type TranscriptImage,
  type TranscriptMessage,
} from '../../domain/agent/transcript.js';
import { errorText } from '../../domain/errors.js';
import { budgetReached, costOf, NO_PRICES, priceOf, UsageTally, type PriceLookup, type TokenCounts } from '../../domain/runs/usage.js';
import { AgentRunError, type AgentRunRequest, type AgentRunResult, type RunSpend } from '../ports/AgentRunner.js';
import type { Logger } from '../ports/Logger.js';
import { NO_TRACING, type RunTracing } from '../ports/RunTracing.js';
import type { Timer } from '../ports/Timer.js';
import { IdleWatchdog } from './IdleWatchdog.js';
import { ProviderCalls, ProviderUnavailable } from './ProviderCalls.js';
import type { ProviderThrottle } from './ProviderThrottle.js';
import { askAboutImage, type TurnInput } from './imageQuestions.js';
import { TranscriptRecorder, type TranscriptSettings } from './TranscriptRecorder.js';
import { ModelCallError, type ChatModel } from './ports/ChatModel.js';
import { ToolInputError, type Tool, type ToolSpec } from './ports/Tool.js';
import type { ToolCatalog } from './ports/ToolCatalog.js';

/** One provider of a run's chain, resolved from the configuration. */
export interface ProviderTarget extends ProviderLink {
  /** The wire format at the provider's endpoint; loaded on first use (the SDKs are large). */
  chatModel: () => Promise<ChatModel>;
  /** The provider's keys; null for a provider that needs none. */
  credentials: CredentialPool | null;
  /** Where a key for this provider is set, for error messages: `OPENAI_API_KEY or providers.openai.api_keys`. */
  keyHelp: string;
  /** Why the model takes no images, when the configuration says so; the vision tool then asks it nothing. */
  noImages?: string;
  /** The provider's throttle, shared by every session of the process; without one the session keeps its own. */
  throttle?: ProviderThrottle;
  /** The wire format the provider speaks (`openai`, `anthropic`) and where, for the model call's span (docs/traces.md). */
  api?: string;
  endpoint?: string;
}

export interface RunAgentSessionInput {
  request: AgentRunRequest;
  /** The provider to use, then its fallbacks in order; at least one. */
  chain: readonly ProviderTarget[];
  /** Configured fallbacks that could not be used, one sentence each; named when every provider fails. */
  skippedFallbacks?: readonly string[];
  /** The configured prices (`models.prices`), for the run's cost and its cost limit; absent: none. */
  prices?: PriceLookup;
  /** Told each model turn's tokens and their cost (null: unpriced), for `/metrics`. */
  onTurnUsage?: (provider: string, model: string, counts: TokenCounts, costUsd: number | null) => void;
}

export interface RunAgentSessionDependencies {
  tools: ToolCatalog;
  /** The idle budget's waits, and the monotonic time of key cool-downs. */
  timer: Timer;
  logger?: Logger | null;
  /** Tool-call rounds after which a run that still calls tools is stopped; default 25. */
  maxToolRounds?: number;
  /** Rest of a rate-limited key, while another key takes the call, when the provider names none; default 30 s. */
  defaultCoolDownMs?: number;
  /** The jitter of rate-limit waits for targets without a throttle of their own; default Math.random. */
  random?: () => number;
  /** With it, the session keeps a transcript of its turns and tool calls (AgentRunResult.transcript, AgentRunError.transcript). */
  transcript?: TranscriptSettings;
  /** A span per model call and per tool call, in the trace of the run under way (docs/traces.md); default none. */
  tracing?: RunTracing;
}

/**
 * One agent session: the context as messages, then model turns and tool calls in a loop until
 * the model answers without calling a tool. Each model turn streams.
 *
 * - Tools are the catalog's tools for the request's toolsets. A call with malformed arguments,
 *   for an unknown tool, or refused with ToolInputError gets an error result the model can act
 *   on; the run goes on.
 * - Idle budget: every streamed event and every tool call's start and end is activity;
 *   `idleTimeoutMs` without any stops the run with `idle timeout: …`.
 * - After a failed model call the provider chain's table decides (src/domain/agent/
 *   providerChain.ts, applied by ProviderCalls): a 429 rests the key and repeats the call at
 *   once with the next key, or, with no other key, waits on the provider's throttle and repeats
 *   it; a provider that cannot be reached, answers 5xx or keeps a call waiting too long hands the
 *   run, conversation included, to the next target, which keeps it to the end; refused keys,
 *   other 4xx, idle timeouts, cancellation and the round bound end the run.
 *
 * Throws AgentRunError: `idle_timeout`, `aborted`, or `failed` naming what failed.
 */
export class RunAgentSession {
  constructor(private readonly dependencies: RunAgentSessionDependencies) {}

  execute(input: RunAgentSessionInput): Promise<AgentRunResult> {
    if (input.chain.length === 0) throw new TypeError('RunAgentSession needs at least one provider.');
    return new Session(this.dependencies, input).run();
  }
}

/** One run's state: its conversation, its idle watchdog, and how far down the chain it is. */
class Session {
  private readonly controller = new AbortController();
  private readonly watchdog: IdleWatchdog;
  private readonly calls: ProviderCalls;
  private tools = new Map<string, Tool>();
  private toolSpecs: ToolSpec[] = [];
  private readonly system: string | null;
  private readonly transcript: TranscriptMessage[];
  private readonly maxToolRounds: number;
  private readonly request: AgentRunRequest;
  private targetIndex = 0;
  private readonly failures: Array<{ link: ProviderLink; problem: string }> = [];
  /** What the run is waiting for, so that an idle timeout can say. */
  private waitingFor = 'the model';
  private readonly record: TranscriptRecorder | null;
  /** The tokens of every model turn so far, per provider and model, and the tool calls run. */
  private readonly tally = new UsageTally();

  constructor(
    private readonly dependencies: RunAgentSessionDependencies,
    private readonly input: RunAgentSessionInput,
  ) {
    this.request = input.request;
    this.watchdog = new IdleWatchdog(this.request.idleTimeoutMs, () => this.controller.abort(), dependencies.timer);
    this.calls = new ProviderCalls(dependencies, this.controller.signal, this.watchdog);
    const opening = openingOf(this.request.context, this.request.conversation);
    this.system = opening.system;
    this.transcript = opening.messages;
    this.maxToolRounds = dependencies.maxToolRounds ?? DEFAULT_MAX_TOOL_ROUNDS;
    this.record = dependencies.transcript ? new TranscriptRecorder(dependencies.transcript) : null;
  }

  async run(): Promise<AgentRunResult> {
    const outerSignal = this.request.signal;
    if (outerSignal?.aborted) throw new AgentRunError('aborted', 'The run was cancelled before it started.');
    const offered = await this.dependencies.tools.toolsFor(this.request.toolsets);
    this.tools = new Map(offered.map((tool) => [tool.spec.name, tool]));
    this.toolSpecs = offered.map((tool) => tool.spec);
    const onAbort = () => this.controller.abort();
    outerSignal?.addEventListener('abort', onAbort, { once: true });
    this.watchdog.start();
    try {
      return await this.loop();
    } catch (error) {
      const explained = this.explain(error);
      // A run that failed keeps what it did so far.
      if (explained instanceof AgentRunError && this.record) explained.transcript ??= this.record.entries;
      // What the run spent until it failed goes with its error, for the ledger.
      if (explained instanceof AgentRunError) explained.spend = this.spend();
      throw explained;
    } finally {
      this.watchdog.stop();
      outerSignal?.removeEventListener('abort', onAbort);
    }
  }

  private async loop(): Promise<AgentRunResult> {
    for (let round = 0; ; round += 1) {
      const turnStartedAt = this.record?.now() ?? '';
      const { turn, target } = await this.nextTurn();
      this.record?.modelTurn(turnStartedAt, labelOf(target), turn);
      this.grew();
      this.countTurn(target, turn);
      this.transcript.push({ role: 'assistant', text: turn.text, toolCalls: turn.toolCalls });
      if (turn.toolCalls.length === 0) {
        return {
          text: turn.text,
          answeredBy: labelOf(target),
          ...this.spend(),
          ...(this.record ? { transcript: this.record.entries } : {}),
        };
      }
      if (round >= this.maxToolRounds) {
        const asked = turn.toolCalls.map((call) => call.name);
        throw new AgentRunError('failed', roundLimitMessage(this.maxToolRounds, target, asked));
      }
      // A run that reached its budget stops here, at a model turn's end: its tools are not run.
      const spent = this.spend();
      const reached = budgetReached(this.request.budget ?? {}, spent.usage, spent.costUsd);
      if (reached !== null) throw new AgentRunError('failed', reached);
      const results: ToolCallResult[] = [];
      for (const call of turn.toolCalls) {
        const callStartedAt = this.record?.now() ?? '';
        const result = await this.tracing.step({ kind: 'tool_call', tool: call.name, callId: call.id }, async (span) => {
          const done = await this.callTool(call);
          if (done.isError) span.note({ error: `the tool "${call.name}" answered with an error` });
          return done;
        });
        this.record?.toolCall(callStartedAt, call, result);
        this.grew();
        results.push(result);
      }
      this.tally.addToolCalls(results.length);
      this.transcript.push({ role: 'tool', results });
    }
  }

  /** Tells the request's listener of the transcript so far. */
  private grew(): void {
    if (this.record) this.request.onTranscript?.(this.record.entries);
  }

  /** What the run has spent so far. */
  private spend(): RunSpend {
    return { usage: this.tally.total(), costUsd: costOf(this.tally.byModel(), this.input.prices ?? NO_PRICES) };
  }

  private countTurn(target: ProviderTarget, turn: ModelTurn): void {
    this.tally.addTurn(target.provider, target.model, turn.usage ?? null);
    if (!turn.usage || !this.input.onTurnUsage) return;
    const price = (this.input.prices ?? NO_PRICES)(target.provider, target.model);
    this.input.onTurnUsage(target.provider, target.model, turn.usage, price ? priceOf(turn.usage, price) : null);
  }

  /** The next model turn from the current target, moving down the chain while providers fail. */
  private async nextTurn(): Promise<{ turn: ModelTurn; target: ProviderTarget }> {
    const { chain } = this.input;
    while (this.targetIndex < chain.length) {
      const target = chain[this.targetIndex]!;
      try {
        return { turn: await this.turnWith(target), target };
      } catch (error) {
        if (!(error instanceof ProviderUnavailable)) throw error;
        this.failures.push({ link: target, problem: error.message });
        const next = chain[this.targetIndex + 1];
        if (next) this.dependencies.logger?.warn(`${labelOf(target)} failed (${error.message}); falling back to ${labelOf(next)}`);
        this.targetIndex += 1;
      }
    }
    // Each of them was away, overloaded or rate limited: a later try may find one back.
    throw new AgentRunError('failed', everyProviderFailedMessage(this.failures, this.input.skippedFallbacks ?? []), { transient: true });
  }

  private async turnWith(target: ProviderTarget, input?: TurnInput): Promise<ModelTurn> {
    const turn = input ?? { system: this.system, messages: this.transcript, tools: this.toolSpecs, streamsText: true };
    const model = await target.chatModel();
    this.waitingFor = `the model ${labelOf(target)}`;
    const step = {
      kind: 'model_call',
      api: target.api ?? target.provider,
      provider: target.provider,
      model: target.model,
      endpoint: target.endpoint,
    } as const;
    // Each try is a model call of its own, and a span of its own (a key rate-limited, then the next).
    return this.calls.call(target, (key, onResponseStarted) =>
      this.tracing.step(step, async (span) => {
        const answered = await withCallSignal(this.controller.signal, (signal) =>
          model.streamTurn({
            model: target.model,
            apiKey: key?.value ?? null,
            system: turn.system,
            messages: turn.messages,
            tools: turn.tools,
            signal,
            onActivity: () => this.watchdog.touch(),
            onText: (delta) => (turn.streamsText ? this.request.onText?.(delta) : undefined),
            onResponseStarted,
          }),
        );
        const usage = answered.usage;
        if (usage)
          span.note({
            usage: { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, cachedInputTokens: usage.cached_input_tokens },
          });
        return answered;
      }),
    );
  }

  private get tracing(): RunTracing {
    return this.dependencies.tracing ?? NO_TRACING;
  }

  private async callTool(call: RequestedToolCall): Promise<ToolCallResult> {
    const tool = this.tools.get(call.name);
    if (!tool) {
      const available = [...this.tools.keys()].join(', ') || 'none';
      return toolErrorResult(call, `unknown tool "${call.name}"; the tools available are: ${available}`);
    }
    const parsed = parseToolArguments(call.arguments);
    if (!parsed.ok) {
      return toolErrorResult(call, `${parsed.problem}; call "${call.name}" again with a JSON object that matches its parameters`);
    }
    this.throwIfAborted();
    this.waitingFor = `the tool "${call.name}"`;
    this.watchdog.touch();
    try {
      const content = await withCallSignal(this.controller.signal, (signal) => {
        const context = {
          signal,
          unattended: this.request.unattended,
          privateNetworks: this.request.privateNetworks ?? true,
          environment: this.request.environment,
          workingDirectory: this.request.workingDirectory ?? null,
          origin: this.request.origin ?? null,
          askAboutImage: (image: TranscriptImage, question: string) => {
            const target = this.input.chain[Math.min(this.targetIndex, this.input.chain.length - 1)]!;
            const stopped = () => this.controller.signal.aborted;
            // The image call is a model turn of the run: its tokens count and cost like the others.
            const ask = async (input: TurnInput) => {
              const turn = await this.turnWith(target, input);
              this.countTurn(target, turn);
              return turn;
            };
            return askAboutImage({ target, image, question, stopped, ask });
          },
        };
        return untilAborted(tool.call(parsed.args, context), signal);
      });
      return { callId: call.id, name: call.name, content, isError: false };
    } catch (error) {
      if (this.controller.signal.aborted) throw error;
      if (error instanceof ToolInputError) return toolErrorResult(call, error.message);
      // Tools report failures as results; one that throws anyway does not end the run.
      return toolErrorResult(call, `the tool failed: ${errorText(error)}`);
    } finally {
      this.watchdog.touch();
    }
  }

  private throwIfAborted(): void {
    if (this.controller.signal.aborted) throw new ModelCallError('aborted', 'the run was stopped');
  }

  /** The error a run ends with: an idle timeout or a cancellation wins over how the call then failed. */
  private explain(error: unknown): unknown {
    if (this.watchdog.fired) {
      return new AgentRunError('idle_timeout', idleTimeoutMessage(this.request.idleTimeoutMs ?? 0, this.waitingFor), { cause: error });
    }
    if (this.request.signal?.aborted) {
      return new AgentRunError('aborted', `The run was cancelled while waiting for ${this.waitingFor}.`, { cause: error });
    }
    return error;
  }
}

/**
 * Runs one model call or tool call with a signal of its own, aborted with the run's through one
 * listener that is removed when the call ends. Whatever the call leaves on its signal (the
 * openai SDK adds a listener per request and never removes it) is dropped with that signal,
 * instead of piling up on the run's, where Node warns of a leak (MaxListenersExceededWarning)
 * from the eleventh on: a run makes up to 25 rounds, each a model call and its tool calls.
 */
async function withCallSignal<T>(runSignal: AbortSignal, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const abort = () => controller.abort(runSignal.reason);
  if (runSignal.aborted) abort();
  else runSignal.addEventListener('abort', abort, { once: true });
  try {
    return await call(controller.signal);
  } finally {
    runSignal.removeEventListener('abort', abort);
  }
}

/** Settles with `promise`, or rejects as soon as `signal` aborts: a tool that ignores it cannot hold a run. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new ModelCallError('aborted', 'the run was stopped'));
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
