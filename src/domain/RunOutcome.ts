/** The closed set of `last_status` literals. Consumers map each one explicitly. */
export const LAST_STATUSES = ['ok', 'error', 'delivery_failed', 'blocked_config', 'delivery_queued'] as const;
export type LastStatus = (typeof LAST_STATUSES)[number];

/** The statuses that count as a failure: in a failure streak, in the alerts, in "failed jobs". */
export const FAILED_STATUSES = ['error', 'delivery_failed', 'blocked_config'] as const satisfies readonly LastStatus[];
export type FailedStatus = (typeof FAILED_STATUSES)[number];

/** Whether a run with this status failed (a queued delivery has not, yet). */
export function isFailedStatus(status: LastStatus | null): status is FailedStatus {
  return status !== null && (FAILED_STATUSES as readonly LastStatus[]).includes(status);
}

export function isLastStatus(value: unknown): value is LastStatus {
  return typeof value === 'string' && (LAST_STATUSES as readonly string[]).includes(value);
}

/** How one run ended; the marking step turns it into `last_status` and its detail field. */
export type RunOutcome =
  | { status: 'ok' }
  | { status: 'error'; error: string }
  | { status: 'blocked_config'; error: string }
  /** `queued`: bot-chat receipts admitted to a mailbox alongside the failure (still recorded). */
  | { status: 'delivery_failed'; deliveryError: string; queued?: string[] }
  | { status: 'delivery_queued'; receipts: string[] };

/** Whether the agent itself produced an answer (delivery may still have failed). */
export function agentSucceeded(outcome: RunOutcome): boolean {
  switch (outcome.status) {
    case 'ok':
    case 'delivery_failed':
    case 'delivery_queued':
      return true;
    case 'error':
    case 'blocked_config':
      return false;
  }
}
