/**
 * How a cron run's failures are put into words: an agent run that failed, a run the gateway
 * stopped, a pre-run script that went wrong, and the error the run ledger records for a run.
 */
import type { RunOutcome } from '../../domain/RunOutcome.js';
import { errorText } from '../../domain/errors.js';
import { AgentRunError } from '../ports/AgentRunner.js';
import type { ScriptResult } from '../ports/ScriptExecutor.js';

export const RUN_CANCELLED = 'the gateway stopped before the run finished';

/** The error of a run cancelled by `signal`: `interrupted:` followed by the abort's reason when it is a string. */
export function interruptedError(signal: AbortSignal): string {
  return `interrupted: ${typeof signal.reason === 'string' ? signal.reason : RUN_CANCELLED}`;
}

/** The error of a run that failed: an AgentRunError's own sentence, anything else as `run failed: …`. */
export function runFailureMessage(error: unknown): string {
  return error instanceof AgentRunError ? error.message : `run failed: ${errorText(error)}`;
}

/** Whether a run's failure is one the run path did not expect (not an AgentRunError), to be logged as such. */
export function isUnexpectedFailure(error: unknown): boolean {
  return !(error instanceof AgentRunError);
}

/** What the ledger says went wrong in a run: the error, or the delivery's; null when nothing did. */
export function runError(outcome: RunOutcome): string | null {
  switch (outcome.status) {
    case 'error':
    case 'blocked_config':
      return outcome.error;
    case 'delivery_failed':
      return outcome.deliveryError;
    case 'ok':
    case 'delivery_queued':
      return null;
  }
}

/** The first line of a `## Script Error` block: what went wrong, in one sentence; null when nothing did. */
export function scriptProblem(result: ScriptResult, timeoutMs: number): string | null {
  if (result.startProblem !== null) return result.startProblem;
  if (result.timedOut) return `The script timed out after ${Math.round(timeoutMs / 1000)} s.`;
  if (result.signal !== null) return `The script was ended by signal ${result.signal}.`;
  if (result.exitCode === null) return 'The script was stopped before it finished.';
  if (result.exitCode !== 0) return `The script exited with code ${result.exitCode}.`;
  return null;
}
