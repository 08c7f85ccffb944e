/**
 * How a webhook run's failures are put into words: an agent run that failed, a run the worker
 * stopped, and a run that failed where nothing was to throw.
 */
import { errorText } from '../../domain/errors.js';
import { AgentRunError } from '../ports/AgentRunner.js';

/** The error of a run aborted because the worker is stopping. */
export const WORKER_STOPPED = 'the worker stopped before the run finished';

/** The error of an agent run that failed: an AgentRunError's own sentence, anything else as `run failed: …`. */
export function runFailureMessage(error: unknown): string {
  return error instanceof AgentRunError ? error.message : `run failed: ${errorText(error)}`;
}

/** The error of a run in which a port broke its promise not to throw (a skill file that cannot be read …). */
export function unexpectedFailureMessage(error: unknown): string {
  return `webhook event failed unexpectedly: ${errorText(error)}`;
}
