import { AppError } from '../../domain/errors.js';

/** The command line was used wrongly (exit code 2). */
export class CliUsageError extends AppError {
  constructor(message: string) {
    super('CLI.USAGE', message);
  }
}
