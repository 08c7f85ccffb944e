import { inject, injectable, optional } from 'inversify';
import type { Job } from '../../domain/Job.js';
import { pauseJob } from '../../domain/jobLifecycle.js';
import { RunEvents } from '../events/RunEvents.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import { TOKENS } from '../ports/tokens.js';

/**
 * Pauses a job (a run in progress finishes), with an optional reason; pausing a paused job
 * changes nothing but its reason. A job that was not paused gives its `job.paused` event.
 */
@injectable()
export class PauseJob {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(RunEvents) @optional() private readonly events: RunEvents | null = null,
  ) {}

  async execute(input: { job: string; reason?: string | null }): Promise<Job> {
    let before: Pick<Job, 'state'> = { state: 'paused' };
    const paused = await this.repository.update(input.job, (target) => {
      before = { state: target.state };
      const changed = pauseJob(target, this.clock.now(), input.reason);
      return { job: changed, result: changed };
    });
    await this.events?.jobPaused(before, paused);
    return paused;
  }
}
