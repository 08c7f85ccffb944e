import { ERROR_CODES, type ErrorCodeOf } from '../../domain/errorCodes.js';
import { AppError, InvalidInputError } from '../../domain/errors.js';

type FileStoreErrorCode =
  | ErrorCodeOf<'CONTEXT'>
  | ErrorCodeOf<'TICK'>
  | ErrorCodeOf<'PROFILE'>
  | typeof ERROR_CODES.OUTPUT.UNREADABLE
  | typeof ERROR_CODES.OUTPUT.UNAVAILABLE
  | typeof ERROR_CODES.RUNS.UNREADABLE
  | typeof ERROR_CODES.RUNS.UNAVAILABLE;

/**
 * A file or directory of the agent's home cannot be read, written or created (context files,
 * the tick lock, run reports, the run ledger), or a profile cannot be used.
 */
export class FileStoreError extends AppError {
  constructor(code: FileStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** A job id or report name given to the run output store cannot name a file. */
export class InvalidReportNameError extends InvalidInputError {
  constructor(message: string) {
    super(ERROR_CODES.OUTPUT.INVALID_NAME, message);
  }
}
