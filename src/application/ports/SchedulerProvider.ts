import type { Clock } from './Clock.js';
import type { JobRepository } from './JobRepository.js';
import type { Logger } from './Logger.js';

/**
 * What a fire of one slot came to: `accepted` — the claim was made and the run
 * started; `gone` — no such job, or it is paused or completed (a portal must not retry);
 * `stale` — `fireAt` is not the job's `next_run_at` (already fired or rescheduled); `unavailable`
 * — the gateway is stopping or the store cannot be read (retry after `retryAfterSeconds`).
 */
export type FireOutcome =
  { status: 'accepted'; jobId: string } | { status: 'gone' } | { status: 'stale' } | { status: 'unavailable'; retryAfterSeconds: number };

/** The one run path every provider fires through; what a firing does is the same for all. */
export interface FiringPath {
  /**
   * Claims and starts the jobs due now, as many as there are free run slots (the built-in ticker's
   * look). `retrySoon` is true when another process was claiming: nothing was claimed, look again shortly.
   */
  due(): Promise<{ retrySoon: boolean }>;
  /**
   * How far ahead of their slots `due()` claims jobs (ms); their runs start at their slots. A
   * provider that knows when the next job is due looks that much earlier. 0 when absent.
   */
  readonly claimAheadMs?: number;
  /** Claims the slot `fireAt` of one job by compare-and-set and starts its run; never throws. */
  slot(jobId: string, fireAt: string): Promise<FireOutcome>;
  /** Called with a job's id each time one of its runs has ended (a recurring job's next slot is then in the store). */
  onRunFinished(listener: (jobId: string) => void): void;
}

/** What a provider is given: the store, the run path, the clock, a logger, and its own settings. */
export interface SchedulerContext {
  jobs: JobRepository;
  fire: FiringPath;
  clock: Clock;
  log: Logger;
  /** The provider's settings (`cron.managed` for `managed`; `cron.<name>` for a plugin), as config.yaml has them. */
  settings: Readonly<Record<string, unknown>>;
  /** The process environment (secrets such as AGENT_CRON_SCHEDULER_TOKEN come from here, never from config). */
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * Decides when due jobs fire, in gateway mode (docs/plugins.md).
 * The built-in ticker is one provider and lives in the core; others are plugins.
 */
export interface SchedulerProvider {
  readonly name: string;
  /** Null when the provider can work here, else one sentence saying why not (the gateway then uses the built-in ticker). */
  problem(): string | null;
  /** Starts firing; resolves once it is under way. */
  start(context: SchedulerContext): Promise<void>;
  /** Stops firing; resolves once nothing more will be fired. */
  stop(): Promise<void>;
  /** The jobs named were created, changed, paused, resumed, run or removed by this process; never throws. */
  jobsChanged(jobIds: readonly string[]): Promise<void>;
}
