/**
 * The daily caps of every run kind (docs/runs.md, Budgets): a job's `--max-cost-per-day` over its
 * own runs and `agent.budget.max_cost_per_day` over every run, each held against what the runs
 * of the last 24 hours cost, as the run ledger sums it. A run past a cap does not start.
 */
import { inject, injectable } from 'inversify';
import { dailyBudgetMessage, isDailyBudgetError } from '../../domain/runs/usage.js';
import type { RunKind } from '../../domain/runs/RunRecord.js';
import type { Clock } from '../ports/Clock.js';
import type { RunLedger } from '../ports/RunLedger.js';
import { TOKENS } from '../ports/tokens.js';

const DAY_MS = 86_400_000;
/** How many of a job's latest runs are looked at for a notice already sent today. */
const RUNS_LOOKED_AT = 200;

/** Whose runs a cap counts. */
export interface BudgetOwner {
  kind: RunKind;
  /** The job's id or the route's name. */
  subject: string;
}

/** Holds runs against the daily caps. */
@injectable()
export class DailyBudgets {
  constructor(
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  /**
   * Why a run of `owner` may not start: `daily budget reached (…)` when its own runs of the last
   * 24 h cost `ownCap` or more, or every run `overallCap` or more; null when it may (or no cap is
   * set). A ledger that cannot be read blocks nothing.
   */
  async problemFor(owner: BudgetOwner, ownCap: number | null | undefined, overallCap: number | null | undefined): Promise<string | null> {
    if (ownCap == null && overallCap == null) return null;
    const since = new Date(this.clock.now().getTime() - DAY_MS);
    try {
      if (ownCap != null) {
        const own = await this.ledger.spentSince({ kind: owner.kind, subject: owner.subject, since });
        if (own.cost_usd >= ownCap) return dailyBudgetMessage(own.cost_usd, ownCap, 'job');
      }
      if (overallCap != null) {
        const all = await this.ledger.spentSince({ since });
        if (all.cost_usd >= overallCap) return dailyBudgetMessage(all.cost_usd, overallCap, 'all');
      }
    } catch {
      return null;
    }
    return null;
  }

  /** Whether a run of `owner` was already kept from starting by a daily cap in the last 24 h: its notice went out then. */
  async blockedEarlierToday(owner: BudgetOwner): Promise<boolean> {
    const since = this.clock.now().getTime() - DAY_MS;
    try {
      const runs = await this.ledger.list({ kind: owner.kind, subject: owner.subject, limit: RUNS_LOOKED_AT });
      return runs.some((run) => Date.parse(run.started_at) >= since && run.status === 'blocked_config' && isDailyBudgetError(run.error));
    } catch {
      return false;
    }
  }
}
