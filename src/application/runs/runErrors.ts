/**
 * How every run kind puts its failures into words (docs/architecture.md, The run pipeline): an
 * agent run that failed, a run stopped before it finished, a port that broke its promise not to
 * throw, a pre-run script that went wrong, a delivery that did not get through, and the error the
 * run ledger records for a run. Each kind's own wording is named here, beside the others.
 */
import { escapeControlCharacters } from '../../domain/controlCharacters.js';
import { errorText } from '../../domain/errors.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import { AgentRunBlockedError, AgentRunError } from '../ports/AgentRunner.js';
import { RepoCommentError } from '../ports/RepoCommenter.js';
import type { ScriptResult } from '../ports/ScriptExecutor.js';

/** A cron run's error when the gateway (or the command) stopped it before it finished. */
export const RUN_CANCELLED = 'the gateway stopped before the run finished';
/** A webhook run's error when the worker stopped it before it finished; the event runs again after the restart. */
export const WORKER_STOPPED = 'the worker stopped before the run finished';

/** The error of a cron run cancelled by `signal`: `interrupted:` followed by the abort's reason when it is a string. */
export function interruptedError(signal: AbortSignal): string {
  return `interrupted: ${typeof signal.reason === 'string' ? signal.reason : RUN_CANCELLED}`;
}

/** The error of an agent run that failed: an AgentRunError's own sentence, anything else as `run failed: …`. */
export function runFailureMessage(error: unknown): string {
  return error instanceof AgentRunError ? error.message : `run failed: ${errorText(error)}`;
}

/**
 * Whether a run's failure means its configuration cannot serve it (an MCP server its toolsets
 * name does not start): the run is `blocked_config`, as a failed preflight's, not `error`.
 */
export function isConfigBlock(error: unknown): boolean {
  return error instanceof AgentRunBlockedError;
}

/** Whether a run's failure is one the run path did not expect (not an AgentRunError), to be logged as such. */
export function isUnexpectedFailure(error: unknown): boolean {
  return !(error instanceof AgentRunError);
}

/** The error of a webhook run in which a port broke its promise not to throw (a skill file that cannot be read …). */
export function unexpectedFailureMessage(error: unknown): string {
  return `webhook event failed unexpectedly: ${errorText(error)}`;
}

/** What a chat turn that failed answers in its conversation. */
export function chatFailureReply(error: unknown): string {
  return `Sorry, I could not answer that: ${errorText(error)}`;
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

/**
 * Why a delivery to one target failed, as what the platform or code host said: a comment the
 * code host refused names that no comment was posted.
 */
export function deliveryReason(error: unknown): string {
  return error instanceof RepoCommentError && error.reason !== 'failed' ? `${error.message} (no comment was posted)` : errorText(error);
}

/**
 * A delivery's error as a run kind records it: one line per target for a job or a chat turn (no control
 * character a platform's answer may hold reaches `last_delivery_error`, a report or a terminal),
 * and a sentence naming where it went for a webhook run (its record keeps line breaks and tabs).
 */
export function deliveryError(kind: 'cron' | 'webhook' | 'chat', where: string, reason: string): string {
  return kind !== 'webhook' ? escapeControlCharacters(reason) : escapeControlCharacters(`delivery to ${where} failed: ${reason}`, '\n\t');
}
