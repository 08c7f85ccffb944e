import { AppError, errorText } from '../../domain/errors.js';

/** Exit codes (decisions §9): 1 for a failure, 2 for a usage error. The only place they are chosen. */
export function exitCodeFor(error: unknown): number {
  return error instanceof AppError && error.code === 'CLI.USAGE' ? 2 : 1;
}

/** One clear sentence; the stack trace only with --debug. */
export function messageFor(error: unknown, debug: boolean): string {
  const detail = debug && error instanceof Error && error.stack ? `\n${error.stack}` : '';
  if (error instanceof AppError) return `error: ${error.message}${detail}`;
  const text = errorText(error);
  return `error: something unexpected went wrong: ${text} (run again with --debug for details).${detail}`;
}
