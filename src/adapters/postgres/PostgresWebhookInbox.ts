import { randomUUID } from 'node:crypto';
import type { Clock } from '../../application/ports/Clock.js';
import type { OrphanProcesses } from '../../application/ports/OrphanProcesses.js';
import type { ProcessIdentity } from '../../application/ports/ProcessIdentity.js';
import type { WebhookInbox } from '../../application/ports/WebhookInbox.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { WebhookError } from '../../domain/errors.js';
import { DELIVERY_MEMORY_MS } from '../../domain/webhook/DeliveryMemory.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import type { PostgresDatabase } from './PostgresDatabase.js';
import type { LeaseFence } from './PostgresReplicaLeases.js';
import {
  INSERT_EVENT,
  INSERT_EVENT_ONCE,
  CLAIM_NEXT,
  CLAIM_NEXT_SKIPPING,
  RECOVERY_CANDIDATES,
  RELEASE_GONE,
  COMPLETE,
  RELEASE_UNKNOWN,
  INSERT_GROUPED,
  INSERT_GROUPED_ONCE,
  CLAIM_GROUP,
  GROUP_MEMBERS,
  COMPLETE_GROUP,
  GROUP_RECOVERY_CANDIDATES,
  RELEASE_GONE_GROUPS,
} from './postgresWebhookInboxSql.js';
import { groupRunEvent } from '../../domain/webhook/coalesce.js';

/**
 * A claim by a claimant that holds no lease is taken as abandoned once it is this old. A gateway
 * takes its lease moments after it starts and gives it up only once it stopped its runs and let
 * go of its claims, so this covers a gateway between its first claim and its lease, and one that
 * stopped without reaching the database to let go. It equals the gateway lease (docs/scaling.md).
 */
export const UNLEASED_CLAIM_MS = 30_000;
/** How often old delivery keys (remembered more than an hour ago) are deleted, at most. */
const PRUNE_EVERY_MS = 10 * 60 * 1000;
/**
 * How often `recover` looks for gone claimants at most (its first call always looks): a gone
 * gateway is noticed once its lease lapsed, so looking every second, as the worker asks, would
 * cost a query a second for nothing.
 */
export const RECOVER_EVERY_MS = 5_000;
/**
 * What tells this process's claims from those an earlier process with the same claimant left (the
 * same host name and pid, as after a container restart): made once per process, so that every
 * instance in it shares it.
 */
const PROCESS_SESSION = randomUUID();

interface EventRow {
  id: string;
  route: string;
  event: string;
  delivery_id: string;
  payload: string;
  received_at: Date;
  traceparent: string | null;
}

/**
 * The webhook inbox in PostgreSQL (docs/webhooks.md, docs/scaling.md), shared by every gateway on
 * the database: an event accepted by any of them is run by whichever claims it first.
 *
 * - `accept` is one statement, so one round trip, and resolves once it is committed. A delivery
 *   key is a row of `agent_webhook_deliveries` with when it was last stored; the same statement
 *   takes or moves on that row only when it is an hour old or more, and inserts the event only
 *   then, so a delivery is stored once an hour whichever gateway receives it. Keys older than the
 *   hour are deleted now and then by `recover()`.
 * - `claimNext` takes the oldest event nobody holds (`FOR UPDATE SKIP LOCKED`), writing into it
 *   this process's claimant (`<host>:<pid>`, the name of its gateway lease), session and lease
 *   term; two gateways never get the same event, and never wait for each other. With a lease
 *   (`fence`), it claims only while the lease holds on the database's clock, in its term, and not
 *   at all while a renewal failed (docs/adr/0014-no-run-twice-after-an-outage.md).
 * - `complete` deletes the event's row when it is still this process's claim in the term it was
 *   claimed in, or nobody's: never a row another gateway took over and runs.
 * - `recover` releases the claims of claimants that are gone, so that the events wait again in
 *   their places. A claimant whose lease in `agent_gateways` holds is never gone. Without a live
 *   lease it is gone when its lease is (leaseGone: lapsed while a witness renewed its own for a
 *   whole lease), when this host sees its process dead (it is on this host), or, when it holds no
 *   lease at all (it gave it up at a clean stop, or never took one), once its claim is
 *   UNLEASED_CLAIM_MS old; every age is taken on the database's clock. A gateway whose own lease
 *   is in doubt judges nobody. Claims under this process's own claimant made by an
 *   earlier process (the same host name and pid, as after a container restart) are released too.
 *   With `orphans`, the processes a claimant seen dead on this host left running are killed
 *   first, so that none finishes a run that is about to run again.
 * - `close` releases this process's claims (runs cut short by a stop), so that the other
 *   gateways take them over at once; it leaves the database's pool open (its owner closes it).
 *
 * Every failure of the database is the DatabaseUnavailableError of PostgresDatabase, naming the
 * database. Bind one instance per process: claims are this process's, not the instance's.
 */
export class PostgresWebhookInbox implements WebhookInbox {
  private readonly claimant: string;
  private recovering: Promise<number> | null = null;
  /** When old delivery keys were last deleted (ms), or null before the first time. */
  private prunedAt: number | null = null;
  /** When `recover` last looked (and succeeded): it looks again RECOVER_EVERY_MS later at the earliest. */
  private recoveredAt: number | null = null;

  constructor(
    private readonly database: PostgresDatabase,
    private readonly identity: ProcessIdentity,
    private readonly clock: Clock,
    private readonly orphans?: OrphanProcesses,
    /** This process's gateway lease, when it holds one: its claims are made and completed in its term. */
    private readonly fence?: LeaseFence,
  ) {
    this.claimant = identity.claimant();
  }

  /** The events this process claimed and has not completed, with the term each was claimed in. */
  private readonly claims = new Map<string, number | null>();
  /** The groups of coalesced events this process claimed and has not completed, with their terms. */
  private readonly groupClaims = new Map<string, number | null>();
  /**
   * Whether groups of coalesced events may wait (this process stored one, or the last recovery
   * saw one): only then does a claim look for them, so that other routes' claims cost what they did.
   */
  private groupsMayWait = false;
  /** Whether a claim failed: its statement may have been committed all the same, leaving a claim nobody runs. */
  private claimUncertain = false;

  /** The term this process claims in (null: no lease, unfenced), or undefined when it may not claim now (its lease in doubt). */
  private claimingTerm(): number | null | undefined {
    const term = this.fence?.term() ?? null;
    if (term === null) return null;
    return this.fence!.holds() ? term.epoch : undefined;
  }

  /**
   * Stores the event in one statement and resolves once it is committed; false (storing nothing)
   * when `deliveryKey` was stored within the hour, by any gateway. `payloadJson` is kept as it is.
   */
  async accept(event: WebhookEvent, payloadJson?: string, deliveryKey?: string): Promise<boolean> {
    if (event.coalesce !== undefined) return this.acceptGrouped(event, payloadJson, deliveryKey);
    const values = [
      event.id,
      event.route,
      event.event,
      event.deliveryId,
      payloadJson ?? JSON.stringify(event.payload),
      new Date(event.receivedAt),
    ];
    return this.insert(
      values,
      deliveryKey,
      { name: 'agent_webhook_accept', text: INSERT_EVENT },
      {
        name: 'agent_webhook_accept_once',
        text: INSERT_EVENT_ONCE,
      },
      event.traceparent,
    );
  }

  /**
   * Runs `plain` with `values`, or, with a delivery key, `once` with the key and the memory's
   * window after them: false when the key was seen within DELIVERY_MEMORY_MS (nothing stored).
   */
  private async insert(
    values: unknown[],
    deliveryKey: string | undefined,
    plain: { name: string; text: string },
    once: { name: string; text: string },
    traceparent: string | undefined,
  ): Promise<boolean> {
    if (deliveryKey === undefined) {
      await this.database.query(plain, [...values, traceparent ?? null]);
      return true;
    }
    const now = this.clock.now();
    const rows = await this.database.query(once, [
      ...values,
      deliveryKey,
      now,
      new Date(now.getTime() - DELIVERY_MEMORY_MS),
      traceparent ?? null,
    ]);
    return rows.length > 0;
  }

  /** Stores an event of a coalescing route in its group, in one statement (INSERT_GROUPED). */
  private async acceptGrouped(event: WebhookEvent, payloadJson?: string, deliveryKey?: string): Promise<boolean> {
    const receivedAt = new Date(event.receivedAt);
    const values = [
      event.id,
      event.route,
      event.event,
      event.deliveryId,
      payloadJson ?? JSON.stringify(event.payload),
      receivedAt,
      event.coalesce!.key,
      new Date(receivedAt.getTime() + event.coalesce!.windowMs),
    ];
    this.groupsMayWait = true;
    return this.insert(
      values,
      deliveryKey,
      { name: 'agent_webhook_accept_grouped', text: INSERT_GROUPED },
      {
        name: 'agent_webhook_accept_grouped_once',
        text: INSERT_GROUPED_ONCE,
      },
      event.traceparent,
    );
  }

  /**
   * Claims the oldest group due (or handed out before and released) of a route not skipped, and
   * reads its events; null when none.
   */
  private async claimGroup(epoch: number | null, skipped: string[]): Promise<WebhookEvent | null> {
    const [group] = await this.database.query<{ id: string; was_closed: boolean }>(
      { name: 'agent_webhook_claim_group', text: CLAIM_GROUP },
      [this.claimant, PROCESS_SESSION, epoch, this.clock.now(), skipped],
    );
    if (group === undefined) return null;
    this.groupClaims.set(group.id, epoch);
    const rows = await this.database.query<EventRow>({ name: 'agent_webhook_group_members', text: GROUP_MEMBERS }, [group.id]);
    return groupRunEvent(
      group.id,
      rows.map((row) => this.eventOf(row)),
      group.was_closed,
    );
  }

  /**
   * Releases the claims of gone claimants (see the class comment) and returns how many; calls
   * made while one runs share it. Deletes delivery keys older than the hour every ten minutes.
   */
  recover(): Promise<number> {
    // A gateway whose own lease is in doubt (the database away) judges nobody.
    if (this.claimingTerm() === undefined) return Promise.resolve(0);
    const now = this.clock.now().getTime();
    if (this.recovering === null && this.recoveredAt !== null && now - this.recoveredAt < RECOVER_EVERY_MS && now >= this.recoveredAt)
      return Promise.resolve(0);
    this.recovering ??= this.releaseGone()
      .then((released) => {
        this.recoveredAt = now;
        return released;
      })
      .finally(() => {
        this.recovering = null;
      });
    return this.recovering;
  }

  /** The oldest event nobody holds, of a route not in `skipRoutes`, now claimed by this process; null when none waits. */
  async claimNext(skipRoutes?: ReadonlySet<string>): Promise<WebhookEvent | null> {
    // A lease in doubt (a renewal failed or is late): no run starts until it is renewed.
    const epoch = this.claimingTerm();
    if (epoch === undefined) {
      throw new WebhookError(
        ERROR_CODES.WEBHOOK.INBOX_UNAVAILABLE,
        `this gateway's lease in the database ${this.database.location.label} is not renewed yet; it starts no run until it is`,
      );
    }
    const skipped = [...(skipRoutes ?? [])];
    let row: EventRow | undefined;
    try {
      if (this.claimUncertain) await this.releaseUnknownClaims(epoch);
      if (this.groupsMayWait) {
        const group = await this.claimGroup(epoch, skipped);
        if (group !== null) return group;
      }
      [row] =
        skipped.length === 0
          ? await this.database.query<EventRow>({ name: 'agent_webhook_claim_next', text: CLAIM_NEXT }, [
              this.claimant,
              PROCESS_SESSION,
              epoch,
            ])
          : await this.database.query<EventRow>({ name: 'agent_webhook_claim_next_skipping', text: CLAIM_NEXT_SKIPPING }, [
              this.claimant,
              PROCESS_SESSION,
              epoch,
              skipped,
            ]);
    } catch (error) {
      this.claimUncertain = true;
      throw error;
    }
    if (row === undefined) return null;
    this.claims.set(row.id, epoch);
    return this.eventOf(row);
  }

  /**
   * Deletes the event when its run is this process's (see COMPLETE); nothing for an id the inbox
   * does not hold, or one another gateway took over meanwhile.
   */
  async complete(eventId: string): Promise<void> {
    if (this.groupClaims.size > 0 && this.groupClaims.has(eventId)) {
      await this.database.query({ name: 'agent_webhook_complete_group', text: COMPLETE_GROUP }, [
        eventId,
        this.claimant,
        this.groupClaims.get(eventId)!,
      ]);
      this.groupClaims.delete(eventId);
      return;
    }
    const epoch = this.claims.has(eventId) ? this.claims.get(eventId)! : (this.fence?.term()?.epoch ?? null);
    await this.database.query({ name: 'agent_webhook_complete', text: COMPLETE }, [eventId, this.claimant, epoch]);
    this.claims.delete(eventId);
  }

  /**
   * Gives back the claims of this process in term `epoch` it does not know of: a claim whose
   * statement was committed while its answer was lost (the connection cut at that moment) would
   * otherwise stay claimed by a live gateway that never runs it.
   */
  private async releaseUnknownClaims(epoch: number | null): Promise<void> {
    const known = [...this.claims.entries()].filter(([, claimedIn]) => claimedIn === epoch).map(([id]) => id);
    await this.database.query(RELEASE_UNKNOWN, [this.claimant, epoch, known, PROCESS_SESSION]);
    this.claimUncertain = false;
  }

  /** Events accepted and not completed, by every gateway on the database, claimed or not. */
  async pending(): Promise<number> {
    const [row] = await this.database.query<{ count: number }>(
      'SELECT ((SELECT count(*) FROM agent_webhook_events) + (SELECT count(*) FROM agent_webhook_group_events))::int AS count',
    );
    return row?.count ?? 0;
  }

  /**
   * Releases this process's claims so that the other gateways take them over at once. Never
   * throws: claims it could not release are recovered by the others once its lease is gone.
   */
  async close(): Promise<void> {
    await this.recovering?.catch(() => undefined);
    this.claims.clear();
    this.groupClaims.clear();
    for (const table of ['agent_webhook_events', 'agent_webhook_groups']) {
      await this.database
        .query(`UPDATE ${table} SET claimant = NULL, claim_session = NULL, claimed_at = NULL WHERE claimant = $1`, [this.claimant])
        .catch(() => undefined);
    }
  }

  private async releaseGone(): Promise<number> {
    const now = this.clock.now();
    await this.pruneDeliveries(now);
    const [groups] = await this.database.query<{ waiting: boolean }>('SELECT EXISTS (SELECT 1 FROM agent_webhook_groups) AS waiting');
    this.groupsMayWait = groups?.waiting === true;
    const candidates = await this.database.query<{ claimant: string }>(RECOVERY_CANDIDATES, [this.claimant, PROCESS_SESSION]);
    if (this.groupsMayWait)
      candidates.push(...(await this.database.query<{ claimant: string }>(GROUP_RECOVERY_CANDIDATES, [this.claimant, PROCESS_SESSION])));
    if (candidates.length === 0) return 0;
    const deadHere = [...new Set(candidates.map((row) => row.claimant))].filter(
      (claimant) => claimant !== this.claimant && this.identity.isAlive(claimant) === false,
    );
    if (this.orphans) for (const claimant of deadHere) await this.orphans.killOrphansOf(claimant);
    const released = await this.database.query(RELEASE_GONE, [this.claimant, PROCESS_SESSION, deadHere, UNLEASED_CLAIM_MS]);
    const releasedGroups = this.groupsMayWait
      ? await this.database.query(RELEASE_GONE_GROUPS, [this.claimant, PROCESS_SESSION, deadHere, UNLEASED_CLAIM_MS])
      : [];
    return released.length + releasedGroups.length;
  }

  /** Deletes the delivery keys stored more than an hour ago, once every PRUNE_EVERY_MS at most. */
  private async pruneDeliveries(now: Date): Promise<void> {
    if (this.prunedAt !== null && now.getTime() - this.prunedAt < PRUNE_EVERY_MS) return;
    await this.database.query('DELETE FROM agent_webhook_deliveries WHERE seen_at <= $1', [new Date(now.getTime() - DELIVERY_MEMORY_MS)]);
    this.prunedAt = now.getTime();
  }

  /**
   * The event a row holds. A payload that is not a JSON object (a row not written by this
   * service) is reported; the event stays claimed by this process, so the next claim goes on.
   */
  private eventOf(row: EventRow): WebhookEvent {
    let payload: unknown;
    try {
      payload = JSON.parse(row.payload);
    } catch {
      payload = undefined;
    }
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      throw new WebhookError(
        ERROR_CODES.WEBHOOK.INBOX_UNAVAILABLE,
        `The webhook event ${row.id} in the database ${this.database.location.label} has a payload that is not a JSON object; it is left claimed by ${this.claimant} and not run (delete its row from agent_webhook_events once looked at).`,
      );
    }
    return {
      id: row.id,
      route: row.route,
      event: row.event,
      deliveryId: row.delivery_id,
      payload: payload as Record<string, unknown>,
      receivedAt: row.received_at.toISOString(),
      ...(row.traceparent !== null ? { traceparent: row.traceparent } : {}),
    };
  }
}
