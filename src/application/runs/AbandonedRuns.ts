import { inject, injectable, optional, type ServiceIdentifier } from 'inversify';
import { runAbandonment } from '../../domain/runs/abandonment.js';
import { cronRunId, type RunRecord } from '../../domain/runs/RunRecord.js';
import type { Job, JobClaim } from '../../domain/Job.js';
import { errorText } from '../../domain/errors.js';
import type { Clock } from '../ports/Clock.js';
import type { Logger } from '../ports/Logger.js';
import type { OrphanProcesses } from '../ports/OrphanProcesses.js';
import type { RunLedger } from '../ports/RunLedger.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { RunClaimants } from './RunClaimants.js';

/** AbandonedRuns, built the first time a claim needs it (a command that finds nothing to do never does). */
export const ABANDONED_RUNS_ON_DEMAND: ServiceIdentifier<() => AbandonedRuns> = Symbol.for('AbandonedRunsOnDemand');

/** A job a claim found abandoned and put back in service (its `last_error` says why), with the claim it had. */
export interface RecoveredRun {
  job: Job;
  claim: JobClaim;
}

/** How many running runs one look settles at most; the rest are the next look's. */
const LOOKED_AT = 1000;

/**
 * The runs of the ledger whose process is gone (docs/runs.md): each one still `running` whose
 * claimant died on this host, whose gateway's lease lapsed, or that went on for longer than a
 * run can (runAbandonment, the rule a `running` job is recovered by) is recorded `error`,
 * `interrupted: …`, and what the dead process started and left running on this host is killed.
 * A cron run without a claimant (an earlier version's) is settled once stale; a webhook run
 * without one is left to the webhook inbox, which runs its event again.
 *
 * Used by the claim every trigger shares: at a process's first claim (a gateway's start, a
 * command's tick) and whenever a claim recovers a job.
 */
@injectable()
export class AbandonedRuns {
  constructor(
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(RunClaimants) private readonly claimants: RunClaimants,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.OrphanProcesses) @optional() private readonly orphans: OrphanProcesses | undefined = undefined,
  ) {}

  /**
   * Settles the abandoned runs, and kills the orphans of their dead claimants and of
   * `goneClaimants` (the claimants of jobs just recovered, known dead here). Returns the runs
   * settled. Never throws: a ledger that cannot be read or written is logged, and the claim goes on.
   */
  async settle(goneClaimants: readonly string[] = [], recovered: readonly RecoveredRun[] = []): Promise<RunRecord[]> {
    const settled: RunRecord[] = [];
    const dead = new Set(goneClaimants.filter((claimant) => claimant !== this.claimants.self()));
    try {
      const now = this.clock.now();
      const running = await this.ledger.running(LOOKED_AT);
      const { alive, lapsed } = await this.claimants.look(
        running.map((run) => run.claimant),
        now,
      );
      for (const run of running) {
        const claimant = run.claimant ?? null;
        if (claimant === null && run.kind !== 'cron') continue;
        if (claimant === this.claimants.self()) continue;
        const why = runAbandonment(
          claimant === null ? null : { by: claimant, at: run.started_at },
          run.started_at,
          now,
          alive,
          lapsed,
          this.settings.idleTimeoutMs,
        );
        if (why === null) continue;
        const recorded = await this.ledger.settleInterrupted(run.id, why, now);
        if (recorded === null) continue;
        settled.push(recorded);
        if (claimant !== null && alive(claimant) === false) dead.add(claimant);
        this.log.warn(`run ${run.id} of ${run.kind === 'cron' ? 'job' : 'route'} '${run.name}' was recorded interrupted: ${why}`, {
          run: run.id,
        });
      }
      for (const run of recovered) {
        const recorded = await this.recordUnrecorded(run, now);
        if (recorded) settled.push(recorded);
      }
    } catch (error) {
      this.log.warn('could not settle the interrupted runs of the run ledger', { error: errorText(error) });
    }
    await this.killOrphansOf(dead);
    return settled;
  }

  /**
   * A run that ended before its record showed it running (RUNNING_RECORD_AFTER_MS) left nothing
   * in the ledger: it is recorded now, interrupted, as started when it was claimed. A record of
   * the job's that started since that claim is the run's own, settled above.
   */
  private async recordUnrecorded({ job, claim }: RecoveredRun, now: Date): Promise<RunRecord | null> {
    const [newest] = await this.ledger.list({ kind: 'cron', subject: job.id, limit: 1 });
    if (newest && Date.parse(newest.started_at) >= Date.parse(claim.at)) return null;
    const record: RunRecord = {
      id: cronRunId(job.id, new Date(claim.at)),
      kind: 'cron',
      subject: job.id,
      name: job.name,
      slot: null,
      event: null,
      delivery_id: null,
      started_at: new Date(claim.at).toISOString(),
      finished_at: now.toISOString(),
      status: 'error',
      model: null,
      prompt: job.no_agent ? null : job.prompt,
      answer: null,
      error: job.last_error,
      deliveries: [],
      claimant: claim.by,
    };
    await this.ledger.save(record);
    this.log.warn(`run ${record.id} of job '${job.name}' was recorded interrupted: ${job.last_error ?? 'its process is gone'}`, {
      run: record.id,
    });
    return record;
  }

  private async killOrphansOf(claimants: ReadonlySet<string>): Promise<void> {
    if (!this.orphans) return;
    for (const claimant of claimants) {
      const killed = await this.orphans.killOrphansOf(claimant);
      if (killed > 0) this.log.warn(`killed ${killed} process(es) left running by ${claimant}, which is gone`, { claimant });
    }
  }
}
