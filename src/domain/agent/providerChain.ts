/*
 * The provider chain of a session as a pure decision table: what a session does after
 * a model call failed, how long a rate-limited key rests, and how a run that ran out of
 * providers or rounds is explained.
 */

/**
 * How a model call failed, in the terms the session decides on:
 * - `rate_limited`: HTTP 429; another key of the pool may be tried at once, else the call waits;
 * - `unreachable`: no connection, or it broke off; a fallback provider may be tried;
 * - `server`: HTTP 5xx or an error event mid-stream; a fallback provider may be tried;
 * - `auth`: HTTP 401/403; the run fails at once, since every retry would fail the same way;
 * - `rejected`: any other HTTP 4xx (unknown model, bad request); the run fails;
 * - `aborted`: the run's signal fired (idle timeout or cancellation).
 */
export type ModelCallFailure = 'rate_limited' | 'unreachable' | 'server' | 'auth' | 'rejected' | 'aborted';

/**
 * What the session does next:
 * - `next_key`: rest the key and repeat the call at once with the pool's next key;
 * - `wait`: no other key can take the call: it waits on the provider's throttle (the shared
 *   Retry-After, a back-off with jitter, a lowered concurrency; rateLimits.ts) and is repeated;
 *   a call that would wait too long counts as `next_provider`;
 * - `next_provider`: this provider counts as failed; the next in the chain takes the whole
 *   conversation and keeps it to the end;
 * - `end_run`: the run fails with this error, whatever fallbacks there are;
 * - `stop`: the run was stopped (idle timeout, cancellation); nothing more is tried.
 */
export type FailureDecision = 'next_key' | 'wait' | 'next_provider' | 'end_run' | 'stop';

/** The table: each failure, when another key of the provider's pool can take the call, and when none can (or it needs none). */
export const AFTER_FAILURE: Readonly<Record<ModelCallFailure, { withKeys: FailureDecision; withoutKeys: FailureDecision }>> = {
  rate_limited: { withKeys: 'next_key', withoutKeys: 'wait' },
  unreachable: { withKeys: 'next_provider', withoutKeys: 'next_provider' },
  server: { withKeys: 'next_provider', withoutKeys: 'next_provider' },
  auth: { withKeys: 'end_run', withoutKeys: 'end_run' },
  rejected: { withKeys: 'end_run', withoutKeys: 'end_run' },
  aborted: { withKeys: 'stop', withoutKeys: 'stop' },
};

/** What to do after `failure`, when another key that is not resting could take the call or when none could. */
export function decideAfterFailure(failure: ModelCallFailure, anotherKey: boolean): FailureDecision {
  const row = AFTER_FAILURE[failure];
  return anotherKey ? row.withKeys : row.withoutKeys;
}

/** Tool-call rounds per run: 25 lets a model work through a real task and stops a loop. */
export const DEFAULT_MAX_TOOL_ROUNDS = 25;
/** How long a rate-limited key rests, while another key takes the call, when the provider does not say (no `Retry-After`). */
export const DEFAULT_RATE_LIMIT_COOL_DOWN_MS = 30_000;
/** A `Retry-After: 0` must not make the same key hammer the provider. */
export const MIN_COOL_DOWN_MS = 1_000;

/** How long a rate-limited key rests: what the provider asked for, else the default, and never under a second. */
export function coolDownMs(retryAfterMs: number | null | undefined, defaultMs = DEFAULT_RATE_LIMIT_COOL_DOWN_MS): number {
  return Math.max(MIN_COOL_DOWN_MS, retryAfterMs ?? defaultMs);
}

/** One link of the chain, as messages name it. */
export interface ProviderLink {
  /** The provider's name in the configuration, e.g. `openai`, `openrouter`. */
  provider: string;
  model: string;
}

/** `openrouter (meta-llama/llama-3.1-8b-instruct)`: also the answeredBy of a run's output. */
export function labelOf(link: ProviderLink): string {
  return `${link.provider} (${link.model})`;
}

/**
 * The error of a run whose every provider failed: the one failure as it is when only one was
 * tried and none skipped, else each provider tried with its problem, then those not tried.
 */
export function everyProviderFailedMessage(
  failures: ReadonlyArray<{ link: ProviderLink; problem: string }>,
  skippedFallbacks: readonly string[],
): string {
  const [only] = failures;
  if (only && failures.length === 1 && skippedFallbacks.length === 0) {
    return `The provider ${labelOf(only.link)} failed: ${only.problem}.`;
  }
  const tried = failures.map(({ link, problem }) => `${labelOf(link)}: ${problem}`).join('; ');
  const notTried = skippedFallbacks.length > 0 ? ` Not tried: ${skippedFallbacks.join(' ')}` : '';
  return `Every provider failed: ${tried}.${notTried}`;
}

/** The error of a run stopped at the round bound while the model still asked for tools. */
export function roundLimitMessage(maxToolRounds: number, link: ProviderLink, askedFor: readonly string[]): string {
  const asked = [...new Set(askedFor)].join(', ');
  return (
    `stopped after ${maxToolRounds} tool-call rounds without a final answer: ${labelOf(link)} still ` +
    `asked for ${asked}; make the prompt say when the task is done, or split it into smaller jobs.`
  );
}

/** The error of a run that went idle for its whole budget. */
export function idleTimeoutMessage(budgetMs: number, waitingFor: string): string {
  const seconds = Number((budgetMs / 1000).toFixed(3));
  return (
    `idle timeout: no streamed token or tool call for ${seconds} s while waiting for ${waitingFor}; ` +
    'the run was stopped (raise AGENT_CRON_TIMEOUT, or set it to 0 for no limit).'
  );
}
