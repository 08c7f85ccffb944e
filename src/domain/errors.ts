import type {
  DeliveryErrorCode,
  ErrorCode,
  EventsErrorCode,
  JobErrorCode,
  RunsErrorCode,
  ScheduleErrorCode,
  WebhookErrorCode,
} from './errorCodes.js';

/**
 * The one error base of the service. `code` is stable and machine-readable, one of the catalogue
 * in errorCodes.ts; `message` is one sentence a user can act on (what is wrong, what to do).
 * Driving adapters map codes to exit codes or HTTP statuses in exactly one place each.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Input that a user gave us is wrong; they can fix it and retry. */
export class InvalidInputError extends AppError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
  }
}

/** A job cannot be found, is ambiguous or unreadable, or its state forbids the change asked for. */
export class JobError extends AppError {
  constructor(code: JobErrorCode, message: string) {
    super(code, message);
  }
}

/** A job as the user described it cannot be: an empty prompt, a bad repeat count, a name taken. */
export class InvalidJobError extends InvalidInputError {
  constructor(code: JobErrorCode, message: string) {
    super(code, message);
  }
}

/** A schedule or time zone the user gave is wrong, in the past, or never fires. */
export class InvalidScheduleError extends InvalidInputError {
  constructor(code: ScheduleErrorCode, message: string) {
    super(code, message);
  }
}

/** A delivery target, or the text to deliver, that the user gave cannot be used. */
export class InvalidDeliveryError extends InvalidInputError {
  constructor(code: DeliveryErrorCode, message: string) {
    super(code, message);
  }
}

/** A webhook subscription, its records or its inbox cannot be found or used. */
export class WebhookError extends AppError {
  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** A webhook subscription as the user described it cannot be: a bad name, delivery or secret. */
export class InvalidWebhookError extends InvalidInputError {
  constructor(code: WebhookErrorCode, message: string) {
    super(code, message);
  }
}

/** A recorded run cannot be found, or its answer cannot be delivered again (`agent cron redeliver`, `agent webhook redeliver`). */
export class RunError extends AppError {
  constructor(code: RunsErrorCode, message: string) {
    super(code, message);
  }
}

/** What went wrong, as text: an Error's message, or whatever else was thrown, as a string. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An `events_out` subscription cannot be found, or its receiver did not take an event. */
export class EventsError extends AppError {
  constructor(code: EventsErrorCode, message: string) {
    super(code, message);
  }
}
