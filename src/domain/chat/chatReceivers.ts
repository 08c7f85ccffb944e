/**
 * Where a gateway's receiver of one chat platform stands: `starting` (its first attempt under
 * way), `up` (receiving), `down` (it cannot receive now and is being started or reconnected
 * again), `standby` (it pulls from its platform, and another gateway sharing the store holds the
 * receiving role, so this one does not run it).
 */
export type ChatReceiverState = 'starting' | 'up' | 'down' | 'standby';

export interface ChatReceiverStatus {
  platform: string;
  state: ChatReceiverState;
  /** Since when it is in this state, ISO 8601 UTC. */
  since: string;
  /** Why it is down (one sentence, no secret); null in the other states. */
  error: string | null;
}

export const CHAT_RECEIVER_STATES: readonly ChatReceiverState[] = ['starting', 'up', 'down', 'standby'];

/** The pause before the first try again of a receiver that could not start or stopped. */
export const RECEIVER_RETRY_FIRST_MS = 1_000;
/** The longest pause between two tries of a receiver. */
export const RECEIVER_RETRY_MAX_MS = 60_000;

/**
 * How long to wait after the `failures`-th failure in a row (1 for the first): a ceiling doubling
 * from RECEIVER_RETRY_FIRST_MS up to RECEIVER_RETRY_MAX_MS, of which the upper half is jittered
 * by `random` (in [0, 1)), so that gateways sharing an outage do not all try at the same moment.
 */
export function receiverRetryDelayMs(failures: number, random: number): number {
  const doublings = Math.min(Math.max(failures, 1) - 1, 16);
  const ceiling = Math.min(RECEIVER_RETRY_MAX_MS, RECEIVER_RETRY_FIRST_MS * 2 ** doublings);
  const jitter = Math.min(Math.max(random, 0), 1);
  return Math.min(ceiling, Math.round(ceiling / 2 + (ceiling / 2) * jitter));
}

/** The receivers' states read back from JSON (a registration, a lease); whatever cannot be understood is left out. */
export function chatReceiverStatusesFrom(value: unknown): ChatReceiverStatus[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((each: unknown): ChatReceiverStatus[] => {
    if (typeof each !== 'object' || each === null) return [];
    const { platform, state, since, error } = each as Record<string, unknown>;
    if (typeof platform !== 'string' || typeof since !== 'string' || !CHAT_RECEIVER_STATES.includes(state as ChatReceiverState)) return [];
    return [{ platform, state: state as ChatReceiverState, since, error: typeof error === 'string' ? error : null }];
  });
}
