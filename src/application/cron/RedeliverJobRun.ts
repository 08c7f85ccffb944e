import { inject, injectable } from 'inversify';
import { describeTarget } from '../../domain/DeliveryTarget.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { RunError } from '../../domain/errors.js';
import type { Job } from '../../domain/Job.js';
import { isLastRunOf, redeliverLastRun } from '../../domain/jobLifecycle.js';
import { findJob } from '../../domain/jobLookup.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import {
  latestRedeliverable,
  mergeDeliveries,
  outcomeOfDeliveries,
  targetsToRedeliver,
  whyNotRedeliverable,
} from '../../domain/runs/redelivery.js';
import type { RunDelivery, RunRecord } from '../../domain/runs/RunRecord.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { Logger } from '../ports/Logger.js';
import type { RunLedger } from '../ports/RunLedger.js';
import { TOKENS } from '../ports/tokens.js';
import { RedeliveryClaims } from '../runs/RedeliveryClaims.js';
import { JobAnswers } from './JobAnswers.js';
import { JobPreflight } from './JobPreflight.js';

/** A cron run's answer is `[SILENT]`-aware: a silent answer has nothing to deliver. */
const CRON = { silentIsNothing: true };

export interface RedeliverJobRunInput {
  /** Job id or name (case-insensitive). */
  job: string;
  /** The run's id in the run ledger; absent or null: the job's latest run that has an answer to deliver. */
  run?: string | null;
  /** Who asks (recorded as the run's `redelivered_by`); absent: not said. */
  by?: string;
}

export interface RedeliverJobRunOutput {
  /** The job as stored afterwards. */
  job: Job;
  /** The run as the ledger holds it afterwards: its deliveries, status and `redelivered_at`. */
  run: RunRecord;
  /** How the answer went to each target it was sent to this time, in order. */
  sent: RunDelivery[];
  /** How the run's answer stands now, over all its targets. */
  outcome: RunOutcome;
  /** Whether it is the job's last run, so that the job's `last_status` now says how it went. */
  lastRun: boolean;
}

/**
 * `agent cron redeliver <job> [--run <id>]` and the job tool's `redeliver` (docs/cron.md): the
 * recorded answer of one of the job's runs is sent again through the run's own delivery
 * (JobAnswers.sendAnswer: wrapping, bot-chat, splitting, retries) without running anything, to
 * the job's targets that it did not reach (all of them again when it reached every one). The
 * run's record in the ledger gets the new deliveries, status and `redelivered_at`; when it is the
 * job's last run, the job's `last_status` and its detail fields say how it went, and its failure
 * streak ends when it got through. No failure, recovery or pause notice is sent.
 *
 * The run is claimed in the ledger first, so that two redeliveries of it never both send it; a
 * claim whose process is gone, or older than REDELIVERY_CLAIM_MS, is taken over.
 */
@injectable()
export class RedeliverJobRun {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(RedeliveryClaims) private readonly claims: RedeliveryClaims,
    @inject(JobPreflight) private readonly checks: JobPreflight,
    @inject(JobAnswers) private readonly answers: JobAnswers,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /** Throws JOB.* for the job, RUNS.NOT_FOUND, RUNS.NOTHING_TO_DELIVER or RUNS.BUSY for the run; a failed delivery is an outcome, not an error. */
  async execute(input: RedeliverJobRunInput): Promise<RedeliverJobRunOutput> {
    const { jobs, unreadable } = await this.repository.load();
    const job = findJob(jobs, input.job, unreadable);
    const chosen = await this.chooseRun(job, input.run ?? null);
    refuseWithoutAnswer(job, chosen);

    const resolved = await this.checks.deliveryTargets(job);
    if ('error' in resolved) {
      throw new RunError(
        ERROR_CODES.RUNS.NOTHING_TO_DELIVER,
        `The answer of run ${chosen.id} cannot be delivered again: ${lowerFirst(resolved.error)}`,
      );
    }
    const usable = resolved.targets.filter((target) => target.kind === 'platform' || target.kind === 'bot-chat');
    const candidates = [...usable.map(describeTarget), ...resolved.problems.map((each) => each.target)];
    if (candidates.length === 0) {
      throw new RunError(
        ERROR_CODES.RUNS.NOTHING_TO_DELIVER,
        `Job ${job.id} '${job.name}' delivers only to its output files (deliver: ${job.deliver}), which hold the answer of run ${chosen.id} already; give it a chat target with "agent cron edit ${job.id} --deliver …" to send it somewhere.`,
      );
    }

    const claimed = await this.claims.claim(chosen, `run ${chosen.id} of job ${job.id} '${job.name}'`, `see "agent cron runs ${job.id}"`);
    const startedAt = new Date(claimed.started_at);
    let saved: RunRecord = claimed;
    try {
      refuseWithoutAnswer(job, claimed);
      const chosenTargets = new Set(targetsToRedeliver(candidates, claimed.deliveries));
      const unusable: RunDelivery[] = resolved.problems
        .filter((each) => chosenTargets.has(each.target))
        .map((each) => ({ target: each.target, outcome: 'failed', message_ids: [], error: each.problem }));
      const toSend = usable.filter((target) => chosenTargets.has(describeTarget(target)));
      // A bot-chat mailbox receipt of its own: this redelivery's claim, as a run's is its claim.
      const executionId = `${claimed.redelivery_claim!.by}@${claimed.redelivery_claim!.at}`;
      const sent = [...(await this.answers.sendAnswer(job, executionId, toSend, claimed.answer!)), ...unusable];
      const deliveries = mergeDeliveries(claimed.deliveries, sent);
      const outcome = outcomeOfDeliveries(deliveries);
      saved = this.claims.redelivered(claimed, {
        status: outcome.status,
        error: outcome.status === 'delivery_failed' ? outcome.deliveryError : null,
        deliveries,
        redelivered_by: input.by,
      });
      const marked = await this.repository.updateById(job.id, (current) => {
        if (!isLastRunOf(current, startedAt)) return { job: current, result: { job: current, lastRun: false } };
        const updated = redeliverLastRun(current, outcome);
        return { job: updated, result: { job: updated, lastRun: true } };
      });
      const level = outcome.status === 'delivery_failed' ? 'warn' : 'info';
      this.log[level](`the answer of run ${claimed.id} of job '${job.name}' was delivered again: ${outcome.status}`, {
        job: job.id,
        run: claimed.id,
      });
      return { job: marked?.job ?? job, run: saved, sent, outcome, lastRun: marked?.lastRun ?? false };
    } finally {
      await this.claims.release(saved);
    }
  }

  private async chooseRun(job: Job, id: string | null): Promise<RunRecord> {
    if (id !== null) {
      const run = await this.ledger.get(id);
      if (run === null || run.kind !== 'cron' || run.subject !== job.id) {
        throw new RunError(
          ERROR_CODES.RUNS.NOT_FOUND,
          `Job ${job.id} '${job.name}' has no recorded run "${id}"; "agent cron runs ${job.id} --json" gives the ids of its runs.`,
        );
      }
      return run;
    }
    const runs = await this.ledger.list({ kind: 'cron', subject: job.id, limit: Number.MAX_SAFE_INTEGER });
    const latest = latestRedeliverable(runs, CRON);
    if (latest !== null) return latest;
    if (runs.length === 0) {
      throw new RunError(
        ERROR_CODES.RUNS.NOTHING_TO_DELIVER,
        `Job ${job.id} '${job.name}' has no recorded run, so there is no answer to deliver again.`,
      );
    }
    throw new RunError(
      ERROR_CODES.RUNS.NOTHING_TO_DELIVER,
      `Job ${job.id} '${job.name}' has no recorded run with an answer to deliver: its last run ${whyNotRedeliverable(runs[0]!, CRON)}.`,
    );
  }
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function refuseWithoutAnswer(job: Job, run: RunRecord): void {
  const why = whyNotRedeliverable(run, CRON);
  if (why !== null)
    throw new RunError(
      ERROR_CODES.RUNS.NOTHING_TO_DELIVER,
      `Run ${run.id} of job ${job.id} '${job.name}' has no answer to deliver: it ${why}.`,
    );
}
