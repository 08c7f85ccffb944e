import { AgentRunError, type AgentRunRequest, type AgentRunResult } from '../../application/ports/AgentRunner.js';
import type { Logger } from '../../application/ports/Logger.js';
import { ToolInputError, type Tool, type ToolCatalog, type ToolSpec } from '../tools/Tool.js';
import {
  ModelCallError,
  parseToolArguments,
  systemText,
  type ChatModel,
  type ModelTurn,
  type RequestedToolCall,
  type ToolCallResult,
  type TranscriptMessage,
} from './ChatModel.js';
import type { CredentialPool, PooledKey } from './CredentialPool.js';
import { IdleWatchdog } from './IdleWatchdog.js';
import { errorText } from '../../domain/errors.js';

/** Spec rule 8 leaves the rounds open; 25 lets a model work through a real task and stops a loop. */
export const DEFAULT_MAX_TOOL_ROUNDS = 25;
/** How long a rate-limited key rests when the provider does not say (no `Retry-After`). */
export const DEFAULT_RATE_LIMIT_COOL_DOWN_MS = 30_000;
/** A `Retry-After: 0` must not make the same key hammer the provider. */
const MIN_COOL_DOWN_MS = 1_000;

/** One provider of a run's chain, resolved from the configuration. */
export interface LlmProviderTarget {
  /** The provider's name in the configuration, e.g. `openai`, `openrouter`. */
  provider: string;
  model: string;
  /** The wire format at the provider's endpoint; loaded on first use (the SDKs are large). */
  chatModel: () => Promise<ChatModel>;
  /** The provider's keys; null for a provider that needs none. */
  credentials: CredentialPool | null;
  /** Where a key for this provider is set, for error messages: `OPENAI_API_KEY or providers.openai.api_keys`. */
  keyHelp: string;
}

export interface LlmAgentRunnerOptions {
  /** The provider to use, then its fallbacks in order (rule 8); at least one. */
  targets: readonly LlmProviderTarget[];
  tools: ToolCatalog;
  /** Tool-call rounds after which a run that still calls tools is stopped; default 25. */
  maxToolRounds?: number;
  logger?: Logger | null;
  /** Configured fallbacks that could not be used, one sentence each; named when every provider fails. */
  skippedFallbacks?: readonly string[];
  /** Rest of a rate-limited key when the provider names none; default 30 s. */
  defaultCoolDownMs?: number;
}

/**
 * Runs an LLM agent session: the context as messages, then model turns and tool calls in a loop
 * until the model answers without calling a tool (rules 1 and 4). Each model turn streams.
 *
 * - Tools are the catalog's tools for the request's toolsets. A call with malformed arguments,
 *   for an unknown tool, or refused with ToolInputError gets an error result the model can act
 *   on; the run goes on.
 * - Idle budget (spec "Limits"): every streamed event and every tool call's start and end is
 *   activity; `idleTimeoutMs` without any stops the run with `idle timeout: …`.
 * - Keys (rule 8): a 429 rests the key until its `Retry-After` and the call is repeated at once
 *   with the next key; when every key rests, the provider counts as failed.
 * - Fallbacks (rule 8): a provider that cannot be reached, answers 5xx or is rate-limited on
 *   every key hands the run, conversation included, to the next target, which keeps it to the
 *   end. Refused keys, other 4xx, idle timeouts, cancellation and the round bound end the run.
 *
 * Throws AgentRunError: `idle_timeout`, `aborted`, or `failed` naming what failed.
 */
export class LlmAgentRunner {
  constructor(private readonly options: LlmAgentRunnerOptions) {
    if (options.targets.length === 0) throw new TypeError('LlmAgentRunner needs at least one provider.');
  }

  run(request: AgentRunRequest): Promise<AgentRunResult> {
    return new LlmSession(this.options, request).run();
  }
}

/** A provider that cannot serve the run right now: the next fallback may. */
class ProviderUnavailable extends Error {}

/** One run's state: its conversation, its idle watchdog, and how far down the chain it is. */
class LlmSession {
  private readonly controller = new AbortController();
  private readonly watchdog: IdleWatchdog;
  private readonly tools: Map<string, Tool>;
  private readonly toolSpecs: ToolSpec[];
  private readonly system: string | null;
  private readonly transcript: TranscriptMessage[];
  private readonly maxToolRounds: number;
  private targetIndex = 0;
  private readonly failures: Array<{ target: LlmProviderTarget; problem: string }> = [];
  /** What the run is waiting for, so that an idle timeout can say. */
  private waitingFor = 'the model';

  constructor(
    private readonly options: LlmAgentRunnerOptions,
    private readonly request: AgentRunRequest,
  ) {
    this.watchdog = new IdleWatchdog(request.idleTimeoutMs, () => this.controller.abort());
    const offered = options.tools.toolsFor(request.toolsets);
    this.tools = new Map(offered.map((tool) => [tool.spec.name, tool]));
    this.toolSpecs = [...this.tools.values()].map((tool) => tool.spec);
    this.system = systemText(request.context.system);
    this.transcript = [
      ...request.context.skills.map((skill): TranscriptMessage => ({
        role: 'user',
        text: `# Skill: ${skill.name}\n\n${skill.content.trimEnd()}`,
      })),
      ...(request.conversation ?? []).map((turn): TranscriptMessage =>
        turn.role === 'user' ? { role: 'user', text: turn.content } : { role: 'assistant', text: turn.content, toolCalls: [] },
      ),
      { role: 'user', text: request.context.task },
    ];
    this.maxToolRounds = options.maxToolRounds ?? DEFAULT_MAX_TOOL_ROUNDS;
  }

  async run(): Promise<AgentRunResult> {
    const outerSignal = this.request.signal;
    if (outerSignal?.aborted) throw new AgentRunError('aborted', 'The run was cancelled before it started.');
    const onAbort = () => this.controller.abort();
    outerSignal?.addEventListener('abort', onAbort, { once: true });
    this.watchdog.start();
    try {
      return await this.loop();
    } catch (error) {
      throw this.explain(error);
    } finally {
      this.watchdog.stop();
      outerSignal?.removeEventListener('abort', onAbort);
    }
  }

  private async loop(): Promise<AgentRunResult> {
    for (let round = 0; ; round += 1) {
      const { turn, target } = await this.nextTurn();
      this.transcript.push({ role: 'assistant', text: turn.text, toolCalls: turn.toolCalls });
      if (turn.toolCalls.length === 0) return { text: turn.text, answeredBy: labelOf(target) };
      if (round >= this.maxToolRounds) {
        const asked = [...new Set(turn.toolCalls.map((call) => call.name))].join(', ');
        throw new AgentRunError(
          'failed',
          `stopped after ${this.maxToolRounds} tool-call rounds without a final answer: ${labelOf(target)} still ` +
            `asked for ${asked}; make the prompt say when the task is done, or split it into smaller jobs.`,
        );
      }
      const results: ToolCallResult[] = [];
      for (const call of turn.toolCalls) results.push(await this.callTool(call));
      this.transcript.push({ role: 'tool', results });
    }
  }

  /** The next model turn from the current target, moving down the chain while providers fail. */
  private async nextTurn(): Promise<{ turn: ModelTurn; target: LlmProviderTarget }> {
    const { targets } = this.options;
    while (this.targetIndex < targets.length) {
      const target = targets[this.targetIndex]!;
      try {
        return { turn: await this.turnWith(target), target };
      } catch (error) {
        if (!(error instanceof ProviderUnavailable)) throw error;
        this.failures.push({ target, problem: error.message });
        const next = targets[this.targetIndex + 1];
        if (next) this.options.logger?.warn(`${labelOf(target)} failed (${error.message}); falling back to ${labelOf(next)}`);
        this.targetIndex += 1;
      }
    }
    throw this.everyProviderFailed();
  }

  private async turnWith(target: LlmProviderTarget): Promise<ModelTurn> {
    const model = await target.chatModel();
    const pool = target.credentials;
    // Each rate-limited attempt rests one key, so a pool of n keys gets at most n attempts.
    for (let attempt = 1; ; attempt += 1) {
      this.throwIfAborted();
      const key = pool?.nextAvailable() ?? null;
      if (pool && (!key || attempt > pool.size)) {
        const wait = Math.ceil(pool.msUntilAvailable() / 1000);
        throw new ProviderUnavailable(
          `rate-limited: ${pool.size === 1 ? `the key from ${pool.source} is` : `all ${pool.size} keys from ${pool.source} are`} ` +
            `cooling down (the first is usable again in ${wait} s)`,
        );
      }
      this.waitingFor = `the model ${labelOf(target)}`;
      this.watchdog.touch();
      try {
        return await model.streamTurn({
          model: target.model,
          apiKey: key?.value ?? null,
          system: this.system,
          messages: this.transcript,
          tools: this.toolSpecs,
          signal: this.controller.signal,
          onActivity: () => this.watchdog.touch(),
          onText: (delta) => this.request.onText?.(delta),
        });
      } catch (caught) {
        if (!(caught instanceof ModelCallError)) throw caught;
        const error = pool ? new ModelCallError(caught.kind, pool.redact(caught.message), caught.details) : caught;
        if (error.kind === 'rate_limited' && pool && key) {
          this.restKey(target, pool, key, error.details.retryAfterMs ?? null);
          continue;
        }
        throw this.translate(error, target, key);
      }
    }
  }

  private restKey(target: LlmProviderTarget, pool: CredentialPool, key: PooledKey, retryAfterMs: number | null): void {
    const rest = Math.max(MIN_COOL_DOWN_MS, retryAfterMs ?? this.options.defaultCoolDownMs ?? DEFAULT_RATE_LIMIT_COOL_DOWN_MS);
    pool.coolDown(key, rest);
    this.options.logger?.warn(
      `${labelOf(target)}: ${pool.describe(key)} is rate-limited; it rests for ${Math.ceil(rest / 1000)} s` +
        (pool.nextAvailable() ? ' and the call is repeated with the next key' : ''),
    );
  }

  private translate(error: ModelCallError, target: LlmProviderTarget, key: PooledKey | null): Error {
    switch (error.kind) {
      case 'rate_limited':
      case 'unreachable':
      case 'server':
        return new ProviderUnavailable(error.message, { cause: error });
      case 'auth':
        return new AgentRunError(
          'failed',
          `The provider ${labelOf(target)} failed: ${error.message}; ` +
            (key && target.credentials
              ? `check ${target.credentials.describe(key)}.`
              : `it needs a key: set ${target.keyHelp}.`),
          { cause: error },
        );
      case 'rejected':
        return new AgentRunError(
          'failed',
          `The provider ${labelOf(target)} failed: ${error.message}` +
            (error.details.status === 404 ? `; check that the model "${target.model}" exists there.` : '.'),
          { cause: error },
        );
      case 'aborted':
        return error;
    }
  }

  private async callTool(call: RequestedToolCall): Promise<ToolCallResult> {
    const tool = this.tools.get(call.name);
    if (!tool) {
      const available = [...this.tools.keys()].join(', ') || 'none';
      return errorResult(call, `unknown tool "${call.name}"; the tools available are: ${available}`);
    }
    const parsed = parseToolArguments(call.arguments);
    if (!parsed.ok) {
      return errorResult(call, `${parsed.problem}; call "${call.name}" again with a JSON object that matches its parameters`);
    }
    this.throwIfAborted();
    this.waitingFor = `the tool "${call.name}"`;
    this.watchdog.touch();
    const signal = this.controller.signal;
    try {
      const context = {
        signal,
        unattended: this.request.unattended,
        privateNetworks: this.request.privateNetworks ?? true,
        environment: this.request.environment,
      };
      const content = await untilAborted(tool.call(parsed.args, context), signal);
      return { callId: call.id, name: call.name, content, isError: false };
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof ToolInputError) return errorResult(call, error.message);
      // Tools report failures as results; one that throws anyway does not end the run.
      return errorResult(call, `the tool failed: ${errorText(error)}`);
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
      const seconds = Number(((this.request.idleTimeoutMs ?? 0) / 1000).toFixed(3));
      return new AgentRunError(
        'idle_timeout',
        `idle timeout: no streamed token or tool call for ${seconds} s while waiting for ${this.waitingFor}; ` +
          'the run was stopped (raise AGENT_CRON_TIMEOUT, or set it to 0 for no limit).',
        { cause: error },
      );
    }
    if (this.request.signal?.aborted) {
      return new AgentRunError('aborted', `The run was cancelled while waiting for ${this.waitingFor}.`, { cause: error });
    }
    return error;
  }

  private everyProviderFailed(): AgentRunError {
    const skipped = this.options.skippedFallbacks ?? [];
    const [only] = this.failures;
    if (only && this.failures.length === 1 && skipped.length === 0) {
      return new AgentRunError('failed', `The provider ${labelOf(only.target)} failed: ${only.problem}.`);
    }
    const tried = this.failures.map(({ target, problem }) => `${labelOf(target)}: ${problem}`).join('; ');
    const notTried = skipped.length > 0 ? ` Not tried: ${skipped.join(' ')}` : '';
    return new AgentRunError('failed', `Every provider failed: ${tried}.${notTried}`);
  }
}

/** `openrouter (meta-llama/llama-3.1-8b-instruct)`: the answeredBy of the output file. */
function labelOf(target: LlmProviderTarget): string {
  return `${target.provider} (${target.model})`;
}

function errorResult(call: RequestedToolCall, message: string): ToolCallResult {
  return { callId: call.id, name: call.name, content: JSON.stringify({ error: message }), isError: true };
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
