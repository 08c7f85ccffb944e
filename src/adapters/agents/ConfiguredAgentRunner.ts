import { basename, join } from 'node:path';
import { inject, injectable, optional } from 'inversify';
import {
  AgentRunError,
  type AgentRunRequest,
  type AgentRunResult,
  type AgentRunner,
  type ModelSelection,
} from '../../application/ports/AgentRunner.js';
import type { Logger } from '../../application/ports/Logger.js';
import { NO_METRICS, type Metrics } from '../../application/ports/Metrics.js';
import { NO_TRACING, type RunTracing } from '../../application/ports/RunTracing.js';
import { NO_SANDBOX, type Sandbox } from '../../application/ports/Sandbox.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { AgentConfig } from '../config/AgentConfig.js';
import { CONFIG_TOKENS } from '../config/tokens.js';
import type { ProcessTreeKiller } from '../../application/ports/ProcessTreeKiller.js';
import { displayPath } from '../shared/displayPath.js';
import type { ChatModel } from '../../application/agent/ports/ChatModel.js';
import { RUNTIME_TOKENS } from '../../application/agent/ports/tokens.js';
import type { ToolCatalog } from '../../application/agent/ports/ToolCatalog.js';
import { ProviderThrottle } from '../../application/agent/ProviderThrottle.js';
import type { ProviderTarget } from '../../application/agent/RunAgentSession.js';
import type { Timer } from '../../application/ports/Timer.js';
import { UNLIMITED_RUNS, type Release, type RunLimits } from '../../domain/PermitPool.js';
import { CredentialPool } from '../../domain/agent/CredentialPool.js';
import { mergeBudgets, type ModelPrice, type PriceLookup } from '../../domain/runs/usage.js';
import { SystemTimer } from '../system/SystemTimer.js';
import { SystemClock } from '../system/SystemClock.js';
import type { Clock } from '../../application/ports/Clock.js';
import { configuredSecrets } from '../config/configuredSecrets.js';
import type { NamedSecret } from '../../domain/runs/RunTranscript.js';
import { ChildEnvironments } from '../process/ChildEnvironments.js';
import { CommandAgentRunner } from './CommandAgentRunner.js';
import { resolveProvider, type ProviderLookup, type ProviderResolution, type ResolvedProvider } from './providerSettings.js';

type LlmProvider = Extract<ResolvedProvider, { type: 'openai' | 'anthropic' }>;

/** Without a tool catalog, runs get no tools. */
const NO_TOOLS: ToolCatalog = { toolsFor: async () => [] };

/** What every runner over one configuration shares: the key pools, the loaded SDK models and the rate-limit throttles. */
interface ProviderState {
  pools: Map<string, { fingerprint: string; pool: CredentialPool }>;
  chatModels: Map<string, Promise<ChatModel>>;
  /** One per provider name and endpoint: what every session learns of its rate limits (docs/providers.md). */
  throttles: Map<string, ProviderThrottle>;
  /** What transcripts are scrubbed of (configuredSecrets), gathered at the first session: the environment and config.yaml are this runner's for its life. */
  secrets?: NamedSecret[];
}

/**
 * The AgentRunner of the whole configuration (docs/providers.md). A selection's null provider
 * falls back to `model.provider`; its null model to `model.name` when the provider is the
 * configured one, else to that provider's own default (`providers.<name>.model`). The provider is
 * then resolved by name (see resolveProvider): a `providers` entry, or one of the built-ins
 * `openai`, `anthropic`, `openrouter`, `ollama` and `command`.
 *
 * - `command` providers run as a CommandAgentRunner: one fresh process per run.
 * - `openai` and `anthropic` providers run as a session of the agent runtime
 *   (application/agent/RunAgentSession) over the official SDKs, with the configured fallback
 *   providers behind them (`fallback_providers`, else the legacy `fallback_model`) and
 *   one credential pool per provider that lives as long as this runner, so a key rate-limited in
 *   one run is skipped by the next, and one rate-limit throttle per provider and endpoint, so
 *   that every session waits out the same Retry-After (application/agent/ProviderThrottle). Each SDK is loaded on the first run that needs it, so
 *   commands that run nothing never pay for it.
 *
 * The injected catalog is that of job runs (no job tool). `withTools` gives the runner of
 * sessions that may hold it, sharing pools and models with this one.
 */
@injectable()
export class ConfiguredAgentRunner implements AgentRunner {
  private state: ProviderState = { pools: new Map(), chatModels: new Map(), throttles: new Map() };

  constructor(
    @inject(CONFIG_TOKENS.AgentConfig) private readonly config: AgentConfig,
    @inject(TOKENS.AgentPaths) private readonly paths: AgentPaths,
    @inject(TOKENS.ProcessTreeKiller) private readonly killer: ProcessTreeKiller,
    // The optional ones let wiring work before each exists and keep tests short.
    @inject(RUNTIME_TOKENS.JobRunToolCatalog) @optional() private readonly tools: ToolCatalog = NO_TOOLS,
    @inject(CONFIG_TOKENS.Environment) @optional() private readonly env: NodeJS.ProcessEnv = process.env,
    @inject(TOKENS.Logger) @optional() private readonly logger: Logger | null = null,
    @inject(TOKENS.Timer) @optional() private readonly timer: Timer = new SystemTimer(),
    @inject(TOKENS.Sandbox) @optional() private readonly sandbox: Sandbox = NO_SANDBOX,
    @inject(TOKENS.Clock) @optional() private readonly clock: Clock = new SystemClock(),
    @inject(TOKENS.Metrics) @optional() private readonly metrics: Metrics = NO_METRICS,
    @inject(TOKENS.RunLimits) @optional() private readonly limits: RunLimits = UNLIMITED_RUNS,
    @inject(TOKENS.RunTracing) @optional() private readonly tracing: RunTracing = NO_TRACING,
  ) {}

  /** This runner with another tool catalog; key pools and loaded models stay shared. */
  withTools(tools: ToolCatalog): ConfiguredAgentRunner {
    const runner = new ConfiguredAgentRunner(
      this.config,
      this.paths,
      this.killer,
      tools,
      this.env,
      this.logger,
      this.timer,
      this.sandbox,
      this.clock,
      this.metrics,
      this.limits,
      this.tracing,
    );
    runner.state = this.state;
    return runner;
  }

  /**
   * Why a run with this selection cannot start, as one sentence saying what to change; null when
   * it can: no model configured, unknown provider, an LLM provider without a key or a model name,
   * a command provider without a program. Fallback providers are not checked here: one that
   * cannot be used is left out, and named if every provider fails. Spends nothing.
   */
  problemWith(selection: ModelSelection): string | null {
    const resolution = this.resolve(selection);
    return resolution.ready ? null : resolution.problem;
  }

  /**
   * Runs one fresh session with the resolved provider. Throws AgentRunError `failed` with the
   * `problemWith` sentence when the selection cannot run, else whatever the run throws.
   */
  async run(request: AgentRunRequest): Promise<AgentRunResult> {
    const resolution = this.resolve(request.selection);
    if (!resolution.ready) throw new AgentRunError('failed', resolution.problem);
    const resolved = resolution.resolved;
    if (resolved.type === 'command') {
      const program = basename(resolved.command[0]!);
      const runner = new CommandAgentRunner({
        command: resolved.command,
        killer: this.killer,
        answeredBy: `${resolved.provider}:${program}${resolved.model ? ` (${resolved.model})` : ''}`,
        environment: new ChildEnvironments(this.env, this.config).forModelProgram(),
        sandbox: { by: this.sandbox, workspace: join(this.paths.home, 'workspace') },
        permits: this.limits.processes,
      });
      const result = await runner.run({ ...request, selection: { provider: resolved.provider, model: resolved.model } }, this.prices);
      if (result.usage) {
        const model = resolved.model ?? program;
        this.metrics.modelUsage?.(resolved.provider, model, result.usage, result.costUsd ?? null);
      }
      return result;
    }
    const { chain, skipped } = this.chainFrom(resolved);
    // Loaded on first use like the SDKs: commands that run nothing do not parse the agent loop.
    const { RunAgentSession } = await import('../../application/agent/RunAgentSession.js');
    const session = new RunAgentSession({
      tools: this.tools,
      timer: this.timer,
      logger: this.logger,
      transcript: { clock: this.clock, secrets: (this.state.secrets ??= configuredSecrets(this.env, this.config)) },
      tracing: this.tracing,
    });
    // Each limit the run sets none of comes from `agent.budget`.
    const budget = mergeBudgets(request.budget, this.config.agent?.budget);
    const release = await this.sessionPermit(request.signal);
    try {
      return await session.execute({
        request: { ...request, budget },
        chain,
        skippedFallbacks: skipped,
        prices: this.prices,
        onTurnUsage: (provider, model, counts, cost) => this.metrics.modelUsage?.(provider, model, counts, cost),
      });
    } finally {
      release();
    }
  }

  /**
   * Loads, ahead of the first run, what a session of the configured model needs: the agent loop,
   * the SDK or HTTP client of the configured provider and of its fallbacks. The gateway calls it
   * once it is up, so that a thousand runs falling due together do not wait for a module to be
   * compiled at that moment. Never throws: a run that needs what failed to load says why.
   */
  async warmUp(): Promise<void> {
    try {
      const resolution = this.resolve({ provider: null, model: null });
      if (!resolution.ready || resolution.resolved.type === 'command') return;
      const { chain } = this.chainFrom(resolution.resolved);
      await import('../../application/agent/RunAgentSession.js');
      await Promise.all(chain.map(async (target) => (await target.chatModel()).warmUp?.()));
    } catch {
      // The first run loads it again and reports what fails.
    }
  }

  /**
   * One of the process's session permits (`agent.max_concurrent_sessions`), waited for in turn;
   * the first wait after the sessions were all free is logged, not each one.
   */
  private async sessionPermit(signal: AbortSignal | undefined): Promise<Release> {
    const sessions = this.limits.sessions;
    const now = sessions.tryAcquire();
    if (now) return now;
    if (sessions.waiting === 0) {
      this.logger?.info(
        `every model session is busy (agent.max_concurrent_sessions is ${sessions.limit}); further runs wait for a free one`,
      );
    }
    try {
      return await sessions.acquire(signal);
    } catch {
      throw new AgentRunError('aborted', 'The run was cancelled while it waited for a free model session.');
    }
  }

  /** `models.prices.<provider>/<model>`; nothing is priced unless it is written there. */
  readonly prices: PriceLookup = (provider, model) => {
    const price = this.config.models?.prices?.[`${provider}/${model}`];
    return price ? (price satisfies ModelPrice) : null;
  };

  private get lookup(): ProviderLookup {
    return { config: this.config, env: this.env, configFile: displayPath(this.paths.configFile) };
  }

  private resolve(selection: ModelSelection): ProviderResolution {
    const provider = selection.provider ?? this.config.model?.provider ?? null;
    if (provider === null) return { ready: false, problem: this.noModelProblem() };
    // The configured model name belongs to the configured provider; another provider gets its own default.
    const inheritsModel = selection.provider === null || selection.provider === this.config.model?.provider;
    const model = selection.model ?? (inheritsModel ? this.config.model?.name : null) ?? null;
    return resolveProvider(this.lookup, provider, model);
  }

  /** The primary provider, then each usable fallback; the unusable ones as sentences. */
  private chainFrom(primary: LlmProvider): { chain: ProviderTarget[]; skipped: string[] } {
    const chain = [this.targetFor(primary)];
    const skipped: string[] = [];
    for (const fallback of this.fallbackEntries()) {
      const resolution = this.resolve({ provider: fallback.provider, model: fallback.model });
      if (!resolution.ready) {
        skipped.push(`fallback "${fallback.provider}": ${resolution.problem}`);
        continue;
      }
      const resolved = resolution.resolved;
      if (resolved.type === 'command') {
        skipped.push(`fallback "${fallback.provider}": a command provider cannot take over a model's conversation.`);
        continue;
      }
      if (chain.some((target) => target.provider === resolved.provider && target.model === resolved.model)) continue;
      chain.push(this.targetFor(resolved));
    }
    return { chain, skipped };
  }

  /** `fallback_providers` when it lists any, else the legacy `fallback_model`. */
  private fallbackEntries(): Array<{ provider: string; model: string | null }> {
    if (this.config.fallback_providers.length > 0) {
      return this.config.fallback_providers.map(({ provider, model }) => ({ provider, model: model ?? null }));
    }
    const legacy = this.config.fallback_model;
    return legacy ? [{ provider: legacy.provider, model: legacy.model ?? legacy.name ?? null }] : [];
  }

  private targetFor(resolved: LlmProvider): ProviderTarget {
    return {
      provider: resolved.provider,
      model: resolved.model,
      chatModel: () => this.chatModelFor(resolved),
      api: resolved.type,
      endpoint: resolved.baseUrl,
      credentials: this.poolFor(resolved),
      throttle: this.throttleFor(resolved),
      keyHelp: resolved.keyHelp,
      ...(resolved.vision === false ? { noImages: `providers.${resolved.provider}.vision is false in the configuration` } : {}),
    };
  }

  /** The provider's pool, kept across runs; a new one only when its keys changed. */
  private poolFor(resolved: LlmProvider): CredentialPool | null {
    const keys = resolved.keys;
    if (!keys) return null;
    const fingerprint = [keys.source, ...keys.values].join('\n');
    const known = this.state.pools.get(resolved.provider);
    if (known?.fingerprint === fingerprint) return known.pool;
    const pool = new CredentialPool(keys.values, keys.source);
    this.state.pools.set(resolved.provider, { fingerprint, pool });
    return pool;
  }

  private throttleFor(resolved: LlmProvider): ProviderThrottle {
    const key = `${resolved.provider} ${resolved.baseUrl}`;
    let throttle = this.state.throttles.get(key);
    if (!throttle) {
      throttle = new ProviderThrottle({ name: resolved.provider, timer: this.timer, logger: this.logger });
      this.state.throttles.set(key, throttle);
    }
    return throttle;
  }

  private chatModelFor(resolved: LlmProvider): Promise<ChatModel> {
    const cacheKey = `${resolved.type} ${resolved.baseUrl} ${resolved.maxTokens ?? ''}`;
    let model = this.state.chatModels.get(cacheKey);
    if (!model) {
      model = loadChatModel(resolved, this.env);
      this.state.chatModels.set(cacheKey, model);
      // A failed load (a broken install) is not remembered, so the next run tries again.
      model.catch(() => this.state.chatModels.delete(cacheKey));
    }
    return model;
  }

  private noModelProblem(): string {
    const configFile = displayPath(this.paths.configFile);
    if (this.config.model) {
      return (
        `No model provider is configured; add "provider: <name>" under model in ${configFile} ` +
        '(openai, anthropic, openrouter, ollama, command, or a name under providers).'
      );
    }
    return (
      `No model is configured; add for example "model: {provider: openai, name: gpt-4o-mini}" or ` +
      `"model: {provider: command, command: [my-agent]}" to ${configFile}.`
    );
  }
}

/** Each SDK is loaded with its own module, on first use (esbuild puts each in its own chunk). */
async function loadChatModel(resolved: LlmProvider, env: NodeJS.ProcessEnv): Promise<ChatModel> {
  if (resolved.type === 'openai') {
    const { OpenAiChatModel } = await import('./OpenAiChatModel.js');
    return new OpenAiChatModel({ endpoint: resolved.baseUrl, maxTokens: resolved.maxTokens, environment: env });
  }
  const { AnthropicMessagesModel } = await import('./AnthropicMessagesModel.js');
  return new AnthropicMessagesModel({ endpoint: resolved.baseUrl, maxTokens: resolved.maxTokens });
}
