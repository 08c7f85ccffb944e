import type { CredentialPool, PooledKey } from '../../domain/agent/CredentialPool.js';
import { coolDownMs, decideAfterFailure, labelOf } from '../../domain/agent/providerChain.js';
import type { RandomSource } from '../../domain/agent/rateLimits.js';
import type { ModelTurn } from '../../domain/agent/transcript.js';
import { AgentRunError } from '../ports/AgentRunner.js';
import type { Logger } from '../ports/Logger.js';
import type { Timer } from '../ports/Timer.js';
import type { IdleWatchdog } from './IdleWatchdog.js';
import { ProviderThrottle, type InFlight } from './ProviderThrottle.js';
import { ModelCallError } from './ports/ChatModel.js';
import type { ProviderTarget } from './RunAgentSession.js';

/** A provider that cannot serve the run right now: the next fallback may. */
export class ProviderUnavailable extends Error {}

export interface ProviderCallsSettings {
  timer: Timer;
  logger?: Logger | null;
  /** Rest of a rate-limited key, while another takes the call, when the provider names none; default 30 s. */
  defaultCoolDownMs?: number;
  /** The jitter of the throttles a session makes for targets that bring none; default Math.random. */
  random?: RandomSource;
}

/** Sends one attempt of a model call with `key`; `onResponseStarted` is the ChatModel's callback of that name. */
export type SendAttempt = (key: PooledKey | null, onResponseStarted: () => void) => Promise<ModelTurn>;

/**
 * One session's model calls to one provider at a time, through the provider chain's table
 * (domain/agent/providerChain.ts): a 429 that another key can take rests the key and repeats
 * the call at once with that key; one that no key can take waits on the provider's throttle
 * (ProviderThrottle, shared by every session of the process when the target brings it) and is
 * repeated, the idle watchdog paused while it waits; a provider that cannot be reached, answers
 * 5xx or keeps the call waiting too long is ProviderUnavailable; refused keys and other 4xx end
 * the run.
 */
export class ProviderCalls {
  /** The throttles of targets that bring none: this session's alone. */
  private readonly ownThrottles = new Map<ProviderTarget, ProviderThrottle>();

  constructor(
    private readonly settings: ProviderCallsSettings,
    private readonly signal: AbortSignal,
    private readonly watchdog: IdleWatchdog,
  ) {}

  async call(target: ProviderTarget, send: SendAttempt): Promise<ModelTurn> {
    const pool = target.credentials;
    const throttle = this.throttleOf(target);
    const call = throttle.newCall();
    for (;;) {
      const place = await this.admit(throttle, call, pool);
      const key = pool?.nextAvailable(this.now()) ?? null;
      // Another session may have rested the last usable key since the throttle let this call go.
      if (pool && !key) {
        place.end();
        continue;
      }
      this.watchdog.touch();
      try {
        return await send(key, () => place.started());
      } catch (caught) {
        if (!(caught instanceof ModelCallError)) throw caught;
        const error = pool ? new ModelCallError(caught.kind, pool.redact(caught.message), caught.details) : caught;
        const retryAfterMs = error.details.retryAfterMs ?? null;
        switch (decideAfterFailure(error.kind, pool !== null && key !== null && pool.hasAnotherAvailable(key, this.now()))) {
          case 'next_key':
            this.restKey(target, pool!, key!, retryAfterMs);
            continue;
          case 'wait':
            throttle.refused(call, place, this.restLastKey(pool, key, retryAfterMs), error.message);
            continue;
          case 'next_provider':
            throw new ProviderUnavailable(error.message, { cause: error });
          case 'end_run':
            throw endingError(error, target, key);
          case 'stop':
            throw error;
        }
      } finally {
        place.end();
      }
    }
  }

  private async admit(
    throttle: ProviderThrottle,
    call: ReturnType<ProviderThrottle['newCall']>,
    pool: CredentialPool | null,
  ): Promise<InFlight> {
    if (this.signal.aborted) throw new ModelCallError('aborted', 'the run was stopped');
    this.watchdog.pause();
    try {
      const admitted = await throttle.admit(call, this.signal, pool);
      if ('problem' in admitted) throw new ProviderUnavailable(admitted.problem);
      return admitted;
    } finally {
      this.watchdog.resume();
    }
  }

  private throttleOf(target: ProviderTarget): ProviderThrottle {
    if (target.throttle) return target.throttle;
    let own = this.ownThrottles.get(target);
    if (!own) {
      own = new ProviderThrottle({
        name: target.provider,
        timer: this.settings.timer,
        random: this.settings.random,
        logger: this.settings.logger,
      });
      this.ownThrottles.set(target, own);
    }
    return own;
  }

  private now(): number {
    return this.settings.timer.monotonicNow();
  }

  /**
   * Rests the refused key for the time the provider named, if it named one: without one, the
   * call's back-off and the lowered concurrency hold it back. Returns how long every session is
   * to wait: the Retry-After, or with keys until the first is usable again (another may rest less).
   */
  private restLastKey(pool: CredentialPool | null, key: PooledKey | null, retryAfterMs: number | null): number | null {
    if (retryAfterMs === null || !pool || !key) return retryAfterMs;
    pool.coolDown(key, retryAfterMs, this.now());
    return pool.msUntilAvailable(this.now());
  }

  private restKey(target: ProviderTarget, pool: CredentialPool, key: PooledKey, retryAfterMs: number | null): void {
    const rest = coolDownMs(retryAfterMs, this.settings.defaultCoolDownMs);
    pool.coolDown(key, rest, this.now());
    this.settings.logger?.warn(
      `${labelOf(target)}: ${pool.describe(key)} is rate-limited; it rests for ${Math.ceil(rest / 1000)} s and the call is repeated with the next key`,
    );
  }
}

/** The run's error for a failure that ends it: refused keys say which key, a 404 which model. */
function endingError(error: ModelCallError, target: ProviderTarget, key: PooledKey | null): AgentRunError {
  if (error.kind === 'auth') {
    return new AgentRunError(
      'failed',
      `The provider ${labelOf(target)} failed: ${error.message}; ` +
        (key && target.credentials ? `check ${target.credentials.describe(key)}.` : `it needs a key: set ${target.keyHelp}.`),
      { cause: error },
    );
  }
  return new AgentRunError(
    'failed',
    `The provider ${labelOf(target)} failed: ${error.message}` +
      (error.details.status === 404 ? `; check that the model "${target.model}" exists there.` : '.'),
    { cause: error },
  );
}
