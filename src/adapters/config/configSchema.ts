// zod/mini: the same validation as classic zod at a fraction of the start-up cost (docs/adr/0003).
import * as z from 'zod/mini';
import { ROUTE_NAME, ROUTE_NAME_RULE } from '../../domain/webhook/WebhookRoute.js';
import { PROVIDER_TYPES, type AgentConfig } from './AgentConfig.js';
import { SANDBOX_MODES } from '../../domain/sandboxPlan.js';
import { MCP_SERVER_NAME, MCP_SERVER_NAME_RULE } from '../../domain/mcp.js';
import { TOOLSET_PRESETS } from '../../domain/toolsets.js';
import { EVENT_TYPES } from '../../domain/events/outboundEvents.js';
import { secretKeyProblem } from './eventsOutSettings.js';
import { durationSeconds } from '../../domain/durations.js';

/*
 * Each schema carries, as its error, the end of the sentence "<key> must …". The loader puts the
 * file, the key path and the value found around it, so every message reads the same way:
 * `~/.agent/config.yaml: cron.max_parallel_jobs must be a whole number of 1 or more (got "four").`
 * Objects are strict so that misspelt keys surface; the loader turns those into warnings.
 */

const text = () => {
  const expected = 'must be a non-empty string';
  return z.string({ error: expected }).check(z.minLength(1, { error: expected }));
};

const flag = () => z.boolean({ error: 'must be true or false' });

const wholeNumberFrom = (minimum: number) => {
  const expected = `must be a whole number of ${minimum} or more`;
  return z.int({ error: expected }).check(z.minimum(minimum, { error: expected }));
};

const positiveSeconds = () => {
  const expected = 'must be a positive number of seconds';
  return z.number({ error: expected }).check(z.positive({ error: expected }));
};

const secondsFromZero = () => {
  const expected = 'must be a number of seconds, 0 or more';
  return z.number({ error: expected }).check(z.minimum(0, { error: expected }));
};

/** A length of time as written in config.yaml: `30s`, `10m`, `1h30m` (domain/durations.ts). */
const duration = () => {
  const expected = 'must be a length of time such as 30s, 10m or 1h30m';
  return z.string({ error: expected }).check(z.refine((value) => typeof durationSeconds(value) === 'number', { error: expected }));
};

/** `retry:` of `cron` (and of a route): attempts after the first, the first wait, the longest wait. */
export const retrySchema = () =>
  mapping({
    times: wholeNumberFrom(0),
    backoff: optional(duration()),
    max: optional(duration()),
  });

const httpUrl = () => z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

const commandLine = () => {
  const expected = 'must be a list of strings, the program first, e.g. ["my-agent", "--quiet"]';
  return z
    .array(z.string({ error: expected }).check(z.minLength(1, { error: expected })), { error: expected })
    .check(z.minLength(1, { error: expected }));
};

const mapping = <Shape extends z.core.$ZodLooseShape>(shape: Shape) =>
  z.strictObject(shape, { error: 'must be a mapping of keys to values' });

/** A mapping whose keys this version does not interpret yet: accepted as written. */
const freeMapping = () => z.record(z.string(), z.unknown(), { error: 'must be a mapping of keys to values' });

/** The name of a variable, never the key itself: a key written here would end up in messages. */
const environmentVariableName = () => {
  const expected = 'must be the name of an environment variable such as OPENAI_API_KEY, not the key itself';
  return z.string({ error: expected }).check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: expected }));
};

const optional = z.optional;

const HOST_NAMES = 'must be a list of host names or addresses, such as ["dash.example.com", "192.168.1.5"]';
const HOST_NAME = 'must be a host name or address without a scheme or port, such as dash.example.com or 192.168.1.5';
/** A host name, an IPv4 address, or an IPv6 address (with or without brackets). */
const hostName = () =>
  z.string({ error: HOST_NAME }).check(
    z.regex(/^\s*(?:\[[0-9a-fA-F:.]+\]|[0-9a-fA-F.]*:[0-9a-fA-F.]*:[0-9a-fA-F:.]*|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)\s*$/, {
      error: HOST_NAME,
    }),
  );

export const modelSchema = mapping({
  provider: optional(text()),
  name: optional(text()),
  command: optional(commandLine()),
  base_url: optional(httpUrl()),
  api_key_env: optional(environmentVariableName()),
});

export const providerSchema = mapping({
  type: optional(
    z.enum(PROVIDER_TYPES, {
      error: `must be one of ${PROVIDER_TYPES.map((type) => `"${type}"`).join(', ')}`,
    }),
  ),
  command: optional(commandLine()),
  base_url: optional(httpUrl()),
  api_key_env: optional(environmentVariableName()),
  api_keys: optional(z.array(text(), { error: 'must be a list of strings' })),
  api_key_required: optional(flag()),
  model: optional(text()),
  max_tokens: optional(wholeNumberFrom(1)),
  vision: optional(flag()),
});

const fallbackProviderSchema = mapping({
  provider: text(),
  model: optional(text()),
});

/** The legacy single fallback; `name` is accepted for `model`, as in the `model` section. */
const fallbackModelSchema = mapping({
  provider: text(),
  model: optional(text()),
  name: optional(text()),
});

const managedSchema = mapping({
  portal_url: optional(httpUrl()),
  callback_url: optional(httpUrl()),
  expected_audience: optional(text()),
  jwks_url: optional(httpUrl()),
});

export const cronSchema = mapping({
  provider: optional(text()),
  wrap_response: z._default(flag(), true),
  // Absent: 4 when the default agent is a command, else agent.max_concurrent_sessions (cronSettings.ts).
  max_parallel_jobs: optional(wholeNumberFrom(1)),
  output_retention: z._default(wholeNumberFrom(1), 50),
  script_timeout_seconds: optional(positiveSeconds()),
  bot_chat_delivery_timeout_seconds: z._default(positiveSeconds(), 600),
  one_shot_grace_seconds: z._default(secondsFromZero(), 120),
  failure_alerts: z._default(z.enum(['first', 'every', 'off'], { error: 'must be first, every or off' }), 'first'),
  pause_after_failures: z._default(wholeNumberFrom(0), 0),
  catch_up: z._default(z.enum(['once', 'skip'], { error: 'must be once or skip' }), 'once'),
  retry: optional(retrySchema()),
  managed: optional(managedSchema),
});

const gatewaySchema = mapping({
  shutdown_grace_seconds: z._default(secondsFromZero(), 30),
});

const trimmedText = (expected: string) => z.string({ error: expected }).check(z.trim(), z.minLength(1, { error: expected }));

/** A webhook secret: a string, or a list of them while rotating; "" counts as none. */
const webhookSecret = () => {
  const expected = 'must be a string or a list of strings';
  return z.union([z.string(), z.array(text()).check(z.minLength(1))], { error: expected });
};

/**
 * `routes`: a mapping whose keys are route names (ROUTE_NAME), refused here since a name also
 * names the route's run-record directory. A wrong name is an `invalid_key` issue, whose message
 * the loader puts after the name, which it quotes in full.
 */
const webhookRoutes = () =>
  z.record(z.string().check(z.regex(ROUTE_NAME)), z.unknown(), {
    error: (issue) =>
      issue.code === 'invalid_key' ? `is not a usable route name: ${ROUTE_NAME_RULE}` : 'must be a mapping of route names to settings',
  });

/**
 * The listener's settings. Defaults are not filled in here but by the readers in
 * webhookSettings.ts, so that a config without a webhook section has none. Route names are
 * checked here; the routes' settings are checked, all problems at once, when the gateway starts
 * (webhookRouteConfig.ts), since they depend on each other and on the listener's address.
 */
const webhookExtraSchema = mapping({
  host: optional(trimmedText('must be a host name or IP address')),
  port: optional(
    z
      .int({ error: 'must be a port number from 0 to 65535' })
      .check(
        z.minimum(0, { error: 'must be a port number from 0 to 65535' }),
        z.maximum(65535, { error: 'must be a port number from 0 to 65535' }),
      ),
  ),
  secret: optional(webhookSecret()),
  rate_limit: optional(wholeNumberFrom(1)),
  max_body_bytes: optional(wholeNumberFrom(1)),
  max_concurrent_runs: optional(wholeNumberFrom(1)),
  max_concurrent_deliveries: optional(wholeNumberFrom(1)),
  output_retention: optional(wholeNumberFrom(1)),
  metrics: optional(flag()),
  metrics_token: optional(trimmedText('must be a non-empty string, the bearer token scrapers send')),
  routes: optional(webhookRoutes()),
});

const webhookPlatformSchema = z.looseObject(
  {
    enabled: optional(flag()),
    extra: optional(webhookExtraSchema),
  },
  { error: 'must be a mapping of keys to values' },
);

const platformsSchema = z.catchall(
  z.looseObject({ webhook: optional(webhookPlatformSchema) }, { error: 'must be a mapping of platform names to settings' }),
  freeMapping(),
);

/** Absolute paths, for what the sandbox lets children read or write besides the workspace. */
const absolutePaths = () =>
  z.array(z.string().check(z.refine((path) => path.startsWith('/'), { error: 'must be an absolute path such as /srv/data' })), {
    error: 'must be a list of absolute paths such as ["/srv/data"]',
  });

/** The tools' settings: the sandbox, and which credentials the terminal tool and pre-run scripts may see after all. */
const toolsSchema = mapping({
  sandbox: optional(z.enum(SANDBOX_MODES, { error: `must be one of ${SANDBOX_MODES.join(', ')}` })),
  network: optional(flag()),
  sandbox_readable: optional(absolutePaths()),
  sandbox_writable: optional(absolutePaths()),
  terminal: optional(
    mapping({
      env_passthrough: optional(
        z.array(environmentVariableName(), { error: 'must be a list of environment variable names such as ["GH_TOKEN"]' }),
      ),
    }),
  ),
});

const stringMapping = (what: string) =>
  z.record(z.string(), z.string({ error: `must be a mapping of ${what} to strings` }), {
    error: `must be a mapping of ${what} to strings`,
  });

const globList = () => z.array(text(), { error: 'must be a list of glob patterns such as ["read_*"]' });

/** One of `mcp_servers`: stdio (`command`) or streamable HTTP (`url`), never both. */
const mcpServerSchema = mapping({
  command: optional(text()),
  args: optional(z.array(z.string({ error: 'must be a list of strings' }), { error: 'must be a list of strings' })),
  env: optional(stringMapping('variable names')),
  cwd: optional(z.string().check(z.refine((path) => path.startsWith('/'), { error: 'must be an absolute path such as /srv/data' }))),
  url: optional(httpUrl()),
  headers: optional(stringMapping('header names')),
  enabled: optional(flag()),
  tools: optional(mapping({ include: optional(globList()), exclude: optional(globList()) })),
  timeout_seconds: optional(positiveSeconds()),
  presets: optional(
    z.array(
      z.enum(Object.keys(TOOLSET_PRESETS) as [string, ...string[]], {
        error: `must name presets among ${Object.keys(TOOLSET_PRESETS).join(', ')}`,
      }),
      { error: `must be a list of presets among ${Object.keys(TOOLSET_PRESETS).join(', ')}` },
    ),
  ),
}).check(
  z.refine((server) => (server.command === undefined) !== (server.url === undefined), {
    error: 'must have either command (a program spoken to over stdio) or url (a streamable HTTP endpoint), not both or neither',
  }),
);

/** `mcp_servers`: names become part of tool names, so they are refused here when unusable. */
const mcpServers = () =>
  z.record(z.string().check(z.regex(MCP_SERVER_NAME)), mcpServerSchema, {
    error: (issue) =>
      issue.code === 'invalid_key'
        ? `is not a usable MCP server name: ${MCP_SERVER_NAME_RULE}`
        : 'must be a mapping of server names to settings',
  });
const dollarsFromZero = () => {
  const expected = 'must be an amount of US dollars, 0 or more, such as 2.5';
  return z.number({ error: expected }).check(z.minimum(0, { error: expected }));
};

const positiveDollars = () => {
  const expected = 'must be a positive amount of US dollars such as 0.5';
  return z.number({ error: expected }).check(z.positive({ error: expected }));
};

/** `models.prices`: keys are `<provider>/<model>`, as runs name them (`openai/gpt-4o-mini`). */
const modelPrices = () =>
  z.record(
    z.string().check(z.regex(/^[^/\s]+\/\S+$/)),
    mapping({
      input_per_mtok: dollarsFromZero(),
      output_per_mtok: dollarsFromZero(),
      cached_input_per_mtok: optional(dollarsFromZero()),
    }),
    {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? 'must be named <provider>/<model>, such as "openai/gpt-4o-mini"'
          : 'must be a mapping of <provider>/<model> to prices, such as {"openai/gpt-4o-mini": {input_per_mtok: 0.15, output_per_mtok: 0.6}}',
    },
  );

/** `agent.budget`: the limits of runs that set none of their own, and the cap of all runs per day. */
const agentBudgetSchema = mapping({
  max_turns: optional(wholeNumberFrom(1)),
  max_tokens: optional(wholeNumberFrom(1)),
  max_cost: optional(positiveDollars()),
  max_cost_per_day: optional(positiveDollars()),
});

const EVENT_NAMES = `must be a list of events out of ${EVENT_TYPES.join(', ')}`;

/** `events_out.<name>`: where run events go (docs/events.md). */
const eventsOutSchema = mapping({
  url: httpUrl(),
  secret: z.string({ error: 'must be a non-empty string: a whsec_<base64> secret, or any other text' }).check(
    z.refine((secret) => secretKeyProblem(secret) === null, {
      error: (issue) => `must be a whsec_<base64> secret, or any other text (${secretKeyProblem(String(issue.input)) ?? 'it is empty'})`,
    }),
  ),
  events: z
    .array(z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(', ')}` }), { error: EVENT_NAMES })
    .check(z.minLength(1, { error: EVENT_NAMES })),
  jobs: optional(z.array(text(), { error: 'must be a list of job ids or names' })),
  routes: optional(z.array(text(), { error: 'must be a list of webhook route names' })),
  first_retry_seconds: optional(positiveSeconds()),
});

const eventsOut = () =>
  z.record(z.string().check(z.regex(ROUTE_NAME)), eventsOutSchema, {
    error: (issue) =>
      issue.code === 'invalid_key'
        ? `is not a usable subscription name: ${ROUTE_NAME_RULE}`
        : 'must be a mapping of subscription names to settings',
  });

/** The whole file. Typed against AgentConfig so the two cannot drift apart. */
export const agentConfigSchema: z.ZodMiniType<AgentConfig> = mapping({
  timezone: optional(z.string({ error: 'must be an IANA time zone name such as "Europe/Berlin"' })),
  model: optional(modelSchema),
  providers: z._default(z.record(text(), providerSchema, { error: 'must be a mapping of provider names to settings' }), {}),
  fallback_providers: z._default(z.array(fallbackProviderSchema, { error: 'must be a list of {provider, model} entries' }), []),
  fallback_model: optional(fallbackModelSchema),
  cron: z.prefault(cronSchema, {}),
  gateway: z.prefault(gatewaySchema, {}),
  platforms: z.prefault(platformsSchema, {}),
  toolsets: optional(z.union([freeMapping(), z.array(text())], { error: 'must be a mapping or a list of toolset names' })),
  memory: optional(freeMapping()),
  search: optional(freeMapping()),
  tools: optional(toolsSchema),
  dashboard: optional(
    mapping({
      enabled: z._default(flag(), false),
      host: optional(text()),
      port: optional(
        z
          .int({ error: 'must be a port number from 1 to 65535' })
          .check(
            z.minimum(1, { error: 'must be a port number from 1 to 65535' }),
            z.maximum(65535, { error: 'must be a port number from 1 to 65535' }),
          ),
      ),
      token: optional(text()),
      allowed_hosts: optional(z.array(hostName(), { error: HOST_NAMES })),
      trust_proxy: optional(flag()),
    }),
  ),
  chat: optional(
    mapping({
      history_turns: optional(wholeNumberFrom(0)),
      max_concurrent_turns: optional(wholeNumberFrom(1)),
    }),
  ),
  runs: optional(
    mapping({
      retention_count: optional(wholeNumberFrom(1)),
      retention_days: optional(wholeNumberFrom(1)),
    }),
  ),
  database: optional(
    mapping({
      url: optional(z.string({ error: 'must be a postgres:// URL such as "postgres://agent@db:5432/agent"' })),
      lease_seconds: z._default(wholeNumberFrom(3), 30),
    }),
  ),
  mcp_servers: optional(mcpServers()),
  events_out: optional(eventsOut()),
  models: optional(mapping({ prices: optional(modelPrices()) })),
  agent: optional(
    mapping({
      budget: optional(agentBudgetSchema),
      max_concurrent_sessions: optional(wholeNumberFrom(1)),
      max_concurrent_processes: optional(wholeNumberFrom(1)),
    }),
  ),
});
