import { ERROR_CODES, type ErrorCodeOf } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

type CliErrorCode =
  | ErrorCodeOf<'CLI'>
  | typeof ERROR_CODES.CHAT.QUERY_FILE
  | typeof ERROR_CODES.CONFIG.CHECK_FAILED
  | typeof ERROR_CODES.DELIVERY.LISTING_FAILED
  | typeof ERROR_CODES.WEBHOOK.TEST_REFUSED;

/** A failure that a command finds itself, rather than one a use case or a port reports. */
export class CliError extends AppError {
  constructor(code: CliErrorCode, message: string) {
    super(code, message);
  }
}
