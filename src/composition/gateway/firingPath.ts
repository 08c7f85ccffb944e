import type { DispatchDueJobs } from '../../application/cron/DispatchDueJobs.js';
import type { FireOutcome, FiringPath } from '../../application/ports/SchedulerProvider.js';

/** Fires one slot of one job (the fire endpoint's half of the path); never throws. */
export type SlotFirer = (jobId: string, fireAt: string) => Promise<FireOutcome>;

/**
 * The gateway's one firing path (docs/plugins.md): `due()` claims and starts due jobs through
 * DispatchDueJobs (free run slots, lateness, grace on stop); `slot()` is the fire endpoint's
 * compare-and-set claim; both tell `onRunFinished` listeners when a run has ended and freed its
 * slot (its answer may still wait for its delivery, in its platform's lane).
 */
export function gatewayFiringPath(dispatcher: DispatchDueJobs, slot: SlotFirer): FiringPath {
  return {
    due: async () => ({ retrySoon: (await dispatcher.dispatch()).lockBusy }),
    claimAheadMs: dispatcher.claimAheadMs,
    slot,
    onRunFinished: (listener) => dispatcher.onJobReleased(listener),
  };
}

/** Until the fire endpoint is wired: a slot cannot be claimed here, so the portal tries again later. */
export const NO_SLOT_FIRER: SlotFirer = async () => ({ status: 'unavailable', retryAfterSeconds: 60 });
