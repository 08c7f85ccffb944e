/** The budget arguments of the `cronjob` tool (docs/runs.md, Budgets): a job's limits, as `--max-turns` and the others set them. */
import { ToolInputError } from '../../application/agent/ports/Tool.js';
import { JOB_BUDGET_KEYS, type JobChanges } from '../../domain/Job.js';
import type { ToolArguments } from './ToolArguments.js';

/** `max_turns`, `max_tokens`, `max_cost`, `max_cost_per_day`: the limits given (null: the job's no more); undefined when none is. */
export function budgetInput(input: ToolArguments): JobChanges['budget'] | undefined {
  const budget: NonNullable<JobChanges['budget']> = {};
  for (const key of JOB_BUDGET_KEYS) {
    const whole = key === 'max_turns' || key === 'max_tokens';
    const value = whole ? input.nullableInteger(key) : input.nullableNumber(key);
    if (value === undefined) continue;
    if (value !== null && value <= 0) {
      throw new ToolInputError(
        `cronjob: "${key}" must be ${whole ? 'a whole number of 1 or more' : 'an amount of US dollars above 0'}, or null.`,
      );
    }
    budget[key] = value;
  }
  return Object.keys(budget).length > 0 ? budget : undefined;
}

/** The budget arguments' JSON Schema, among the tool's parameters. */
export const BUDGET_PARAMETERS = {
  max_turns: {
    type: ['integer', 'null'],
    description: 'A run that has made this many model turns stops instead of making another; null uses the configured default.',
  },
  max_tokens: {
    type: ['integer', 'null'],
    description: 'A run stops once its input and output tokens reach this many; null uses the configured default.',
  },
  max_cost: {
    type: ['number', 'null'],
    description: 'A run stops once it has cost this many US dollars; null uses the configured default.',
  },
  max_cost_per_day: {
    type: ['number', 'null'],
    description: "No run starts while the job's runs of the last 24 h have cost this many US dollars; null: no cap of its own.",
  },
};
