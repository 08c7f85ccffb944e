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
    const status = error.status;
    const detail = detailOf(error);
    if (status === undefined) {
      return new ModelCallError('server', `${endpoint} reported an error in the middle of its answer: ${detail}`, { cause: error });
    }
    if (status === 429) {
      return new ModelCallError('rate_limited', `${endpoint} answered HTTP 429 (rate-limited): ${detail}`, {
        status,
        retryAfterMs: retryAfterFrom(error.headers),
        cause: error,
      });
    }
    if (status === 401 || status === 403) {
      return new ModelCallError('auth', `${endpoint} refused the API key (HTTP ${status}: ${detail})`, { status, cause: error });
    }
    if (status >= 500 || status === 408) {
      return new ModelCallError('server', `${endpoint} answered HTTP ${status}: ${detail}`, { status, cause: error });
    }
    return new ModelCallError('rejected', `${endpoint} refused the request (HTTP ${status}: ${detail})`, { status, cause: error });
  }
  const code = networkCode(error);
  if (code !== null || (error instanceof TypeError && error.message === 'terminated')) {
    return new ModelCallError('unreachable', `the connection to ${endpoint} broke off (${code ?? 'terminated'})`, { cause: error });
  }
  throw error;
}

function retryAfterFrom(headers: Headers | undefined): number | null {
  const milliseconds = Number(headers?.get('retry-after-ms'));
  if (headers?.get('retry-after-ms') && Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  return retryAfterMs(headers?.get('retry-after'), Date.now());
}

/** The provider's own words: the `message` of its error body when there is one. */
function detailOf(error: Error & { error?: unknown }): string {
  const body = error.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const fromBody = typeof body?.message === 'string' ? body.message : typeof body?.error?.message === 'string' ? body.error.message : null;
  const text =
    (fromBody ?? error.message)
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

function networkReason(error: Error): string {
  return networkCode(error) ?? (error.cause instanceof Error ? error.cause.message : error.message);
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
