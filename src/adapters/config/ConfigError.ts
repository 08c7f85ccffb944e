import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

type ConfigErrorCode = typeof ERROR_CODES.CONFIG.INVALID | typeof ERROR_CODES.CONFIG.UNREADABLE;

/** config.yaml, or a setting read from the environment, cannot be read or has a wrong value. */
export class ConfigError extends AppError {
  constructor(code: ConfigErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
