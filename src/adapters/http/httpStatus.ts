/**
 * The status for an error that escaped a handler of the listener (the webhook app, the fire
 * endpoint): a client error raised by Express or its body parser (a broken percent-encoding, a
 * body over the limit) keeps its 4xx status; anything else is the service's own failure, 500.
 * The one place the HTTP adapters choose a status from an error; what a use case reports is
 * not an error but an outcome, answered by each route.
 */
export function statusForError(error: unknown): number {
  if (typeof error !== 'object' || error === null) return 500;
  const { status, statusCode } = error as { status?: unknown; statusCode?: unknown };
  const candidate = typeof status === 'number' ? status : statusCode;
  return typeof candidate === 'number' && candidate >= 400 && candidate < 500 ? candidate : 500;
}
