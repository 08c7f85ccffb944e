import { ERROR_CODES } from '../../domain/errorCodes.js';
import { CliError } from './CliError.js';

/** The command line was used wrongly (exit code 2). */
export class CliUsageError extends CliError {
  constructor(message: string) {
    super(ERROR_CODES.CLI.USAGE, message);
  }
}
