/** One versioned change to the schema; applied once, in order, each in its own transaction. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The schema, oldest first. A released migration is never edited: a change is a new one.
 * Jobs are rows whose `record` holds the job as jobs.json holds it; the columns beside it are
 * what the store looks jobs up by (due, running, by name), kept equal to the record by every write.
 * Webhook events are rows holding the event's fields and the sender's JSON text of its payload,
 * with who claimed each; delivery keys are remembered a row each with when they were last stored.
 * Webhook subscriptions, webhook run records and the runs of the run ledger are rows of a
 * `record` the same way; run reports are rows holding the Markdown text. Chat messages,
 * conversations and receivers' cursors are rows of the gateway's chat state (PostgresChatStore).
 * Used fire tokens are a row each, with the instant they are remembered until; events out a row
 * per event and subscription.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'jobs',
    sql: `
      CREATE TABLE agent_jobs (
        id text PRIMARY KEY,
        seq bigserial NOT NULL,
        name_key text NOT NULL,
        state text NOT NULL,
        enabled boolean NOT NULL,
        next_run_at timestamptz,
        record jsonb NOT NULL
      );
      CREATE INDEX agent_jobs_due ON agent_jobs (next_run_at) WHERE state = 'scheduled' AND enabled;
      CREATE INDEX agent_jobs_running ON agent_jobs (id) WHERE state = 'running';
      CREATE INDEX agent_jobs_name ON agent_jobs (name_key);
    `,
  },
  {
    version: 2,
    name: 'gateway leases',
    sql: `
      CREATE TABLE agent_gateways (
        claimant text PRIMARY KEY,
        host text NOT NULL,
        pid integer NOT NULL,
        started_at timestamptz NOT NULL,
        listener text,
        provider text NOT NULL,
        lease_until timestamptz NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'webhook inbox',
    sql: `
      CREATE TABLE agent_webhook_events (
        id text PRIMARY KEY,
        seq bigserial NOT NULL,
        route text NOT NULL,
        event text NOT NULL,
        delivery_id text NOT NULL,
        payload text NOT NULL,
        received_at timestamptz NOT NULL,
        claimant text,
        claim_session text,
        claimed_at timestamptz
      );
      CREATE INDEX agent_webhook_events_waiting ON agent_webhook_events (seq) WHERE claimant IS NULL;
      CREATE INDEX agent_webhook_events_claimed ON agent_webhook_events (claimant) WHERE claimant IS NOT NULL;
      -- The oldest waiting event of each route without reading the others: what a free run slot
      -- asks for first (a route with nothing running), however deep another route's backlog.
      CREATE INDEX agent_webhook_events_route_waiting ON agent_webhook_events (route, seq) WHERE claimant IS NULL;
      CREATE TABLE agent_webhook_deliveries (
        key text PRIMARY KEY,
        seen_at timestamptz NOT NULL
      );
      CREATE INDEX agent_webhook_deliveries_seen ON agent_webhook_deliveries (seen_at);
    `,
  },
  {
    version: 4,
    name: 'subscriptions and run records',
    // Names and file names sort byte by byte ("C"), as the file store sorts them, whatever the
    // database's collation: report names must sort in time order.
    sql: `
      CREATE TABLE agent_webhook_subscriptions (
        name text PRIMARY KEY,
        record jsonb NOT NULL
      );
      CREATE TABLE agent_webhook_runs (
        route text NOT NULL,
        event_id text COLLATE "C" NOT NULL,
        started_at timestamptz NOT NULL,
        record jsonb NOT NULL,
        PRIMARY KEY (route, event_id)
      );
      CREATE INDEX agent_webhook_runs_route_newest ON agent_webhook_runs (route, started_at DESC, event_id DESC);
      CREATE INDEX agent_webhook_runs_newest ON agent_webhook_runs (started_at DESC, event_id DESC);
      CREATE TABLE agent_run_reports (
        job_id text NOT NULL,
        file_name text COLLATE "C" NOT NULL,
        content text NOT NULL,
        PRIMARY KEY (job_id, file_name)
      );
    `,
  },
  {
    version: 5,
    name: 'webhook rate limit',
    // The webhook rate limit shared by replicas: requests counted per route and whole second
    // (`bucket`, seconds since the epoch). agent_webhook_rate_reserve counts up to p_want
    // requests of a route in the current second in one statement: it waits for the route's
    // advisory lock (so that counts of one route are made one at a time across every process),
    // sums the buckets of the window (the 61 whole seconds that overlap the last 60 s: stricter by
    // at most one second, never looser), counts what is left under the limit (1 or more) and
    // returns how many it counted, or else minus the whole seconds until enough requests leave
    // the window. The first count of a new second also drops up to 100 buckets older than two
    // windows, of any route, skipping rows another count holds; the second window of margin keeps
    // buckets a replica whose clock is behind still counts. Its transaction commits without
    // waiting for the disk (synchronous_commit off, for that transaction only): counts of a route
    // wait for each other until commit, and a crash of the server forgets at most the last
    // moment's counts. Call it as a statement of its own, not inside a transaction whose other
    // writes must be durable at commit. A gateway that sees many requests a second counts several
    // at once and lets them through without a round trip each (PostgresWebhookRateLimiter).
    sql: `
      CREATE TABLE agent_webhook_rate (
        route text NOT NULL,
        bucket bigint NOT NULL,
        hits integer NOT NULL,
        PRIMARY KEY (route, bucket)
      );
      CREATE INDEX agent_webhook_rate_bucket ON agent_webhook_rate (bucket);
      CREATE FUNCTION agent_webhook_rate_reserve(p_route text, p_limit integer, p_now timestamptz, p_want integer) RETURNS integer
      LANGUAGE plpgsql AS $$
      DECLARE
        now_epoch numeric := extract(epoch FROM p_now);
        now_bucket bigint := floor(extract(epoch FROM p_now));
        counted bigint;
        granted integer;
        hits_now integer;
        oldest bigint;
      BEGIN
        PERFORM set_config('synchronous_commit', 'off', true);
        -- 1918989413 is "rate": these locks' own key space (two routes of one hash share a lock).
        PERFORM pg_advisory_xact_lock(1918989413, hashtext(p_route));
        SELECT coalesce(sum(hits), 0) INTO counted
          FROM agent_webhook_rate WHERE route = p_route AND bucket >= now_bucket - 60;
        IF counted < p_limit THEN
          granted := least(greatest(p_want, 1), p_limit - counted)::integer;
          INSERT INTO agent_webhook_rate AS rate (route, bucket, hits) VALUES (p_route, now_bucket, granted)
            ON CONFLICT (route, bucket) DO UPDATE SET hits = rate.hits + granted
            RETURNING rate.hits INTO hits_now;
          IF hits_now = granted THEN
            DELETE FROM agent_webhook_rate AS rate USING (
              SELECT route, bucket FROM agent_webhook_rate WHERE bucket < now_bucket - 120
              ORDER BY bucket LIMIT 100 FOR UPDATE SKIP LOCKED
            ) AS old
            WHERE rate.route = old.route AND rate.bucket = old.bucket;
          END IF;
          RETURN granted;
        END IF;
        SELECT window_buckets.bucket INTO oldest FROM (
          SELECT bucket, sum(hits) OVER (ORDER BY bucket) AS running
            FROM agent_webhook_rate WHERE route = p_route AND bucket >= now_bucket - 60
        ) AS window_buckets
        WHERE window_buckets.running > counted - p_limit
        ORDER BY window_buckets.bucket LIMIT 1;
        RETURN -greatest(1, ceil(oldest + 61 - now_epoch))::integer;
      END
      $$;
    `,
  },
  {
    version: 6,
    name: 'run ledger',
    // One row per run of the ledger, its `record` beside the columns it is looked up by. Ids sort
    // byte by byte ("C") whatever the database's collation, so that runs started at the same
    // instant come in the same order as in the other stores of the ledger.
    sql: `
      CREATE TABLE agent_runs (
        id text COLLATE "C" PRIMARY KEY,
        kind text NOT NULL,
        subject text NOT NULL,
        started_at timestamptz NOT NULL,
        record jsonb NOT NULL
      );
      CREATE INDEX agent_runs_subject_newest ON agent_runs (kind, subject, started_at DESC, id DESC);
      CREATE INDEX agent_runs_newest ON agent_runs (started_at DESC, id DESC);
    `,
  },
  {
    version: 7,
    name: 'chat',
    // Chat messages by conversation (its label, `telegram:-100123:42`) and the platform's message
    // id: a pending one holds the message's JSON and waits to be answered, in accepted order
    // (`seq`); an answered one holds nothing and is remembered so that the message is not
    // accepted again. Conversations hold their recent exchanges as a JSON array of turns, oldest
    // first; receivers' cursors are a text per platform.
    sql: `
      CREATE TABLE agent_chat_messages (
        conversation text NOT NULL,
        message_id text NOT NULL,
        seq bigserial NOT NULL,
        answered boolean NOT NULL DEFAULT false,
        message jsonb,
        PRIMARY KEY (conversation, message_id)
      );
      CREATE INDEX agent_chat_messages_pending ON agent_chat_messages (seq) WHERE NOT answered;
      CREATE INDEX agent_chat_messages_answered ON agent_chat_messages (conversation, seq) WHERE answered;
      CREATE TABLE agent_chat_conversations (
        conversation text PRIMARY KEY,
        turns jsonb NOT NULL
      );
      CREATE TABLE agent_chat_cursors (
        platform text PRIMARY KEY,
        cursor text NOT NULL
      );
    `,
  },
  {
    version: 8,
    name: 'chat receivers in gateway leases',
    // What each replica's chat receivers are doing, for `agent status`: a JSON array of
    // {platform, state, since, error}, written with each renewal.
    sql: `
      ALTER TABLE agent_gateways ADD COLUMN chat_receivers jsonb NOT NULL DEFAULT '[]'::jsonb;
    `,
  },
  {
    version: 9,
    name: 'used fire tokens',
    // The managed trigger's fire tokens already used, by id (the sha256 of the token's jti), with
    // the instant each is remembered until; rows past it are deleted by expiry.
    sql: `
      CREATE TABLE agent_used_fire_tokens (
        id text PRIMARY KEY,
        until timestamptz NOT NULL
      );
      CREATE INDEX agent_used_fire_tokens_until ON agent_used_fire_tokens (until);
    `,
  },
  {
    version: 10,
    name: 'lease terms',
    // Fencing of the gateways' claims (docs/adr/0014-no-run-twice-after-an-outage.md): each lease
    // has a term (`epoch`, moved on when a process takes it afresh or another gateway takes its
    // claims over), the length it is renewed for (`lease_ms`) and since when its holder has
    // renewed it without a break (`connected_since`), all on the database's clock. An event's
    // claim carries the term it was made under (`claim_epoch`); a completion from another term of
    // the same claimant does not count.
    sql: `
      ALTER TABLE agent_gateways
        ADD COLUMN epoch bigint NOT NULL DEFAULT 1,
        ADD COLUMN lease_ms integer NOT NULL DEFAULT 30000,
        ADD COLUMN connected_since timestamptz NOT NULL DEFAULT now();
      ALTER TABLE agent_webhook_events ADD COLUMN claim_epoch bigint;
    `,
  },
  {
    version: 11,
    name: 'run transcripts',
    // A run's transcript (docs/runs.md, Transcripts) in a table of its own, so that listing runs
    // never reads it. It may be written before its run's row, so no foreign key: a run's save
    // deletes the transcripts of the runs it deletes, and those started before the age limit.
    sql: `
      CREATE TABLE agent_run_transcripts (
        id text PRIMARY KEY,
        started_at timestamptz NOT NULL,
        transcript jsonb NOT NULL
      );
      CREATE INDEX agent_run_transcripts_started_at ON agent_run_transcripts (started_at);
    `,
  },
  {
    version: 12,
    name: 'event outbox',
    // The events out (docs/events.md): a row per event and subscription, its JSON text as it is
    // sent (the same bytes at every attempt), claimed by one sender until `claimed_until`; a row
    // given up on keeps its place with `failed_at`, so an event told again is not added again.
    sql: `
      CREATE TABLE agent_event_outbox (
        subscription text NOT NULL,
        event_id text NOT NULL,
        event text NOT NULL,
        created_at timestamptz NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        next_attempt_at timestamptz NOT NULL,
        claimed_until timestamptz,
        failed_at timestamptz,
        PRIMARY KEY (subscription, event_id)
      );
      CREATE INDEX agent_event_outbox_due ON agent_event_outbox (next_attempt_at) WHERE failed_at IS NULL;
      CREATE INDEX agent_event_outbox_failed ON agent_event_outbox (failed_at) WHERE failed_at IS NOT NULL;
    `,
  },
  {
    version: 13,
    name: 'coalesced webhook events',
    // The events of routes that coalesce (docs/webhooks.md, Coalescing) wait in groups of their
    // own, apart from agent_webhook_events, so that claiming any other event reads nothing of
    // them. A group is open until it is claimed (`closed` then, for good): at most one open group
    // per route and key.
    sql: `
      CREATE TABLE agent_webhook_groups (
        id text PRIMARY KEY,
        seq bigserial NOT NULL,
        route text NOT NULL,
        key text NOT NULL,
        due_at timestamptz NOT NULL,
        closed boolean NOT NULL DEFAULT false,
        claimant text,
        claim_session text,
        claim_epoch bigint,
        claimed_at timestamptz
      );
      CREATE UNIQUE INDEX agent_webhook_groups_open ON agent_webhook_groups (route, key) WHERE NOT closed;
      CREATE INDEX agent_webhook_groups_waiting ON agent_webhook_groups (seq) WHERE claimant IS NULL;
      CREATE TABLE agent_webhook_group_events (
        id text PRIMARY KEY,
        seq bigserial NOT NULL,
        group_id text NOT NULL,
        route text NOT NULL,
        event text NOT NULL,
        delivery_id text NOT NULL,
        payload text NOT NULL,
        received_at timestamptz NOT NULL
      );
      CREATE INDEX agent_webhook_group_events_group ON agent_webhook_group_events (group_id, seq);
    `,
  },
  {
    version: 14,
    name: 'webhook trace context',
    // The traceparent of the request that accepted an event (docs/traces.md): its run, later,
    // links its trace to it. Null for events accepted without traces.
    sql: `
      ALTER TABLE agent_webhook_events ADD COLUMN traceparent text;
      ALTER TABLE agent_webhook_group_events ADD COLUMN traceparent text;
    `,
  },
];
