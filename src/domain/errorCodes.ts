/**
 * Every code the service throws, by area. A code is part of what users see and match on
 * (scripts, logs, tests): once published its string never changes. A new error gets its code
 * here first; test/domain/errorCodes.test.ts fails for a code thrown anywhere else, and for a
 * code here that nothing throws.
 */
export const ERROR_CODES = {
  JOB: {
    /** No job has the id or name given. */
    NOT_FOUND: 'JOB.NOT_FOUND',
    /** A name given to pick a job matches several jobs. */
    AMBIGUOUS: 'JOB.AMBIGUOUS',
    /** The job named is one whose stored record cannot be read. */
    UNREADABLE: 'JOB.UNREADABLE',
    /** A job's state forbids the change asked for (pausing a completed job, resuming one not paused, running one now). */
    INVALID_STATE: 'JOB.INVALID_STATE',
    /** A repeat count is not a whole number of 1 or more. */
    INVALID_REPEAT: 'JOB.INVALID_REPEAT',
    /** A job's prompt is empty. */
    EMPTY_PROMPT: 'JOB.EMPTY_PROMPT',
    /** A job's name is already used by another job. */
    NAME_TAKEN: 'JOB.NAME_TAKEN',
    /** A one-shot is asked to run before its time without being forced (the run would use it up). */
    NOT_DUE: 'JOB.NOT_DUE',
    /** A pause reason is too long or not one line of text. */
    INVALID_PAUSE_REASON: 'JOB.INVALID_PAUSE_REASON',
    /** A job that runs no agent (`no_agent`) has no pre-run script to run instead. */
    SCRIPT_REQUIRED: 'JOB.SCRIPT_REQUIRED',
    /** A job names a toolset this version does not know. */
    UNKNOWN_TOOLSET: 'JOB.UNKNOWN_TOOLSET',
    /** A job's working folder does not exist, is not a folder, or would open the agent's home. */
    INVALID_WORKDIR: 'JOB.INVALID_WORKDIR',
    /** A job names itself among the jobs it takes context from (its own last answer is `--continue`). */
    CONTEXT_FROM_ITSELF: 'JOB.CONTEXT_FROM_ITSELF',
    /** A job's time limit is not a whole number of seconds of 1 or more. */
    INVALID_TIMEOUT: 'JOB.INVALID_TIMEOUT',
    /** A job's retry count or back-off is not valid. */
    INVALID_RETRY: 'JOB.INVALID_RETRY',
    /** A run is asked to stop, and the job has none under way. */
    NOT_RUNNING: 'JOB.NOT_RUNNING',
    /** An `--after` link names no job, or an unknown condition. */
    INVALID_AFTER: 'JOB.INVALID_AFTER',
    /** A job would run after itself, directly or through other jobs. */
    CHAIN_CYCLE: 'JOB.CHAIN_CYCLE',
    /** A chain would have more links than allowed. */
    CHAIN_TOO_DEEP: 'JOB.CHAIN_TOO_DEEP',
  },
  SCHEDULE: {
    /** A schedule is none of the four forms, or a date, interval or cron field in it is wrong. */
    INVALID: 'SCHEDULE.INVALID',
    /** A one-shot schedule's time has passed. */
    PAST: 'SCHEDULE.PAST',
    /** A new job's schedule has no time to fire from now on. */
    NEVER: 'SCHEDULE.NEVER',
  },
  TIMEZONE: {
    /** A time zone is not an IANA name (config `timezone`, AGENT_TIMEZONE, the system's). */
    INVALID: 'TIMEZONE.INVALID',
  },
  STORE: {
    /** The job store holds something we did not write; it is left untouched. */
    DAMAGED: 'STORE.DAMAGED',
    /** The job store cannot be read or written (permissions, disk, lock timeout). */
    UNAVAILABLE: 'STORE.UNAVAILABLE',
  },
  DATABASE: {
    /** `AGENT_DATABASE_URL` or `database.url` is not a postgres:// URL. */
    BAD_URL: 'DATABASE.BAD_URL',
    /** The database cannot be reached, or refused a statement for a reason of the moment. */
    UNAVAILABLE: 'DATABASE.UNAVAILABLE',
    /** A database command was given but no database is configured. */
    NOT_CONFIGURED: 'DATABASE.NOT_CONFIGURED',
  },
  TICK: {
    /** The tick lock file cannot be taken for a reason other than another tick holding it. */
    UNAVAILABLE: 'TICK.UNAVAILABLE',
  },
  SCRIPT: {
    /** A job's pre-run script is outside the scripts directory, missing or not a file. */
    INVALID: 'SCRIPT.INVALID',
  },
  CONTEXT: {
    /** A memory, skill or context file exists but cannot be read or listed. */
    UNREADABLE: 'CONTEXT.UNREADABLE',
  },
  OUTPUT: {
    /** A job id or report name cannot name a file of the run output store. */
    INVALID_NAME: 'OUTPUT.INVALID_NAME',
    /** Run reports cannot be read. */
    UNREADABLE: 'OUTPUT.UNREADABLE',
    /** Run reports cannot be written. */
    UNAVAILABLE: 'OUTPUT.UNAVAILABLE',
  },
  DASHBOARD: {
    /** The dashboard's API was asked for a run the ledger does not hold. */
    RUN_NOT_FOUND: 'DASHBOARD.RUN_NOT_FOUND',
    /** A request to the dashboard's API carries a body it cannot take. */
    INVALID_REQUEST: 'DASHBOARD.INVALID_REQUEST',
  },
  RUNS: {
    /** A run id, job id or route name cannot name a file of the run ledger. */
    INVALID_NAME: 'RUNS.INVALID_NAME',
    /** The run ledger cannot be read. */
    UNREADABLE: 'RUNS.UNREADABLE',
    /** The run ledger cannot be written. */
    UNAVAILABLE: 'RUNS.UNAVAILABLE',
    /** No run (of the job named, or no webhook run) has the id given, among those the ledger keeps. */
    NOT_FOUND: 'RUNS.NOT_FOUND',
    /** A redelivery was asked of a run without an answer to deliver (failed, not run, `[SILENT]`, still going on), or of a job with no target to send it to. */
    NOTHING_TO_DELIVER: 'RUNS.NOTHING_TO_DELIVER',
    /** Another process is delivering the run's answer again right now. */
    BUSY: 'RUNS.BUSY',
  },
  PROFILE: {
    /** A profile name holds characters a profile directory may not have. */
    INVALID_NAME: 'PROFILE.INVALID_NAME',
    /** A profile does not exist and was not to be created. */
    NOT_FOUND: 'PROFILE.NOT_FOUND',
    /** A profile could not be created. */
    UNWRITABLE: 'PROFILE.UNWRITABLE',
  },
  CONFIG: {
    /** config.yaml, a setting in it or a setting's environment variable has a wrong value. */
    INVALID: 'CONFIG.INVALID',
    /** config.yaml exists but cannot be read. */
    UNREADABLE: 'CONFIG.UNREADABLE',
    /** `agent config check` found problems. */
    CHECK_FAILED: 'CONFIG.CHECK_FAILED',
  },
  DELIVERY: {
    /** A delivery target is not one the service knows how to address. */
    INVALID: 'DELIVERY.INVALID',
    /** `agent send` was given no text. */
    EMPTY: 'DELIVERY.EMPTY',
    /** A target cannot be delivered to on this host (platform not configured, a key missing, no home channel). */
    BLOCKED: 'DELIVERY.BLOCKED',
    /** A delivery did not reach its target; says how many parts got through. */
    FAILED: 'DELIVERY.FAILED',
    /** A bot-chat delivery did not happen. */
    BOT_CHAT: 'DELIVERY.BOT_CHAT',
    /** `agent channels refresh` could not list the channels of a platform. */
    LISTING_FAILED: 'DELIVERY.LISTING_FAILED',
    /** One send attempt was refused with 429; the delivery path waits and retries. */
    RATE_LIMITED: 'DELIVERY.RATE_LIMITED',
    /** One send attempt met a 5xx, a network error or silence; the delivery path backs off and retries. */
    UNAVAILABLE: 'DELIVERY.UNAVAILABLE',
    /** One send attempt was refused for good (4xx, refused credentials). */
    REFUSED: 'DELIVERY.REFUSED',
  },
  REPO_COMMENT: {
    /** The code-host CLI (`gh`) is not installed or not on PATH. */
    CLI_MISSING: 'REPO_COMMENT.CLI_MISSING',
    /** The code-host CLI is not logged in. */
    UNAUTHENTICATED: 'REPO_COMMENT.UNAUTHENTICATED',
    /** The code host refused the pull-request comment. */
    FAILED: 'REPO_COMMENT.FAILED',
  },
  WEBHOOK: {
    /** No webhook subscription has the name given. */
    NOT_FOUND: 'WEBHOOK.NOT_FOUND',
    /** `agent webhook runs` was given a route that neither exists nor ever ran. */
    ROUTE_NOT_FOUND: 'WEBHOOK.ROUTE_NOT_FOUND',
    /** A subscription name has characters a route name may not have. */
    NAME_INVALID: 'WEBHOOK.NAME_INVALID',
    /** A subscription name is a route of config.yaml. */
    NAME_TAKEN: 'WEBHOOK.NAME_TAKEN',
    /** A subscription's delivery or its chat id is not one a subscription can use. */
    DELIVER_INVALID: 'WEBHOOK.DELIVER_INVALID',
    /** A subscription's coalescing window or mode is not one it can use. */
    COALESCE_INVALID: 'WEBHOOK.COALESCE_INVALID',
    /** A subscription's secret is empty or INSECURE_NO_AUTH. */
    SECRET_INVALID: 'WEBHOOK.SECRET_INVALID',
    /** A subscription command named a route of config.yaml. */
    CONFIG_ROUTE: 'WEBHOOK.CONFIG_ROUTE',
    /** The subscription store cannot be read or written. */
    SUBSCRIPTIONS_UNAVAILABLE: 'WEBHOOK.SUBSCRIPTIONS_UNAVAILABLE',
    /** The subscription store holds something we did not write; it is left untouched. */
    SUBSCRIPTIONS_DAMAGED: 'WEBHOOK.SUBSCRIPTIONS_DAMAGED',
    /** `agent webhook test` found no listener answering at the configured address. */
    LISTENER_UNREACHABLE: 'WEBHOOK.LISTENER_UNREACHABLE',
    /** The listener answered `agent webhook test` with a refusal. */
    TEST_REFUSED: 'WEBHOOK.TEST_REFUSED',
    /** A route name or event id cannot name a file of the webhook run records. */
    INVALID_NAME: 'WEBHOOK.INVALID_NAME',
    /** Webhook run records cannot be read. */
    RECORD_UNREADABLE: 'WEBHOOK.RECORD_UNREADABLE',
    /** Webhook run records cannot be written. */
    RECORD_UNAVAILABLE: 'WEBHOOK.RECORD_UNAVAILABLE',
    /** The webhook inbox cannot be read or written, or its journal is held by another live process. */
    INBOX_UNAVAILABLE: 'WEBHOOK.INBOX_UNAVAILABLE',
  },
  GATEWAY: {
    /** The listener's port is taken by another program. */
    PORT_IN_USE: 'GATEWAY.PORT_IN_USE',
    /** The listener could not listen for another reason (a host that is not ours, no permission). */
    LISTEN_FAILED: 'GATEWAY.LISTEN_FAILED',
    /** The gateway cannot create its home directory (`$AGENT_HOME`). */
    HOME_UNAVAILABLE: 'GATEWAY.HOME_UNAVAILABLE',
  },
  CHAT: {
    /** `agent chat` was given an empty question. */
    EMPTY_QUESTION: 'CHAT.EMPTY_QUESTION',
    /** `agent chat` has no model it can run (none configured, unknown provider, missing credentials). */
    NOT_CONFIGURED: 'CHAT.NOT_CONFIGURED',
    /** `agent chat --query-file` could not read its file. */
    QUERY_FILE: 'CHAT.QUERY_FILE',
  },
  CLI: {
    /** The command line was used wrongly (exit code 2). */
    USAGE: 'CLI.USAGE',
    /** Standard input ended before every question of `agent cron create` was answered. */
    INPUT_ENDED: 'CLI.INPUT_ENDED',
    /** A command that changes jobs was used from inside a cron run. */
    INSIDE_CRON_RUN: 'CLI.INSIDE_CRON_RUN',
    /** `agent mcp test` named a server that is not configured, is disabled, or does not start. */
    MCP_SERVER_UNAVAILABLE: 'CLI.MCP_SERVER_UNAVAILABLE',
  },
  AGENT: {
    /** An agent run said nothing for longer than its idle budget. */
    IDLE_TIMEOUT: 'AGENT.IDLE_TIMEOUT',
    /** An agent run started and failed. */
    FAILED: 'AGENT.FAILED',
    /** An agent run was cancelled (shutdown, a stopped run). */
    ABORTED: 'AGENT.ABORTED',
  },
  EVENTS: {
    /** `agent events test` named no subscription of `events_out`. */
    NOT_FOUND: 'EVENTS.NOT_FOUND',
    /** `agent events test`'s sample event was not taken by its receiver. */
    TEST_FAILED: 'EVENTS.TEST_FAILED',
  },
  TOOL: {
    /** The model called a tool with arguments it cannot take; the message goes back to the model. */
    INVALID_INPUT: 'TOOL.INVALID_INPUT',
  },
} as const;

/** An area of the catalogue: `JOB`, `CONFIG`, `WEBHOOK` … */
export type ErrorArea = keyof typeof ERROR_CODES;

/** The codes of one area, e.g. `ErrorCodeOf<'JOB'>` is `'JOB.NOT_FOUND' | 'JOB.AMBIGUOUS' | …`. */
export type ErrorCodeOf<Area extends ErrorArea> = (typeof ERROR_CODES)[Area][keyof (typeof ERROR_CODES)[Area]];

/** Every code the service throws. */
export type ErrorCode = { [Area in ErrorArea]: ErrorCodeOf<Area> }[ErrorArea];

export type JobErrorCode = ErrorCodeOf<'JOB'>;
/** A schedule's codes, the time zone it is read in included. */
export type ScheduleErrorCode = ErrorCodeOf<'SCHEDULE'> | ErrorCodeOf<'TIMEZONE'>;
export type DeliveryErrorCode = ErrorCodeOf<'DELIVERY'>;
export type WebhookErrorCode = ErrorCodeOf<'WEBHOOK'>;
export type RunsErrorCode = ErrorCodeOf<'RUNS'>;
export type EventsErrorCode = ErrorCodeOf<'EVENTS'>;
