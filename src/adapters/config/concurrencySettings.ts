import { PermitPool, type RunLimits } from '../../domain/PermitPool.js';
import { BUILT_IN_PROVIDERS } from '../agents/providerSettings.js';
import type { AgentConfig } from './AgentConfig.js';

/*
 * How many runs at once (docs/gateway.md, "How many runs at once"). A run waiting on a model
 * costs memory, not CPU: the sessions get a high bound of their own. A run that starts a process
 * costs a process: those keep the low bounds of each kind, and one bound across the process.
 */

/** `agent.max_concurrent_sessions`: in-process model sessions at once. */
export const DEFAULT_MAX_CONCURRENT_SESSIONS = 64;
/** `agent.max_concurrent_processes`: command agents, scripts and terminal commands at once. */
export const DEFAULT_MAX_CONCURRENT_PROCESSES = 16;
/** `cron.max_parallel_jobs` and webhook `max_concurrent_runs` when the agent is a command. */
export const DEFAULT_PROCESS_RUN_SLOTS = 4;

type LimitsConfig = Pick<AgentConfig, 'agent' | 'model' | 'providers'>;

export function maxConcurrentSessions(config: Pick<AgentConfig, 'agent'>): number {
  return config.agent?.max_concurrent_sessions ?? DEFAULT_MAX_CONCURRENT_SESSIONS;
}

export function maxConcurrentProcesses(config: Pick<AgentConfig, 'agent'>): number {
  return config.agent?.max_concurrent_processes ?? DEFAULT_MAX_CONCURRENT_PROCESSES;
}

/** The permits of one process, from `agent.max_concurrent_sessions` and `agent.max_concurrent_processes`. */
export function runLimitsFrom(config: Pick<AgentConfig, 'agent'>): RunLimits {
  return { sessions: new PermitPool(maxConcurrentSessions(config)), processes: new PermitPool(maxConcurrentProcesses(config)) };
}

/**
 * Whether the configured default agent runs as a process of its own (`model.provider` is a
 * command provider), rather than as a model session in this process. Unknown and absent
 * providers count as processes: the low bound is the safe one.
 */
export function defaultAgentIsProcess(config: Pick<AgentConfig, 'model' | 'providers'>): boolean {
  const provider = config.model?.provider;
  if (!provider) return true;
  const entry = Object.hasOwn(config.providers, provider) ? config.providers[provider] : undefined;
  const type = entry?.type ?? (Object.hasOwn(BUILT_IN_PROVIDERS, provider) ? BUILT_IN_PROVIDERS[provider]!.type : null);
  return type !== 'openai' && type !== 'anthropic';
}

/**
 * The run slots of one kind (cron's `max_parallel_jobs`, webhook's `max_concurrent_runs`) when
 * the configuration sets none: 4 when each run is a process, else as many as the sessions.
 */
export function defaultRunSlots(config: LimitsConfig): number {
  return defaultAgentIsProcess(config) ? DEFAULT_PROCESS_RUN_SLOTS : maxConcurrentSessions(config);
}

/**
 * Run slots set above the bound that holds them anyway, as sentences: a webhook or cron slot
 * beyond the sessions (or, for a command agent, the processes) would only wait.
 */
export function concurrencyWarnings(config: Pick<AgentConfig, 'agent' | 'model' | 'providers' | 'platforms' | 'cron'>): string[] {
  const [bound, key] = defaultAgentIsProcess(config)
    ? [maxConcurrentProcesses(config), 'agent.max_concurrent_processes']
    : [maxConcurrentSessions(config), 'agent.max_concurrent_sessions'];
  const slots: Array<[string, number | undefined]> = [
    ['cron.max_parallel_jobs', config.cron.max_parallel_jobs],
    ['platforms.webhook.extra.max_concurrent_runs', config.platforms.webhook?.extra?.max_concurrent_runs],
  ];
  return slots
    .filter(([, value]) => value !== undefined && value > bound)
    .map(([name, value]) => `${name} is ${value} but ${key} is ${bound}: at most ${bound} of those runs go on at once; raise ${key} too.`);
}
