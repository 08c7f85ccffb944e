/** A job's own limits: what each run may spend and how long it may take, and its runs' daily cap. */
import { ERROR_CODES } from './errorCodes.js';
import { InvalidJobError } from './errors.js';
import type { RunBudget } from './runs/usage.js';

/** A job's limits: those of each run, and what its runs of the last 24 h may cost together (US dollars). */
export interface JobBudget extends RunBudget {
  max_cost_per_day?: number | null;
}

export const JOB_BUDGET_KEYS = ['max_turns', 'max_tokens', 'max_cost', 'max_cost_per_day'] as const;

/** `budget` without the limits it leaves unset; null when it sets none. */
export function compactBudget(budget: JobBudget | null | undefined): JobBudget | null {
  if (!budget) return null;
  const kept: JobBudget = {};
  for (const key of JOB_BUDGET_KEYS) {
    const limit = budget[key];
    if (typeof limit === 'number' && Number.isFinite(limit) && limit > 0) kept[key] = limit;
  }
  return Object.keys(kept).length > 0 ? kept : null;
}

/** A run's time limit as stored: whole seconds, 1 or more; null for none. */
export function validateTimeout(seconds: number | null | undefined): number | null {
  if (seconds === null || seconds === undefined) return null;
  if (!Number.isSafeInteger(seconds) || seconds < 1) {
    throw new InvalidJobError(
      ERROR_CODES.JOB.INVALID_TIMEOUT,
      `The time limit ${seconds} is not valid; give a duration such as 90s, 10m or 2h.`,
    );
  }
  return seconds;
}
