import { durationSeconds } from '../../domain/durations.js';
import { validateRetryPolicy, type RetryPolicy } from '../../domain/retries.js';
import type { RetryConfig } from './AgentConfig.js';
import { concurrencyWarnings, defaultRunSlots } from './concurrencySettings.js';
import { enabledMcpServers } from './mcpServerConfig.js';
import { realpathSync } from 'node:fs';
import type { CronSettings } from '../../application/ports/Settings.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import { assertTimeZone } from '../../domain/zonedTime.js';
import { environmentAsGiven } from '../system/hostTimeZone.js';
import type { AgentConfig } from './AgentConfig.js';
import { ConfigError } from './ConfigError.js';

/** Default idle budget of an agent run, in seconds. */
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 600;
/** Default pre-run script timeout, in seconds. */
export const DEFAULT_SCRIPT_TIMEOUT_SECONDS = 3600;

/**
 * The zone cron expressions and naive times are read in: `AGENT_TIMEZONE`, else
 * `timezone` from the config, else the system zone (`TZ`, see systemTimeZone). An invalid name
 * throws the domain's `TIMEZONE.INVALID` error; there is never a silent fallback to another zone.
 */
export function resolveTimeZone(config: Pick<AgentConfig, 'timezone'>, env: NodeJS.ProcessEnv, configFile = 'config.yaml'): string {
  const fromEnv = env.AGENT_TIMEZONE?.trim();
  const fromConfig = config.timezone?.trim();
  const chosen = fromEnv || fromConfig || systemTimeZone(environmentAsGiven(env));
  try {
    return assertTimeZone(chosen);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    // Say where the bad name came from, so the user knows what to fix.
    const source = fromEnv
      ? 'AGENT_TIMEZONE'
      : fromConfig
        ? `${configFile}: timezone`
        : env.TZ !== undefined
          ? 'TZ'
          : 'the system time zone';
    throw new AppError(error.code, `${source}: ${error.message}`);
  }
}

/**
 * The system zone as POSIX defines it: `TZ` unset, the machine's zone; `TZ` empty, UTC; else the
 * zone `TZ` names, with or without a leading ":", or by the path of its zone file. A value that
 * names no zone is returned as written, for the caller to refuse: the runtime would otherwise
 * quietly read it as UTC.
 */
function systemTimeZone(env: NodeJS.ProcessEnv): string {
  const written = env.TZ;
  if (written === undefined) return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  if (written.trim() === '') return 'UTC';
  const name = written.trim().replace(/^:/, '');
  if (name !== '' && !name.startsWith('/')) return name;
  return zoneOfFile(name || '/etc/localtime') ?? written;
}

/** The IANA name of a zone file such as /etc/localtime, from where it lies under a zoneinfo directory. */
function zoneOfFile(path: string): string | null {
  let resolved: string;
  try {
    resolved = realpathSync(path);
  } catch {
    return null;
  }
  const [, name] = /\/zoneinfo\/(?:posix\/)?(.+)$/.exec(resolved) ?? [];
  return name ?? null;
}

/**
 * The agent idle budget from `AGENT_CRON_TIMEOUT` (seconds; unset or blank = 600; 0 = no limit,
 * returned as null). Anything else that is not a number of 0 or more is a `CONFIG.INVALID` error.
 */
export function idleTimeoutMsFrom(env: NodeJS.ProcessEnv): number | null {
  const written = env.AGENT_CRON_TIMEOUT?.trim();
  if (!written) return DEFAULT_IDLE_TIMEOUT_SECONDS * 1000;
  const seconds = Number(written);
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new ConfigError(
      ERROR_CODES.CONFIG.INVALID,
      `AGENT_CRON_TIMEOUT must be a number of seconds, or 0 for no limit (got ${JSON.stringify(written)}).`,
    );
  }
  return seconds === 0 ? null : Math.round(seconds * 1000);
}

/**
 * The pre-run script timeout: `AGENT_CRON_SCRIPT_TIMEOUT`, then
 * `cron.script_timeout_seconds`, then 3600 s. An invalid environment value is skipped with a
 * warning pushed onto `warnings`, and the next source is used. (The loader already dropped an
 * invalid config value with its own warning.)
 */
export function scriptTimeoutMsFrom(config: Pick<AgentConfig, 'cron'>, env: NodeJS.ProcessEnv, warnings: string[] = []): number {
  const written = env.AGENT_CRON_SCRIPT_TIMEOUT?.trim();
  if (written) {
    const seconds = Number(written);
    if (Number.isFinite(seconds) && seconds > 0) return Math.round(seconds * 1000);
    warnings.push(
      `AGENT_CRON_SCRIPT_TIMEOUT must be a positive number of seconds (got ${JSON.stringify(written)}); ` +
        'it is ignored and cron.script_timeout_seconds or the default is used.',
    );
  }
  const configured = config.cron.script_timeout_seconds;
  return Math.round((configured ?? DEFAULT_SCRIPT_TIMEOUT_SECONDS) * 1000);
}

/** A `retry:` mapping (checked by the schema) as the policy runs read; null when absent. */
export function retryPolicyOf(retry: RetryConfig | undefined): RetryPolicy | null {
  if (!retry) return null;
  const seconds = (text: string | undefined) => {
    const length = text === undefined ? undefined : durationSeconds(text);
    return typeof length === 'number' ? length : undefined;
  };
  return validateRetryPolicy({ times: retry.times, backoff_seconds: seconds(retry.backoff), max_seconds: seconds(retry.max) });
}

/**
 * How far ahead of their slots the gateway claims due jobs (CronSettings.claimAheadMs): long
 * enough for a thousand runs due at one instant to get ready (record, checks) before it, so each
 * sends its model request within a second of its slot (docs/gateway.md, bench/agents.mjs).
 */
export const CLAIM_AHEAD_MS = 1000;

/**
 * Everything the cron use cases read from configuration and environment, resolved once at
 * start-up. Throws for an invalid time zone or `AGENT_CRON_TIMEOUT`; non-fatal problems are
 * pushed onto `warnings` for the caller to log.
 */
export function cronSettingsFrom(config: AgentConfig, env: NodeJS.ProcessEnv, warnings: string[] = [], configFile?: string): CronSettings {
  warnings.push(...concurrencyWarnings(config));
  return {
    timeZone: resolveTimeZone(config, env, configFile),
    wrapResponse: config.cron.wrap_response,
    maxParallelJobs: config.cron.max_parallel_jobs ?? defaultRunSlots(config),
    outputRetention: config.cron.output_retention,
    oneShotGraceMs: (config.cron.one_shot_grace_seconds ?? 120) * 1000,
    claimAheadMs: CLAIM_AHEAD_MS,
    failureAlerts: config.cron.failure_alerts ?? 'first',
    pauseAfterFailures: config.cron.pause_after_failures ?? 0,
    catchUp: config.cron.catch_up ?? 'once',
    // Only when set: a configuration without it reads as before.
    ...(config.cron.retry ? { retry: retryPolicyOf(config.cron.retry) } : {}),
    idleTimeoutMs: idleTimeoutMsFrom(env),
    scriptTimeoutMs: scriptTimeoutMsFrom(config, env, warnings),
    defaultModel: { provider: config.model?.provider ?? null, model: config.model?.name ?? null },
    // Only when there are any: a configuration without MCP servers reads as before.
    ...(enabledMcpServers(config).length > 0 ? { mcpServers: enabledMcpServers(config) } : {}),
    ...(config.agent?.budget?.max_cost_per_day !== undefined ? { maxCostPerDay: config.agent.budget.max_cost_per_day } : {}),
  };
}
