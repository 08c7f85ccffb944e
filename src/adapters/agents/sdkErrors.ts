import { ModelCallError } from '../../application/agent/ports/ChatModel.js';

/**
 * The error classes both official SDKs define (they share a generator): passed in by each model
 * module so that this file loads neither SDK.
 */
export interface SdkErrorClasses {
  APIError: abstract new (...args: never[]) => Error & { status?: number | undefined; headers?: Headers | undefined; error?: unknown };
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIUserAbortError: abstract new (...args: never[]) => Error;
}

/** How much of a provider's error text goes into a message (and so into `last_error`). */
const MAX_DETAIL_CHARS = 300;

/**
 * Translates whatever an SDK call or its stream threw into a ModelCallError (see
 * ModelCallFailure for the kinds). Errors that come from neither the SDK nor the network are
 * programming errors and are thrown on unchanged.
 */
export function modelCallErrorFrom(error: unknown, sdk: SdkErrorClasses, endpoint: string, signal: AbortSignal): ModelCallError {
  if (error instanceof ModelCallError) return error;
  if (signal.aborted || error instanceof sdk.APIUserAbortError) {
    return new ModelCallError('aborted', `the call to ${endpoint} was cancelled`, { cause: error });
  }
  if (error instanceof sdk.APIConnectionTimeoutError) {
    return new ModelCallError('unreachable', `could not reach ${endpoint} (timed out)`, { cause: error });
  }
  if (error instanceof sdk.APIConnectionError) {
    return new ModelCallError('unreachable', `could not reach ${endpoint} (${networkReason(error)})`, { cause: error });
  }
  if (error instanceof sdk.APIError) {
    const detail = detailOf(error.error, error.message);
    if (error.status === undefined) return midStreamError(endpoint, detail, error);
    return httpStatusError(
      endpoint,
      error.status,
      detail,
      retryAfterFrom((name) => error.headers?.get(name)),
      error,
    );
  }
  const unreachable = brokenConnection(error, endpoint);
  if (unreachable) return unreachable;
  throw error;
}

/** An error event inside a stream that had started well. */
export function midStreamError(endpoint: string, detail: string, cause?: unknown): ModelCallError {
  return new ModelCallError('server', `${endpoint} reported an error in the middle of its answer: ${detail}`, { cause });
}

/** The failure kind of an HTTP status other than 2xx (see ModelCallFailure). */
export function httpStatusError(
  endpoint: string,
  status: number,
  detail: string,
  retryAfter: number | null,
  cause?: unknown,
): ModelCallError {
  if (status === 429) {
    return new ModelCallError('rate_limited', `${endpoint} answered HTTP 429 (rate-limited): ${detail}`, {
      status,
      retryAfterMs: retryAfter,
      cause,
    });
  }
  if (status === 401 || status === 403) {
    return new ModelCallError('auth', `${endpoint} refused the API key (HTTP ${status}: ${detail})`, { status, cause });
  }
  if (status >= 500 || status === 408) {
    return new ModelCallError('server', `${endpoint} answered HTTP ${status}: ${detail}`, { status, cause });
  }
  return new ModelCallError('rejected', `${endpoint} refused the request (HTTP ${status}: ${detail})`, { status, cause });
}

/** A connection that could not be made or broke off, by its system error code; null for anything else. */
export function brokenConnection(error: unknown, endpoint: string): ModelCallError | null {
  const code = networkCode(error);
  if (code !== null || (error instanceof TypeError && error.message === 'terminated')) {
    return new ModelCallError('unreachable', `the connection to ${endpoint} broke off (${code ?? 'terminated'})`, { cause: error });
  }
  return null;
}

/** `retry-after-ms` (OpenAI's), else `Retry-After`, from a header lookup. */
export function retryAfterFrom(header: (name: string) => string | null | undefined): number | null {
  const exact = header('retry-after-ms');
  const milliseconds = Number(exact);
  if (exact && Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  return retryAfterMs(header('retry-after'), Date.now());
}

/** The provider's own words: the `message` of its error body when there is one, else `fallback`. */
export function detailOf(errorBody: unknown, fallback: string): string {
  const body = errorBody as { message?: unknown; error?: { message?: unknown } } | undefined;
  const fromBody = typeof body?.message === 'string' ? body.message : typeof body?.error?.message === 'string' ? body.error.message : null;
  const text =
    (fromBody ?? fallback)
      .replace(/\s+/g, ' ')
      // Providers quote the refused key, partly masked ("sk-proj-****abcd"); none of it goes further.
      .replace(/\b(sk|rk|pk)-[A-Za-z0-9_*-]{6,}/g, '[key hidden]')
      .trim() || 'no details';
  return text.length <= MAX_DETAIL_CHARS ? text : `${text.slice(0, MAX_DETAIL_CHARS - 1)}…`;
}

/** `ECONNREFUSED`, `ENOTFOUND` …: the first system error code along the cause chain. */
function networkCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** What a failed connection says: its system error code, else its cause's message. */
export function networkReason(error: unknown): string {
  // Read by shape: an error of another realm (a test's VM context) is no `instanceof Error` here.
  const { message, cause } = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    cause?: { message?: unknown };
  };
  const causeMessage = typeof cause?.message === 'string' ? cause.message : null;
  return networkCode(error) ?? causeMessage ?? (typeof message === 'string' ? message : String(error));
}

/**
 * How long a `Retry-After` header asks to wait, in milliseconds: delay-seconds (`30`, also
 * fractional) or an HTTP date. Null when the header is absent or unreadable.
 */
export function retryAfterMs(header: string | null | undefined, nowMs: number): number | null {
  const written = header?.trim();
  if (!written) return null;
  if (/^\d+(\.\d+)?$/.test(written)) return Math.round(Number(written) * 1000);
  const at = Date.parse(written);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
