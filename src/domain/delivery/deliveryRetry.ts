/** Why one attempt to send a part failed, as the delivery path sees it. */
export type SendFailureKind =
  /** 429: wait the platform's hint and try again. */
  | 'rate_limited'
  /** 5xx, a network error or no answer in time: back off and try again. */
  | 'unavailable'
  /** Any other refusal (4xx, an error in a 200 answer): retrying would not help. */
  | 'refused';

/** Attempts per part, the first included (docs/delivery.md). */
export const MAX_SEND_ATTEMPTS = 3;
/** The longest wait for a platform's Retry-After. */
export const MAX_RETRY_AFTER_MS = 60_000;
const BACKOFF_MS = [1_000, 2_000, 4_000];

/**
 * How long to wait before attempt `attempt + 1` after attempt `attempt` (1-based) failed,
 * or null when the part has failed for good.
 */
export function retryDelayMs(kind: SendFailureKind, attempt: number, retryAfterMs: number | null): number | null {
  if (kind === 'refused' || attempt >= MAX_SEND_ATTEMPTS) return null;
  if (kind === 'rate_limited') {
    const hint = retryAfterMs ?? BACKOFF_MS[attempt - 1]!;
    return Math.min(Math.max(hint, 0), MAX_RETRY_AFTER_MS);
  }
  return BACKOFF_MS[attempt - 1] ?? BACKOFF_MS.at(-1)!;
}
