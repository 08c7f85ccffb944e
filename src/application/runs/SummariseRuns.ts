import { inject, injectable } from 'inversify';
import {
  countBy,
  costPerDayPerModel,
  durationsPerSubject,
  RUN_STATUSES,
  runsPerDay,
  runsPerHour,
} from '../../domain/runs/runStatistics.js';
import type { CostPerDay, RunDurations, RunHistogram } from '../../domain/runs/runStatistics.js';
import type { RunStatus } from '../../domain/runs/RunRecord.js';
import type { Clock } from '../ports/Clock.js';
import type { RunLedger } from '../ports/RunLedger.js';
import { TOKENS } from '../ports/tokens.js';

/** The most runs one summary reads: the ledger keeps 200 per job or route and 30 days by default. */
export const SUMMARISED_RUNS = 50_000;

/** How long a summary is given again before the ledger is read anew. */
export const SUMMARY_KEPT_MS = 2000;

export interface RunSummary {
  /** When it was made (ISO 8601 UTC). */
  at: string;
  /** The runs of the last 24 hours, per hour, by status. */
  perHour: RunHistogram;
  /** The runs of the last 30 days, per day, by status. */
  perDay: RunHistogram;
  /** The runs of the last 24 hours, by status. */
  last24h: Record<RunStatus, number>;
  /** What the runs of the last 30 days cost, per day and model. */
  cost: CostPerDay;
  /** How long each job's and route's finished runs of the last 30 days took. */
  durations: RunDurations[];
}

/**
 * The dashboard's overview of the run ledger (docs/dashboard.md, Overview): cron and webhook
 * runs per hour over the last 24 hours and per day over 30 days, stacked by status, the cost per
 * day per model, and each job's median and 95th percentile duration. Reads only.
 */
@injectable()
export class SummariseRuns {
  /** The last summary made (or being made), kept for SUMMARY_KEPT_MS. */
  private last: { at: number; timeZone: string; summary: Promise<RunSummary> } | null = null;

  constructor(
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  /**
   * Days and hours are those of `timeZone` (the configured zone). A summary made in the last
   * SUMMARY_KEPT_MS is given again, and callers at the same moment share one read: every open
   * page follows the ledger as runs end, and a burst of runs must not make each of them read it
   * whole at each end.
   */
  execute(input: { timeZone: string }): Promise<RunSummary> {
    const now = this.clock.now().getTime();
    const kept = this.last;
    if (kept && kept.timeZone === input.timeZone && now >= kept.at && now - kept.at < SUMMARY_KEPT_MS) return kept.summary;
    const summary = this.summarise(input.timeZone);
    this.last = { at: now, timeZone: input.timeZone, summary };
    summary.catch(() => {
      if (this.last?.summary === summary) this.last = null;
    });
    return summary;
  }

  private async summarise(timeZone: string): Promise<RunSummary> {
    const input = { timeZone };
    const now = this.clock.now();
    const since = now.getTime() - 31 * 86_400_000;
    const runs = (await this.ledger.list({ limit: SUMMARISED_RUNS })).filter((run) => Date.parse(run.started_at) >= since);
    const perHour = runsPerHour(runs, now, 24, input.timeZone);
    const perDay = runsPerDay(runs, now, 30, input.timeZone);
    const dayAgo = now.getTime() - 86_400_000;
    const recent = runs.filter((run) => Date.parse(run.started_at) > dayAgo);
    return {
      at: now.toISOString(),
      perHour,
      perDay,
      last24h: countBy(recent, RUN_STATUSES, (run) => run.status),
      cost: costPerDayPerModel(runs, now, 30, input.timeZone),
      durations: durationsPerSubject(runs.filter((run) => Date.parse(run.started_at) >= perDay.starts[0]!)),
    };
  }
}
