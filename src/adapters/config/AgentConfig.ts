import type { SandboxMode } from '../../domain/sandboxPlan.js';
import type { EventType } from '../../domain/events/outboundEvents.js';

/**
 * The validated contents of `$AGENT_HOME/config.yaml`. Keys keep the spelling of the file
 * so that an operator reading an error or the code sees the same names.
 * Every key of the file is optional; the defaults below are filled in by the loader.
 */
export interface AgentConfig {
  /** IANA zone for cron expressions and naive times; `AGENT_TIMEZONE` overrides it. */
  timezone?: string;
  /** The default model of every run that names none. */
  model?: ModelConfig;
  /** Named providers a model or a job can refer to by name. Default `{}`. */
  providers: Record<string, ProviderConfig>;
  /** Tried in order when the main provider fails (docs/providers.md). Default `[]`. */
  fallback_providers: FallbackProviderConfig[];
  /** Legacy single fallback, used only when `fallback_providers` is empty. */
  fallback_model?: FallbackModelConfig;
  cron: CronConfig;
  /** The long-running gateway. Default `{ shutdown_grace_seconds: 30 }`. */
  gateway: GatewayConfig;
  /** Per-platform settings keyed by platform name (`telegram`, `webhook` …). Default `{}`. */
  platforms: PlatformsConfig;
  toolsets?: Record<string, unknown> | string[];
  memory?: Record<string, unknown>;
  search?: Record<string, unknown>;
  tools?: ToolsConfig;
  /** The web dashboard `agent gateway` serves (docs/dashboard.md). */
  dashboard?: { enabled: boolean; host?: string; port?: number; token?: string; allowed_hosts?: string[]; trust_proxy?: boolean };
  /** How long the run ledger keeps runs (docs/runs.md). */
  runs?: { retention_count?: number; retention_days?: number };
  /** Conversations with the bot on chat platforms (docs/chat-platforms.md). */
  chat?: { history_turns?: number; max_concurrent_turns?: number };
  /** Where jobs live when not in files: `AGENT_DATABASE_URL` overrides it (docs/scaling.md). */
  database?: DatabaseConfig;
  /** MCP servers whose tools toolsets `mcp:<name>` grant (docs/mcp.md), keyed by server name. */
  mcp_servers?: Record<string, McpServerConfig>;
  /** Where run events are sent, keyed by subscription name (docs/events.md). */
  events_out?: Record<string, EventsOutConfig>;
  /** What models cost (docs/runs.md, Usage and cost). */
  models?: ModelsConfig;
  /** The agent's own limits (docs/runs.md, Budgets). */
  agent?: AgentSectionConfig;
}

/** One MCP server: a program spoken to over stdio (`command`), or a streamable HTTP endpoint (`url`). */
export interface McpServerConfig {
  /** stdio: the program, started in the sandbox. */
  command?: string;
  args?: string[];
  /** stdio: the program's environment besides PATH, HOME and LANG; `${NAME}` is replaced by the service's variable NAME. */
  env?: Record<string, string>;
  /** stdio: where it starts; default `$AGENT_HOME/workspace`. */
  cwd?: string;
  /** HTTP: the endpoint. */
  url?: string;
  /** HTTP: sent with every request; `${NAME}` is replaced by the service's variable NAME. */
  headers?: Record<string, string>;
  /** Default true. */
  enabled?: boolean;
  /** Glob patterns of the server's tools offered (include) and left out (exclude). */
  tools?: { include?: string[]; exclude?: string[] };
  /** Seconds one tool call may take; default 60. */
  timeout_seconds?: number;
  /** Default presets (`agent-cron`, `agent-webhook`, `agent-chat`) that grant this server as if they named `mcp:<server>`. */
  presets?: string[];
}

/** `models`: nothing is priced unless it is written here. */
export interface ModelsConfig {
  /** `<provider>/<model>` → US dollars per million tokens. */
  prices?: Record<string, ModelPriceConfig>;
}

export interface ModelPriceConfig {
  input_per_mtok: number;
  output_per_mtok: number;
  /** Absent: cached input is priced as other input. */
  cached_input_per_mtok?: number;
}

/** `agent`. */
export interface AgentSectionConfig {
  /** Limits of every run that sets none of its own, and the cap of all runs' cost per day. */
  budget?: AgentBudgetConfig;
  /** In-process model sessions at once (cron, webhook and chat together); default 64. */
  max_concurrent_sessions?: number;
  /** Processes runs start at once (command agents, scripts, terminal commands); default 16. */
  max_concurrent_processes?: number;
}

export interface AgentBudgetConfig {
  max_turns?: number;
  max_tokens?: number;
  /** US dollars per run. */
  max_cost?: number;
  /** US dollars over every run of the last 24 h. */
  max_cost_per_day?: number;
}

/** The database that holds the jobs instead of `$AGENT_HOME/cron/jobs.json`. */
export interface DatabaseConfig {
  /** A postgres:// URL. */
  url?: string;
  /**
   * How long a gateway's lease on the shared store holds without renewal (renewed every third of
   * it); after that the other gateways recover its runs. Default 30.
   */
  lease_seconds: number;
}

/** The tools' settings. */
export interface ToolsConfig {
  /** Where pre-run scripts, terminal commands and command agent programs run (docs/processes.md); default `auto`. */
  sandbox?: SandboxMode;
  /** Whether sandboxed children have the network; default true. */
  network?: boolean;
  /** Absolute paths that sandboxed children may read although they lie in a hidden place. */
  sandbox_readable?: string[];
  /** Absolute paths that sandboxed children may write besides the workspace. */
  sandbox_writable?: string[];
  terminal?: {
    /**
     * Variables that pre-run scripts and the terminal tool see although they hold a credential of
     * the service (docs/tools.md): the operator hands them on by name.
     */
    env_passthrough?: string[];
  };
}

/**
 * Provider kinds: a local program (`command`), the OpenAI Chat Completions API and everything that
 * speaks it (`openai`: OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio …), and the
 * Anthropic Messages API (`anthropic`).
 */
export const PROVIDER_TYPES = ['command', 'openai', 'anthropic'] as const;

export type ProviderType = (typeof PROVIDER_TYPES)[number];

export interface ModelConfig {
  /** `command`, or the name of an entry under `providers`. */
  provider?: string;
  /** Model name, passed on to the provider. */
  name?: string;
  /** For `provider: command`: the program and its arguments, program first. */
  command?: string[];
  /** Overrides the base URL of `provider` for runs with this default model. */
  base_url?: string;
  /** Overrides the variable that holds `provider`'s API key (never the key itself). */
  api_key_env?: string;
}

/**
 * A named provider. An entry named like a built-in provider (`openai`, `anthropic`,
 * `openrouter`, `ollama`, `command`) overrides that built-in's settings one by one and may leave
 * `type` out.
 */
export interface ProviderConfig {
  /** Required unless the entry overrides a built-in provider. */
  type?: ProviderType;
  /** For `type: command`: the program and its arguments, program first. */
  command?: string[];
  base_url?: string;
  /** Name of the environment variable that holds the API key (never the key itself). */
  api_key_env?: string;
  /** Credential pool for same-provider key rotation on rate limits. */
  api_keys?: string[];
  /**
   * Whether a run needs a key. Default true, except for `ollama` and for base URLs on this
   * machine (localhost, 127.0.0.1, ::1), where local servers usually need none.
   */
  api_key_required?: boolean;
  /** The model name used when a run names none for this provider. */
  model?: string;
  /** Upper bound of tokens per answer (Anthropic requires one; default 8192). */
  max_tokens?: number;
  /** False for a model that takes no images: the `vision` tool then says so without asking it. */
  vision?: boolean;
}

export interface FallbackProviderConfig {
  provider: string;
  model?: string;
}

export interface FallbackModelConfig {
  provider: string;
  model?: string;
  /** Accepted for `model`. */
  name?: string;
}

export interface CronConfig {
  /** Scheduler provider; absent means the built-in ticker. */
  provider?: string;
  /** Wrap delivered answers in the job's header and footer. Default true. */
  wrap_response: boolean;
  /** Absent: 4 when the default agent is a command, else `agent.max_concurrent_sessions`. */
  max_parallel_jobs?: number;
  /** Run reports kept per job; default 50. */
  output_retention: number;
  /** Pre-run script timeout; an invalid value is dropped with a warning. */
  script_timeout_seconds?: number;
  /** Default 600; bounds only the legacy bot-chat subprocess lane. */
  bot_chat_delivery_timeout_seconds: number;
  /** How late a one-shot may be found and still run, and how far in the past a new one's time may be; default 120. */
  one_shot_grace_seconds?: number;
  /** The failure notice: on the first failure of a streak (default), on every one, or never. */
  failure_alerts?: 'first' | 'every' | 'off';
  /** Pause a job after this many consecutive failed runs; 0 (default) never. */
  pause_after_failures?: number;
  /** What an overdue slot of a recurring job does: run once (default) or be skipped. */
  catch_up?: 'once' | 'skip';
  /** Retries of runs that failed for a reason that may pass, for jobs that set none; none when absent. */
  retry?: RetryConfig;
  managed?: ManagedCronConfig;
}

/** `retry:` as written: attempts after the first, the first wait and the longest (lengths of time such as `30s`). */
export interface RetryConfig {
  times: number;
  backoff?: string;
  max?: string;
}

export interface GatewayConfig {
  /**
   * How long runs in progress may go on after SIGTERM or SIGINT before they are cancelled.
   * Default 30; 0 cancels them at once.
   */
  shutdown_grace_seconds: number;
}

export interface ManagedCronConfig {
  portal_url?: string;
  callback_url?: string;
  expected_audience?: string;
  jwks_url?: string;
}

/** Platforms are free-form for now; only the webhook listener's switch and settings are checked. */
export interface PlatformsConfig {
  webhook?: WebhookPlatformConfig;
  [platform: string]: Record<string, unknown> | undefined;
}

export interface WebhookPlatformConfig {
  enabled?: boolean;
  /** Listener settings and `routes` (docs/webhooks.md). */
  extra?: WebhookExtraConfig;
  [key: string]: unknown;
}

/**
 * `platforms.webhook.extra`, checked by the schema; the defaults are filled in by the readers
 * of webhookSettings.ts. Strings are trimmed.
 */
export interface WebhookExtraConfig {
  /** Bind address; default 0.0.0.0. */
  host?: string;
  /** 0 to 65535; default 8644. */
  port?: number;
  /** The fallback secret of routes without their own; a list while rotating; "" counts as none. */
  secret?: string | string[];
  /** Requests per minute, per route; default 30. */
  rate_limit?: number;
  /** Largest body taken, in bytes; default 1048576. */
  max_body_bytes?: number;
  /** Agent runs of accepted events at once; default 4. */
  max_concurrent_runs?: number;
  /** Deliveries of answers under way at once to each platform; default 2. */
  max_concurrent_deliveries?: number;
  /** Run records kept per route; default 50. */
  output_retention?: number;
  /** Whether the gateway serves `GET /metrics`; default false. */
  metrics?: boolean;
  /** The bearer token `GET /metrics` then requires. */
  metrics_token?: string;
  /** Route name → settings, checked when the gateway starts (webhookRouteConfig.ts). */
  routes?: Record<string, unknown>;
}

/** A loaded configuration and the non-fatal problems found in it. */
export interface LoadedConfig {
  config: AgentConfig;
  /** One sentence each, naming the file and the key; for the caller to log or print. */
  warnings: string[];
}

/** One `events_out.<name>`: a receiver of run events (docs/events.md). */
export interface EventsOutConfig {
  url: string;
  /** `whsec_<base64>` (the key is the decoded bytes), or any other text (the key is its UTF-8 bytes). */
  secret: string;
  events: EventType[];
  /** Job ids or names; absent: every job. */
  jobs?: string[];
  /** Webhook route names; absent: every route. */
  routes?: string[];
  /** The wait before the first retry, doubling after; default 10. */
  first_retry_seconds?: number;
}
