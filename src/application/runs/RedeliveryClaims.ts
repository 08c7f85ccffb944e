/**
 * The claim every redelivery takes on its run in the ledger (cron and webhook alike), so that two
 * redeliveries of one run never both send it, and the run's record as a redelivery leaves it.
 */
import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { errorText, RunError } from '../../domain/errors.js';
import { isAbandonedClaim } from '../../domain/runs/redelivery.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import type { Clock } from '../ports/Clock.js';
import type { Logger } from '../ports/Logger.js';
import type { ProcessIdentity } from '../ports/ProcessIdentity.js';
import type { RunLedger } from '../ports/RunLedger.js';
import { TOKENS } from '../ports/tokens.js';

/** Claims and releases runs for their redelivery. */
@injectable()
export class RedeliveryClaims {
  constructor(
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(TOKENS.ProcessIdentity) private readonly identity: ProcessIdentity,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /**
   * Claims `run` in the ledger for a redelivery by this process: the run as claimed. A claim
   * another redelivery holds is taken over only when it is abandoned (its process gone, or older
   * than REDELIVERY_CLAIM_MS); otherwise RUNS.BUSY, `what` naming the run in the sentence
   * (`run … of job …`) and `then` saying what to do after.
   */
  async claim(run: RunRecord, what: string, then: string): Promise<RunRecord> {
    const claim = { by: this.identity.claimant(), at: this.clock.now().toISOString() };
    const claimed = await this.ledger.claimForRedelivery(run.id, claim, null);
    if (claimed !== null) return claimed;
    const held = (await this.ledger.get(run.id))?.redelivery_claim ?? null;
    if (held !== null && isAbandonedClaim(held, this.clock.now(), this.identity.isAlive(held.by))) {
      const taken = await this.ledger.claimForRedelivery(run.id, claim, held);
      if (taken !== null) return taken;
    }
    const who = held === null ? 'another process' : `${held.by} (since ${held.at})`;
    throw new RunError(
      ERROR_CODES.RUNS.BUSY,
      `The answer of ${what} is being delivered again by ${who}; wait for that to end, then ${then}.`,
    );
  }

  /** The run as a redelivery leaves it: `changes` made, delivered again now, without the claim. */
  redelivered(claimed: RunRecord, changes: Partial<RunRecord>): RunRecord {
    return { ...claimed, ...changes, redelivered_at: this.clock.now().toISOString(), redelivery_claim: null };
  }

  /**
   * Saves the run as the redelivery left it, without the claim. A ledger that cannot take it is
   * logged: the delivery was made, and the claim lapses as an abandoned one.
   */
  async release(run: RunRecord): Promise<void> {
    try {
      await this.ledger.save({ ...run, redelivery_claim: null });
    } catch (error) {
      this.log.warn(`could not write run ${run.id} to the run ledger after delivering its answer again`, {
        run: run.id,
        error: errorText(error),
      });
    }
  }
}
