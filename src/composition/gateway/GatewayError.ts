import type { ErrorCodeOf } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

/** The gateway cannot start its listener, or cannot make its home. */
export class GatewayError extends AppError {
  constructor(code: ErrorCodeOf<'GATEWAY'>, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
