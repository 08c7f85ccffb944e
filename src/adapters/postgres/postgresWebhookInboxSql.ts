import { leaseGone } from './PostgresReplicaLeases.js';

/** The statements of the PostgreSQL webhook inbox (PostgresWebhookInbox.ts), each with what it does. */

export const EVENT_COLUMNS = 'id, route, event, delivery_id, payload, received_at, traceparent';

/** Stores an event, with its traceparent ($7, null without traces); returns its row. */
export const INSERT_EVENT = `
  INSERT INTO agent_webhook_events (id, route, event, delivery_id, payload, received_at, traceparent)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  RETURNING 1 AS stored`;

/**
 * Stores an event (its traceparent $10) only when its delivery key ($7) was not stored since $9 (an hour before $8,
 * now): the key's row is taken or moved on, and the event inserted, in one statement; no row
 * comes back for a duplicate. Two deliveries of one key at once: the second waits for the
 * first's row and then finds it fresh.
 */
export const INSERT_EVENT_ONCE = `
  WITH seen AS (
    INSERT INTO agent_webhook_deliveries AS known (key, seen_at) VALUES ($7, $8)
    ON CONFLICT (key) DO UPDATE SET seen_at = EXCLUDED.seen_at WHERE known.seen_at <= $9
    RETURNING 1
  )
  INSERT INTO agent_webhook_events (id, route, event, delivery_id, payload, received_at, traceparent)
  SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::timestamptz, $10::text FROM seen
  RETURNING 1 AS stored`;

/**
 * A claim is made only under a lease that holds on the database's clock, in the term this process
 * holds ($3; null for a process that holds no lease, whose claims are not fenced).
 */
export const UNDER_LIVE_TERM =
  '($3::bigint IS NULL OR EXISTS (SELECT 1 FROM agent_gateways own WHERE own.claimant = $1 AND own.epoch = $3::bigint AND own.lease_until >= now()))';

/** Claims the oldest event nobody holds, skipping rows another claim is taking. */
export const CLAIM_NEXT = `
  UPDATE agent_webhook_events SET claimant = $1, claim_session = $2, claim_epoch = $3::bigint, claimed_at = now()
  WHERE claimant IS NULL AND ${UNDER_LIVE_TERM} AND id = (
    SELECT id FROM agent_webhook_events
    WHERE claimant IS NULL
    ORDER BY seq LIMIT 1
    FOR UPDATE SKIP LOCKED
  )
  RETURNING ${EVENT_COLUMNS}`;

/**
 * CLAIM_NEXT among the routes not in $4: the routes waiting are listed by a skip scan of the
 * (route, seq) index (one step a route), and the first event of each one not skipped is looked
 * at, so a deep backlog of a skipped route is never read through.
 */
export const CLAIM_NEXT_SKIPPING = `
  UPDATE agent_webhook_events SET claimant = $1, claim_session = $2, claim_epoch = $3::bigint, claimed_at = now()
  WHERE claimant IS NULL AND ${UNDER_LIVE_TERM} AND id = (
    WITH RECURSIVE routes(route) AS (
      (SELECT route FROM agent_webhook_events WHERE claimant IS NULL ORDER BY route LIMIT 1)
      UNION ALL
      SELECT (SELECT e.route FROM agent_webhook_events e WHERE e.claimant IS NULL AND e.route > routes.route ORDER BY e.route LIMIT 1)
      FROM routes WHERE routes.route IS NOT NULL
    )
    SELECT first.id FROM routes
    CROSS JOIN LATERAL (
      SELECT e.id, e.seq FROM agent_webhook_events e
      WHERE e.claimant IS NULL AND e.route = routes.route
      ORDER BY e.seq LIMIT 1
      FOR UPDATE SKIP LOCKED
    ) AS first
    WHERE routes.route IS NOT NULL AND routes.route <> ALL($4::text[])
    ORDER BY first.seq LIMIT 1
  )
  RETURNING ${EVENT_COLUMNS}`;

/** Of a claimant's claims: none of them while its lease holds (on the database's clock). */
export const LEASE_NOT_LIVE =
  'NOT EXISTS (SELECT 1 FROM agent_gateways lease WHERE lease.claimant = e.claimant AND lease.lease_until >= now())';

/**
 * The claimants whose claims recovery may release: others without a live lease, and this
 * claimant ($1) when an earlier process ($2: this one's session) claimed under it.
 */
export const RECOVERY_CANDIDATES = `
  SELECT DISTINCT e.claimant FROM agent_webhook_events e
  WHERE e.claimant IS NOT NULL
    AND ((e.claimant <> $1 AND ${LEASE_NOT_LIVE}) OR (e.claimant = $1 AND e.claim_session IS DISTINCT FROM $2))`;

/**
 * Releases the claims of gone claimants (the rule is in the class comment): $1 this claimant,
 * $2 this process's session, $3 the claimants this host saw dead, $4 the age in milliseconds
 * after which a claim without a lease counts as abandoned. Every lease is judged in the statement
 * itself, on the database's clock, so a lease renewed meanwhile keeps its claims; the term of a
 * lease whose claims are taken over moves on, so that its holder, if it comes back, knows.
 */
export const RELEASE_GONE = `
  WITH gone AS (
    SELECT e.id, e.claimant FROM agent_webhook_events e
    WHERE e.claimant IS NOT NULL AND (
      (e.claimant = $1 AND e.claim_session IS DISTINCT FROM $2)
      OR (e.claimant <> $1 AND ${LEASE_NOT_LIVE} AND (
        EXISTS (SELECT 1 FROM agent_gateways lease WHERE lease.claimant = e.claimant AND ${leaseGone('lease')})
        OR e.claimant = ANY($3::text[])
        OR (NOT EXISTS (SELECT 1 FROM agent_gateways lease WHERE lease.claimant = e.claimant) AND e.claimed_at < now() - $4 * interval '1 millisecond')
      ))
    )
    FOR UPDATE OF e
  ), released AS (
    UPDATE agent_webhook_events e SET claimant = NULL, claim_session = NULL, claim_epoch = NULL, claimed_at = NULL
    FROM gone WHERE e.id = gone.id AND e.claimant = gone.claimant
    RETURNING e.id, gone.claimant AS previous
  ), moved_on AS (
    UPDATE agent_gateways SET epoch = epoch + 1
    WHERE claimant IN (SELECT previous FROM released WHERE previous <> $1)
  )
  SELECT id FROM released`;

/**
 * Completes an event: its row is deleted when it is this process's claim in the term it was
 * claimed under ($2, $3), or nobody's (released meanwhile, not claimed again: the run that ended
 * is the only one). A row another claim holds now, or a claim of a later term, stays: its run is
 * somebody else's.
 */
export const COMPLETE = `
  DELETE FROM agent_webhook_events
  WHERE id = $1 AND (claimant IS NULL OR (claimant = $2 AND claim_epoch IS NOT DISTINCT FROM $3::bigint))`;

/** Releases this process's claims in term $2 other than those of $3 (claims whose statement failed after it was committed). */
export const RELEASE_UNKNOWN = `
  UPDATE agent_webhook_events SET claimant = NULL, claim_session = NULL, claim_epoch = NULL, claimed_at = NULL
  WHERE claimant = $1 AND claim_epoch IS NOT DISTINCT FROM $2::bigint AND claim_session = $4 AND id <> ALL($3::text[])
  RETURNING id`;

/**
 * Stores an event of a coalescing route into the open group of its route and key ($7; opened
 * with the event's id as its own), moving the group's start on to $8 (its receipt plus the
 * window) when that is later. With a delivery key, only when the key is new (as INSERT_EVENT_ONCE:
 * $9 the key, $10 now, $11 an hour before). The event's traceparent is the last parameter ($9, or $12 with a key).
 */
function insertGrouped(once: boolean): string {
  return `
  WITH ${
    once
      ? `seen AS (
    INSERT INTO agent_webhook_deliveries AS known (key, seen_at) VALUES ($9, $10)
    ON CONFLICT (key) DO UPDATE SET seen_at = EXCLUDED.seen_at WHERE known.seen_at <= $11
    RETURNING 1
  ), `
      : ''
  }grp AS (
    INSERT INTO agent_webhook_groups AS g (id, route, key, due_at)
    SELECT $1::text, $2::text, $7::text, $8::timestamptz ${once ? 'FROM seen' : ''}
    ON CONFLICT (route, key) WHERE NOT closed DO UPDATE SET due_at = GREATEST(g.due_at, EXCLUDED.due_at)
    RETURNING g.id
  )
  INSERT INTO agent_webhook_group_events (id, group_id, route, event, delivery_id, payload, received_at, traceparent)
  SELECT $1::text, grp.id, $2::text, $3::text, $4::text, $5::text, $6::timestamptz, $${once ? 12 : 9}::text FROM grp
  RETURNING 1 AS stored`;
}
export const INSERT_GROUPED = insertGrouped(false);
export const INSERT_GROUPED_ONCE = insertGrouped(true);

/**
 * Claims the oldest group nobody holds that was closed before (handed out, then released) or
 * whose start ($4, this process's clock) has come, of a route not in $5; closes it for good.
 * `was_closed`: whether it had been handed out before.
 */
export const CLAIM_GROUP = `
  WITH picked AS (
    SELECT id, closed FROM agent_webhook_groups
    WHERE claimant IS NULL AND (closed OR due_at <= $4::timestamptz) AND route <> ALL($5::text[])
    ORDER BY seq LIMIT 1
    FOR UPDATE SKIP LOCKED
  )
  UPDATE agent_webhook_groups g SET closed = true, claimant = $1, claim_session = $2, claim_epoch = $3::bigint, claimed_at = now()
  FROM picked WHERE g.id = picked.id AND ${UNDER_LIVE_TERM}
  RETURNING g.id, picked.closed AS was_closed`;

/** The events of group $1, oldest first. */
export const GROUP_MEMBERS = `SELECT ${EVENT_COLUMNS} FROM agent_webhook_group_events WHERE group_id = $1 ORDER BY seq`;

/** Completes a group and its events, under the rule of COMPLETE. */
export const COMPLETE_GROUP = `
  WITH g AS (
    DELETE FROM agent_webhook_groups
    WHERE id = $1 AND (claimant IS NULL OR (claimant = $2 AND claim_epoch IS NOT DISTINCT FROM $3::bigint))
    RETURNING id
  )
  DELETE FROM agent_webhook_group_events WHERE group_id IN (SELECT id FROM g)`;

/** RECOVERY_CANDIDATES and RELEASE_GONE for the groups: the same rules, on their claims. */
export const GROUP_RECOVERY_CANDIDATES = RECOVERY_CANDIDATES.replaceAll('agent_webhook_events', 'agent_webhook_groups');
export const RELEASE_GONE_GROUPS = RELEASE_GONE.replaceAll('agent_webhook_events', 'agent_webhook_groups');
