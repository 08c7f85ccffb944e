import { durationSeconds } from '../../domain/durations.js';
import { MAX_RETRY_TIMES, validateRetryPolicy, type RetryPolicy } from '../../domain/retries.js';
import { toolsetProblem } from '../../domain/toolsets.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import { isMediaRange } from '../../domain/webhook/webhookRequest.js';
import {
  DEFAULT_WEBHOOK_TOOLSETS,
  INSECURE_NO_AUTH,
  ROUTE_NAME_RULE,
  WEBHOOK_DELIVERIES,
  isRouteName,
  type FieldFilter,
  type RouteSecrets,
  type WebhookRoute,
} from '../../domain/webhook/WebhookRoute.js';
import type { WebhookExtraConfig } from './AgentConfig.js';
import { describeValue } from './describeValue.js';
import {
  COALESCE_MODES,
  COALESCE_WINDOW_RULE,
  isCoalesceMode,
  parseCoalesceWindow,
  type RouteCoalesce,
} from '../../domain/webhook/coalesce.js';

const ROUTE_KEYS = [
  'secret',
  'events',
  'prompt',
  'skills',
  'toolsets',
  'allow_private_networks',
  'deliver_only',
  'deliver',
  'deliver_extra',
  'filters',
  'content_types',
  'budget',
  'timeout',
  'retry',
  'coalesce',
];

/** What `platforms.webhook.extra.routes` holds: the usable routes, and what is wrong with the others. */
export interface ConfiguredRoutes {
  /** Every route that passed, in the order of the file. */
  routes: WebhookRoute[];
  /** Every key under `routes`, usable or not: a subscription never takes one of these names. */
  names: string[];
  /** One sentence per problem that must stop the gateway, naming the file, the route and the key. */
  problems: string[];
  /** The routes that cannot be served, each with its problems (the sentences of `problems` about it). */
  unusable: Array<{ name: string; problems: string[] }>;
  /** One sentence per key this version ignores. */
  warnings: string[];
}

type Secrets = { ok: true; values: string[] | null } | { ok: false; why: string };

/** A `secret` as written: a string, or a list of them for rotation; null when none is set. */
function readSecrets(value: unknown): Secrets {
  if (value === undefined || value === null || value === '') return { ok: true, values: null };
  if (typeof value === 'string') return { ok: true, values: [value] };
  if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string' && item !== '')) {
    return { ok: true, values: value as string[] };
  }
  // Never echo the value: it may be a secret.
  return {
    ok: false,
    why: `must be a string or a list of strings (got ${Array.isArray(value) ? 'a list with something else in it' : `a ${typeof value}`})`,
  };
}

/**
 * Reads and checks `platforms.webhook.extra.routes`: a route's name must be one a route can have
 * (ROUTE_NAME); its `secret` falls back to `extra.secret`; a route with neither, or with
 * `INSECURE_NO_AUTH` while the listener is not on a loopback address, is a problem naming it.
 */
export function readConfiguredRoutes(
  extra: WebhookExtraConfig,
  listenerOnLoopback: boolean,
  configFile = 'config.yaml',
  mcpServers: readonly string[] = [],
): ConfiguredRoutes {
  const result: ConfiguredRoutes = { routes: [], names: [], problems: [], unusable: [], warnings: [] };
  const at = (key: string) => `${configFile}: platforms.webhook.extra.${key}`;
  // The schema has checked extra.secret and that routes is a mapping.
  const fallback = readSecrets(extra.secret);
  for (const [name, settings] of Object.entries(extra.routes ?? {})) {
    result.names.push(name);
    const before = result.problems.length;
    const problem = (key: string | null, text: string) => result.problems.push(`${at(`routes.${name}${key ? `.${key}` : ''}`)} ${text}.`);
    // The loader already refuses such names (configSchema.ts); checked here too, so that no
    // configuration this is handed can serve a route whose run records would escape their directory.
    if (!isRouteName(name)) {
      result.problems.push(`${at('routes')} has the key ${JSON.stringify(name)}, which is not a usable route name: ${ROUTE_NAME_RULE}.`);
    }
    if (!isJsonObject(settings)) {
      problem(null, `must be a mapping of route settings (got ${describeValue(settings)})`);
      result.unusable.push({ name, problems: result.problems.slice(before) });
      continue;
    }
    for (const key of Object.keys(settings).filter((key) => !ROUTE_KEYS.includes(key))) {
      result.warnings.push(`${at(`routes.${name}.${key}`)} is not a route setting this version knows; it is ignored.`);
    }
    const route = readRoute(name, settings, fallback.ok ? fallback.values : null, listenerOnLoopback, problem, mcpServers);
    if (route && result.problems.length === before) result.routes.push(route);
    else result.unusable.push({ name, problems: result.problems.slice(before) });
  }
  return result;
}

function readRoute(
  name: string,
  settings: Record<string, unknown>,
  fallbackSecrets: string[] | null,
  listenerOnLoopback: boolean,
  problem: (key: string | null, text: string) => void,
  mcpServers: readonly string[] = [],
): WebhookRoute | null {
  const secrets = readRouteSecrets(settings.secret, fallbackSecrets, listenerOnLoopback, problem);
  const events = readStringList(settings.events, 'events', problem);
  const skills = readStringList(settings.skills, 'skills', problem);
  const toolsets = settings.toolsets === undefined ? [...DEFAULT_WEBHOOK_TOOLSETS] : readStringList(settings.toolsets, 'toolsets', problem);
  for (const toolset of toolsets) {
    const wrong = toolsetProblem(toolset, mcpServers);
    if (wrong !== null) problem('toolsets', wrong);
  }
  const {
    prompt = null,
    deliver = 'log',
    deliver_extra: deliverExtra = {},
    allow_private_networks: allowPrivateNetworks = false,
  } = settings;
  if (typeof allowPrivateNetworks !== 'boolean') {
    problem('allow_private_networks', `must be true or false (got ${describeValue(allowPrivateNetworks)})`);
  }
  const deliverOnly = settings.deliver_only ?? false;
  if (typeof deliverOnly !== 'boolean') problem('deliver_only', `must be true or false (got ${describeValue(deliverOnly)})`);
  if (prompt !== null && typeof prompt !== 'string') problem('prompt', `must be a template string (got ${describeValue(prompt)})`);
  if (typeof deliver !== 'string' || !WEBHOOK_DELIVERIES.includes(deliver)) {
    problem('deliver', `must be one of ${WEBHOOK_DELIVERIES.join(', ')} (got ${describeValue(deliver)})`);
  }
  const extra = readDeliverExtra(deliverExtra, problem);
  if (deliver === 'repo_comment') {
    for (const key of ['repo', 'pr_number']) {
      if (!extra[key])
        problem(
          `deliver_extra.${key}`,
          'must be set for deliver: repo_comment (a template such as "{repository.full_name}" or "{pull_request.number}")',
        );
    }
  }
  const filters = readFilters(settings.filters, problem);
  const contentTypes = readContentTypes(settings.content_types, problem);
  const budget = readRouteBudget(settings.budget, problem);
  const timeoutSeconds = readRouteTimeout(settings.timeout, problem);
  const retry = readRouteRetry(settings.retry, problem);
  const coalesce = readCoalesce(settings.coalesce, problem);
  if (secrets === null) return null;
  return {
    name,
    source: 'config',
    secrets,
    events,
    prompt: typeof prompt === 'string' && prompt.trim() !== '' ? prompt : null,
    skills,
    toolsets,
    allowPrivateNetworks: allowPrivateNetworks === true,
    deliverOnly: deliverOnly === true,
    deliver: String(deliver),
    deliverExtra: extra,
    filters,
    ...(contentTypes.length > 0 ? { contentTypes } : {}),
    ...(budget ? { budget } : {}),
    ...(timeoutSeconds !== null ? { timeoutSeconds } : {}),
    ...(retry ? { retry } : {}),
    ...(coalesce ? { coalesce } : {}),
  };
}

/**
 * A route's `retry`: `{times, backoff, max}` as `cron.retry` (docs/runs.md, Retries); null when
 * none is set or it says 0 retries.
 */
function readRouteRetry(value: unknown, problem: (key: string | null, text: string) => void): RetryPolicy | null {
  if (value === undefined || value === null) return null;
  if (!isJsonObject(value)) {
    problem('retry', `must be a mapping such as {times: 3, backoff: 30s, max: 1h} (got ${describeValue(value)})`);
    return null;
  }
  const { times, backoff, max, ...rest } = value;
  for (const key of Object.keys(rest)) problem(`retry.${key}`, 'is not a retry setting; use times, backoff and max');
  if (typeof times !== 'number' || !Number.isSafeInteger(times) || times < 0 || times > MAX_RETRY_TIMES) {
    problem('retry.times', `must be a whole number from 0 to ${MAX_RETRY_TIMES} (got ${describeValue(times)})`);
    return null;
  }
  const seconds = (key: string, given: unknown): number | undefined | null => {
    if (given === undefined) return undefined;
    const length = typeof given === 'string' ? durationSeconds(given) : 'it is not a text such as 30s';
    if (typeof length === 'number') return length;
    problem(`retry.${key}`, `must be a length of time such as 30s, 10m or 1h (got ${describeValue(given)}: ${length})`);
    return null;
  };
  const backoffSeconds = seconds('backoff', backoff);
  const maxSeconds = seconds('max', max);
  if (backoffSeconds === null || maxSeconds === null || Object.keys(rest).length > 0 || times === 0) return null;
  return validateRetryPolicy({ times, backoff_seconds: backoffSeconds, max_seconds: maxSeconds });
}

/** A route's `timeout`: a length of time such as `10m` (durations.ts); null when none is set. */
function readRouteTimeout(value: unknown, problem: (key: string | null, text: string) => void): number | null {
  if (value === undefined || value === null) return null;
  const seconds = typeof value === 'string' ? durationSeconds(value) : 'it is not a text such as 10m';
  if (typeof seconds === 'number') return seconds;
  problem('timeout', `must be a length of time such as 90s, 10m or 1h30m (got ${describeValue(value)}: ${seconds})`);
  return null;
}

const COALESCE_KEYS = ['key', 'window', 'mode'];

/** A route's `coalesce`: `key` (a template), `window` (a duration such as 30s) and `mode` (latest, the default, or all); null when none. */
function readCoalesce(value: unknown, problem: (key: string | null, text: string) => void): RouteCoalesce | null {
  if (value === undefined || value === null) return null;
  if (!isJsonObject(value)) {
    problem(
      'coalesce',
      `must be a mapping such as {key: "{repository.full_name}#{pull_request.number}", window: 30s} (got ${describeValue(value)})`,
    );
    return null;
  }
  const before = { count: 0 };
  const wrong = (key: string, text: string) => {
    before.count += 1;
    problem(`coalesce.${key}`, text);
  };
  for (const key of Object.keys(value).filter((key) => !COALESCE_KEYS.includes(key))) {
    wrong(key, 'is not a coalesce setting; use key, window and mode');
  }
  const { key, window, mode = 'latest' } = value;
  if (typeof key !== 'string' || key.trim() === '') {
    wrong(
      'key',
      `must be a template that names what events share, such as "{repository.full_name}#{pull_request.number}" (got ${describeValue(key)})`,
    );
  }
  const windowMs = parseCoalesceWindow(window);
  if (windowMs === null) wrong('window', `must be a duration: ${COALESCE_WINDOW_RULE} (got ${describeValue(window)})`);
  if (!isCoalesceMode(mode)) wrong('mode', `must be ${COALESCE_MODES.join(' or ')} (got ${describeValue(mode)})`);
  if (before.count > 0) return null;
  return { key: key as string, windowMs: windowMs!, mode: mode as RouteCoalesce['mode'] };
}

const BUDGET_KEYS = { max_turns: 'whole', max_tokens: 'whole', max_cost: 'dollars', max_cost_per_day: 'dollars' } as const;
type RouteBudget = NonNullable<WebhookRoute['budget']>;

/**
 * A route's `budget`: `max_turns`, `max_tokens` (whole numbers of 1 or more), `max_cost` and
 * `max_cost_per_day` (US dollars); null when none.
 */
function readRouteBudget(value: unknown, problem: (key: string | null, text: string) => void): RouteBudget | null {
  if (value === undefined || value === null) return null;
  if (!isJsonObject(value)) {
    problem('budget', `must be a mapping such as {max_turns: 10, max_cost: 0.5} (got ${describeValue(value)})`);
    return null;
  }
  const budget: RouteBudget = {};
  for (const [key, limit] of Object.entries(value)) {
    const kind = BUDGET_KEYS[key as keyof typeof BUDGET_KEYS];
    if (kind === undefined) {
      problem(`budget.${key}`, 'is not a budget limit; use max_turns, max_tokens, max_cost or max_cost_per_day');
    } else if (kind === 'whole' && !(Number.isInteger(limit) && (limit as number) >= 1)) {
      problem(`budget.${key}`, `must be a whole number of 1 or more (got ${describeValue(limit)})`);
    } else if (kind === 'dollars' && !(typeof limit === 'number' && limit > 0)) {
      problem(`budget.${key}`, `must be a positive amount of US dollars such as 0.5 (got ${describeValue(limit)})`);
    } else {
      budget[key as keyof RouteBudget] = limit as number;
    }
  }
  return Object.keys(budget).length > 0 ? budget : null;
}

function readRouteSecrets(
  value: unknown,
  fallback: string[] | null,
  listenerOnLoopback: boolean,
  problem: (key: string | null, text: string) => void,
): RouteSecrets | null {
  const own = readSecrets(value);
  if (!own.ok) {
    problem('secret', own.why);
    return null;
  }
  const values = own.values ?? fallback;
  if (values === null) {
    problem(null, 'has no secret and platforms.webhook.extra.secret is not set either; give the route a secret (or a list of them)');
    return null;
  }
  if (!values.includes(INSECURE_NO_AUTH)) return { kind: 'secrets', values };
  if (values.length > 1) {
    problem('secret', `lists ${INSECURE_NO_AUTH} among other secrets; it must stand alone`);
    return null;
  }
  if (!listenerOnLoopback) {
    problem(
      'secret',
      `is ${INSECURE_NO_AUTH}, which is refused unless the listener is bound to a loopback address; set platforms.webhook.extra.host to 127.0.0.1 or give the route a real secret`,
    );
    return null;
  }
  return { kind: 'insecure_no_auth' };
}

function readStringList(value: unknown, key: string, problem: (key: string, text: string) => void): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value) && value.every((item) => typeof item === 'string' && item.trim() !== '')) {
    return value.map((item: string) => item.trim());
  }
  problem(key, `must be a list of names (got ${describeValue(value)})`);
  return [];
}

/** `content_types`: media types (`text/plain`) or ranges (`text/*`), read in lower case. */
function readContentTypes(value: unknown, problem: (key: string, text: string) => void): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    problem('content_types', `must be a list of media types such as ["text/plain"] (got ${describeValue(value)})`);
    return [];
  }
  const types = value.map((item: string) => item.trim().toLowerCase());
  const wrong = types.find((type) => !isMediaRange(type));
  if (wrong !== undefined) {
    problem(
      'content_types',
      `lists ${JSON.stringify(wrong)}, which is not a media type; write type/subtype without parameters, such as "text/plain", or a range such as "text/*"`,
    );
    return [];
  }
  return types;
}

function readDeliverExtra(value: unknown, problem: (key: string, text: string) => void): Record<string, string> {
  if (!isJsonObject(value)) {
    problem('deliver_extra', `must be a mapping such as {chat_id: "…"} (got ${describeValue(value)})`);
    return {};
  }
  const extra: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' || typeof item === 'number') extra[key] = String(item);
    else problem(`deliver_extra.${key}`, `must be a string or a number (got ${describeValue(item)})`);
  }
  return extra;
}

function readFilters(value: unknown, problem: (key: string, text: string) => void): FieldFilter[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problem('filters', `must be a list of {field, in} entries (got ${describeValue(value)})`);
    return [];
  }
  const filters: FieldFilter[] = [];
  value.forEach((filter: unknown, index) => {
    const keys = isJsonObject(filter) ? Object.keys(filter) : [];
    if (
      !isJsonObject(filter) ||
      typeof filter.field !== 'string' ||
      filter.field.trim() === '' ||
      !Array.isArray(filter.in) ||
      keys.some((key) => key !== 'field' && key !== 'in')
    ) {
      problem(`filters[${index}]`, 'must be {field: "<dotted.path>", in: [<allowed values>]}; no other operator exists');
      return;
    }
    filters.push({ field: filter.field.trim(), in: filter.in });
  });
  return filters;
}
