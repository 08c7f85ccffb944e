import { inject, injectable, optional } from 'inversify';
import type { Job } from '../../domain/Job.js';
import { dueTime } from '../../domain/jobLifecycle.js';
import { isFailedStatus, type FailedStatus } from '../../domain/RunOutcome.js';
import type { GatewayRegistration, GatewayRegistry } from '../ports/GatewayRegistry.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { Clock } from '../ports/Clock.js';
import type { ProcessIdentity } from '../ports/ProcessIdentity.js';
import type { Replica, ReplicaLeases } from '../ports/ReplicaLeases.js';
import type { WebhookBacklog } from '../ports/WebhookBacklog.js';
import { TOKENS } from '../ports/tokens.js';

/** How many upcoming jobs the status shows. */
export const NEXT_JOBS_SHOWN = 5;

/**
 * Whether a gateway runs on this home: `running` (its process lives on this host), `stopped`
 * (none registered, or the one registered is dead: killed, or a zombie), or `unknown` (registered
 * from another host sharing the home, whose processes cannot be checked from here).
 */
export type GatewayStatus = { state: 'running' | 'unknown'; gateway: GatewayRegistration } | { state: 'stopped' };

export interface UpcomingJob {
  id: string;
  name: string;
  nextRunAt: string;
}

export interface FailedJob {
  id: string;
  name: string;
  lastStatus: FailedStatus;
  lastRunAt: string | null;
  /** `last_error`, or `last_delivery_error` for a delivery that failed. */
  error: string | null;
}

export interface PausedJob {
  id: string;
  name: string;
  pausedAt: string | null;
  /** Why, as the one who paused it said; null when no reason was given. */
  reason: string | null;
}

export interface HomeStatus {
  gateway: GatewayStatus;
  /** The gateways whose lease on a shared job store holds (a database), oldest first; null with the files. */
  replicas: Replica[] | null;
  /** The next jobs due, earliest first, at most NEXT_JOBS_SHOWN. */
  nextJobs: UpcomingJob[];
  /** Jobs whose last run failed, most recent first. */
  failedJobs: FailedJob[];
  /** Paused jobs, most recently paused first. */
  pausedJobs: PausedJob[];
  /** Webhook events accepted and not yet done. */
  webhookEventsWaiting: number;
  /** Records in the job store that could not be read. */
  unreadableJobs: number;
}

/** `agent status`: what runs on this home, what comes next and what went wrong. Reads only. */
@injectable()
export class ShowStatus {
  constructor(
    @inject(TOKENS.JobRepository) private readonly jobs: JobRepository,
    @inject(TOKENS.GatewayRegistry) private readonly gateways: GatewayRegistry,
    @inject(TOKENS.ProcessIdentity) private readonly identity: ProcessIdentity,
    @inject(TOKENS.WebhookBacklog) private readonly backlog: WebhookBacklog,
    @inject(TOKENS.Clock) @optional() private readonly clock: Clock | undefined = undefined,
    @inject(TOKENS.ReplicaLeases) @optional() private readonly leases: ReplicaLeases | undefined = undefined,
  ) {}

  async execute(): Promise<HomeStatus> {
    const [snapshot, registration, webhookEventsWaiting, replicas] = await Promise.all([
      this.jobs.load(),
      this.gateways.read(),
      this.backlog.waiting(),
      this.leases ? this.leases.live(this.clock?.now() ?? new Date()) : Promise.resolve(null),
    ]);
    return {
      gateway: this.statusOf(registration),
      replicas,
      nextJobs: upcoming(snapshot.jobs),
      failedJobs: failed(snapshot.jobs),
      pausedJobs: paused(snapshot.jobs),
      webhookEventsWaiting,
      unreadableJobs: snapshot.unreadable.length,
    };
  }

  private statusOf(registration: GatewayRegistration | null): GatewayStatus {
    if (!registration) return { state: 'stopped' };
    const alive = this.identity.isAlive(`${registration.host}:${registration.pid}`);
    if (alive === false) return { state: 'stopped' };
    return { state: alive === true ? 'running' : 'unknown', gateway: registration };
  }
}

/** The jobs waiting for a run, the one falling due first first. */
function upcoming(jobs: readonly Job[]): UpcomingJob[] {
  return jobs
    .flatMap((job) => {
      const at = dueTime(job);
      return at === null ? [] : [{ job, at }];
    })
    .sort((a, b) => a.at - b.at)
    .slice(0, NEXT_JOBS_SHOWN)
    .map(({ job }) => ({ id: job.id, name: job.name, nextRunAt: job.next_run_at! }));
}

function paused(jobs: readonly Job[]): PausedJob[] {
  return jobs
    .filter((job) => job.state === 'paused')
    .sort((a, b) => Date.parse(b.paused_at ?? '') - Date.parse(a.paused_at ?? '') || 0)
    .map((job) => ({ id: job.id, name: job.name, pausedAt: job.paused_at, reason: job.paused_reason }));
}

function failed(jobs: readonly Job[]): FailedJob[] {
  return jobs
    .filter((job) => isFailedStatus(job.last_status))
    .sort((a, b) => Date.parse(b.last_run_at ?? '') - Date.parse(a.last_run_at ?? '') || 0)
    .map((job) => ({
      id: job.id,
      name: job.name,
      lastStatus: job.last_status as FailedJob['lastStatus'],
      lastRunAt: job.last_run_at,
      error: job.last_status === 'delivery_failed' ? job.last_delivery_error : job.last_error,
    }));
}
