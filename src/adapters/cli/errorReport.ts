import { ERROR_CODES } from '../../domain/errorCodes.js';
import { escapeControlCharacters } from '../../domain/controlCharacters.js';
import { AppError, errorText } from '../../domain/errors.js';
import { ConfigProblemsError } from '../config/ConfigError.js';

/**
 * Exit codes: 2 for a usage error (`CLI.USAGE`), 1 for every other failure. The
 * only place the command line turns an error into an exit code.
 */
export function exitCodeFor(error: unknown): number {
  return error instanceof AppError && error.code === ERROR_CODES.CLI.USAGE ? 2 : 1;
}

/**
 * One clear sentence; the stack trace only with --debug. A message may quote what a platform, a
 * listener or a file said, so its control characters other than line breaks and tabs are
 * escaped before they reach the terminal.
 */
export function messageFor(error: unknown, debug: boolean): string {
  const detail = debug && error instanceof Error && error.stack ? `\n${error.stack}` : '';
  // Several sentences (the gateway's start-up problems): each on its own line, as one error each.
  if (error instanceof ConfigProblemsError)
    return escapeControlCharacters(error.sentences.map((line) => `error: ${line}`).join('\n') + detail, '\n\t');
  if (error instanceof AppError) return escapeControlCharacters(`error: ${error.message}${detail}`, '\n\t');
  const text = errorText(error);
  return escapeControlCharacters(`error: something unexpected went wrong: ${text} (run again with --debug for details).${detail}`, '\n\t');
}
