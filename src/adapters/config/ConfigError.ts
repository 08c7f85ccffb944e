import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

type ConfigErrorCode = typeof ERROR_CODES.CONFIG.INVALID | typeof ERROR_CODES.CONFIG.UNREADABLE;

/** config.yaml, or a setting read from the environment, cannot be read or has a wrong value. */
export class ConfigError extends AppError {
  constructor(code: ConfigErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * The configuration has problems that stop start-up: one sentence each, each naming what is
 * wrong and what to do, which the command line prints one a line, in the order found.
 */
export class ConfigProblemsError extends ConfigError {
  constructor(readonly sentences: readonly string[]) {
    super(ERROR_CODES.CONFIG.INVALID, sentences.join('\n'));
  }
}
