import { ERROR_CODES } from '../../domain/errorCodes.js';
import { errorText, RunError } from '../../domain/errors.js';
import { isAbandonedClaim } from '../../domain/runs/redelivery.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import type { Clock } from '../ports/Clock.js';
import type { Logger } from '../ports/Logger.js';
import type { ProcessIdentity } from '../ports/ProcessIdentity.js';
import type { RunLedger } from '../ports/RunLedger.js';

/** What claiming and releasing a run for its redelivery takes. */
export interface RedeliveryClaimPorts {
  ledger: RunLedger;
  identity: ProcessIdentity;
  clock: Clock;
  log: Logger;
}

/**
 * Claims `run` in the ledger for a redelivery by this process, so that two redeliveries of one
 * run never both send it: the run as claimed. A claim another redelivery holds is taken over
 * only when it is abandoned (its process gone, or older than REDELIVERY_CLAIM_MS); otherwise
 * RUNS.BUSY, `what` naming the run in the sentence (`run … of job …`).
 */
export async function claimRunForRedelivery(ports: RedeliveryClaimPorts, run: RunRecord, what: string, then: string): Promise<RunRecord> {
  const claim = { by: ports.identity.claimant(), at: ports.clock.now().toISOString() };
  const claimed = await ports.ledger.claimForRedelivery(run.id, claim, null);
  if (claimed !== null) return claimed;
  const held = (await ports.ledger.get(run.id))?.redelivery_claim ?? null;
  if (held !== null && isAbandonedClaim(held, ports.clock.now(), ports.identity.isAlive(held.by))) {
    const taken = await ports.ledger.claimForRedelivery(run.id, claim, held);
    if (taken !== null) return taken;
  }
  const who = held === null ? 'another process' : `${held.by} (since ${held.at})`;
  throw new RunError(
    ERROR_CODES.RUNS.BUSY,
    `The answer of ${what} is being delivered again by ${who}; wait for that to end, then ${then}.`,
  );
}

/**
 * Saves the run as the redelivery left it, without the claim. A ledger that cannot take it is
 * logged: the delivery was made, and the claim lapses as an abandoned one.
 */
export async function releaseRun(ports: RedeliveryClaimPorts, run: RunRecord): Promise<void> {
  try {
    await ports.ledger.save({ ...run, redelivery_claim: null });
  } catch (error) {
    ports.log.warn(`could not write run ${run.id} to the run ledger after delivering its answer again`, {
      run: run.id,
      error: errorText(error),
    });
  }
}
