/**
 * The one error base of the service. `code` is stable and machine-readable; `message` is one
 * sentence a user can act on (what is wrong, what to do). Driving adapters map codes to exit
 * codes or HTTP statuses in exactly one place each.
 */
export class AppError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Input that a user gave us is wrong; they can fix it and retry. */
export class InvalidInputError extends AppError {
  constructor(code: string, message: string) {
    super(code, message);
  }
}

/** What went wrong, as text: an Error's message, or whatever else was thrown, as a string. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
