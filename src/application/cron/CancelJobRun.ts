import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import { claimsOf } from '../../domain/jobRunsBeside.js';
import { requestCancel } from '../../domain/runs/runStops.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { Timer } from '../ports/Timer.js';
import { TOKENS } from '../ports/tokens.js';
import { cronRunKey, RunStops } from '../runs/RunStops.js';
import { changeJob } from './changeJobState.js';

/** How often `waitForEnd` looks at the job while its cancelled run winds down. */
const ENDED_LOOK_EVERY_MS = 200;

/**
 * Cancels the run under way of a job (`agent cron cancel`, the dashboard, `POST
 * /api/jobs/<id>/cancel`; docs/runs.md, Time limits and cancel): the request is written on the
 * job's claim, where the process running it — this one, another gateway, a replica, `agent cron
 * run` in another terminal — sees it and stops the run (CancelRequestedRuns). A run this process
 * holds stops at once. A job with no run under way is refused.
 */
@injectable()
export class CancelJobRun {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Timer) private readonly timer: Timer,
    @inject(RunStops) private readonly stops: RunStops,
  ) {}

  /** Asks for the run to stop; returns the job as stored with the request on its claim. */
  async execute(input: { job: string; by: string }): Promise<Job> {
    const asked = await changeJob(this.repository, input.job, (job) => requestCancel(job, input.by, this.clock.now()));
    for (const claim of claimsOf(asked)) this.stops.cancel(cronRunKey(asked.id, claim.at), claim.cancel?.by ?? input.by);
    return asked;
  }

  /**
   * Waits up to `ms` for the cancelled run of `asked` to end: the job as stored once it ended (or
   * null when it was removed meanwhile), or 'running' when it still runs.
   */
  async waitForEnd(asked: Job, ms: number): Promise<Job | null | 'running'> {
    const deadline = this.timer.monotonicNow() + ms;
    for (;;) {
      const job = await this.repository.findById(asked.id);
      // Every run asked to stop has ended (a job's runs may overlap: domain/jobRunsBeside.ts).
      const asking = new Set(claimsOf(asked).map((claim) => claim.at));
      if (job === null || job.state !== 'running' || !claimsOf(job).some((claim) => asking.has(claim.at))) return job;
      if (this.timer.monotonicNow() >= deadline) return 'running';
      await this.timer.wait(ENDED_LOOK_EVERY_MS);
    }
  }
}
