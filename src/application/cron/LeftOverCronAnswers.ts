import { inject, injectable } from 'inversify';
import { errorText } from '../../domain/errors.js';
import { isAbandonedClaim } from '../../domain/runs/redelivery.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import type { Clock } from '../ports/Clock.js';
import type { Logger } from '../ports/Logger.js';
import type { ProcessIdentity } from '../ports/ProcessIdentity.js';
import type { RunLedger } from '../ports/RunLedger.js';
import { TOKENS } from '../ports/tokens.js';
import { PendingJobDeliveries, type PendingJobDelivery } from './PendingJobDeliveries.js';

/**
 * The cron answers a stopped or killed gateway left waiting for delivery (docs/delivery.md), taken
 * over at a gateway's start: each is claimed in the run ledger first (its claim's process gone, or
 * the claim older than REDELIVERY_CLAIM_MS), so that of several gateways only one sends it, and is
 * made ready for the targets it has not reached, without running the agent again. CronDeliveries
 * sends what this hands it.
 */
@injectable()
export class LeftOverCronAnswers {
  constructor(
    @inject(PendingJobDeliveries) private readonly pendings: PendingJobDeliveries,
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(TOKENS.ProcessIdentity) private readonly identity: ProcessIdentity,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /**
   * Claims the cron answers left waiting by processes that are gone and hands each to `deliver`
   * as it is claimed; resolves with how many there were. Never throws: a ledger that cannot be
   * read is logged, and the answers wait for the next start.
   */
  async takeOver(deliver: (pending: PendingJobDelivery) => void): Promise<number> {
    let waiting: RunRecord[];
    try {
      waiting = await this.ledger.pendingDeliveries('cron');
    } catch (error) {
      this.log.error(`cannot read the cron answers still waiting for delivery: ${errorText(error)}`);
      return 0;
    }
    let resumed = 0;
    for (const record of waiting) {
      try {
        const claimed = await this.claim(record);
        if (claimed === null) continue;
        const pending = await this.pendings.resume(claimed);
        if (pending === null) continue;
        resumed += 1;
        this.log.info(
          `delivering the answer of run ${record.id} of job '${record.name}', left waiting by a stopped gateway, without running the agent again`,
          {
            job: record.subject,
            run: record.id,
          },
        );
        deliver(pending);
      } catch (error) {
        this.log.error(`cannot take over the answer of run ${record.id} waiting for delivery: ${errorText(error)}`, {
          job: record.subject,
          run: record.id,
        });
      }
    }
    return resumed;
  }

  /** The run as claimed by this process, or null when a live process holds it or another claim won. */
  private async claim(record: RunRecord): Promise<RunRecord | null> {
    const held = record.redelivery_claim ?? null;
    if (held !== null && !isAbandonedClaim(held, this.clock.now(), this.identity.isAlive(held.by))) return null;
    const claim = { by: this.identity.claimant(), at: this.clock.now().toISOString() };
    return this.ledger.claimForRedelivery(record.id, claim, held);
  }
}
