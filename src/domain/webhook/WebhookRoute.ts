import type { RetryPolicy } from '../retries.js';
import type { RunBudget } from '../runs/usage.js';
import { KNOWN_PLATFORMS } from '../DeliveryTarget.js';
import type { RouteCoalesce } from './coalesce.js';

/** One field filter of a route: the payload value at `field` must equal one of `in` (JSON equality). */
export interface FieldFilter {
  /** Dotted path into the payload; list indexes allowed (`pull_request.labels.0.name`). */
  field: string;
  in: readonly unknown[];
}

/**
 * The `secret` value that turns authentication off for a config.yaml route, for local
 * development; refused unless the listener is bound to a loopback address, where only this
 * machine can send to it.
 */
export const INSECURE_NO_AUTH = 'INSECURE_NO_AUTH';

/**
 * What a route name may be, for config.yaml routes and subscriptions alike: the name is the path
 * segment `/webhooks/<name>` and the directory of the route's run records, so it must be safe in
 * both — no `.` (no `..`), no `/`, nothing percent-encoded, and short enough for any file system.
 */
export const ROUTE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The rule of ROUTE_NAME as the end of a refusal: what to write instead. */
export const ROUTE_NAME_RULE = 'use 1 to 64 letters, digits, "-" and "_", starting with a letter or digit';

/** Whether `name` can name a route (ROUTE_NAME). */
export function isRouteName(name: string): boolean {
  return ROUTE_NAME.test(name);
}

/** Secrets of a route: any one matching authenticates (rotation). */
export type RouteSecrets = { kind: 'secrets'; values: readonly string[] } | { kind: 'insecure_no_auth' };

/**
 * A webhook route as the listener serves it (docs/webhooks.md),
 * from config.yaml (`platforms.webhook.extra.routes.<name>`) or from a dynamic subscription.
 */
export interface WebhookRoute {
  /** The path segment: `/webhooks/<name>`. */
  name: string;
  source: 'config' | 'subscription';
  secrets: RouteSecrets;
  /** Accepted event kinds; empty accepts all. Exact, case-sensitive. */
  events: readonly string[];
  /** Prompt template; null passes the event name, route name and `{__raw__}`. */
  prompt: string | null;
  /** Only the first skill that is found is loaded. */
  skills: readonly string[];
  /** Toolsets the agent may use; default `agent-webhook`. */
  toolsets: readonly string[];
  /**
   * Whether the run's web tools may reach loopback, private and link-local addresses; default
   * false, since the payload (attacker-controlled text) may try to send the agent there.
   */
  allowPrivateNetworks: boolean;
  /**
   * `deliver_only`: the rendered prompt is the message, delivered as it is; no agent runs (a
   * forward, a notification). Default false.
   */
  deliverOnly: boolean;
  /** `log`, `repo_comment`, `sms`, `discord`, `slack`, `telegram`, `whatsapp` or `signal`. */
  deliver: string;
  /** For `repo_comment`: `repo`, `pr_number` (templates). For chat platforms: `chat_id`. */
  deliverExtra: Readonly<Record<string, string>>;
  filters: readonly FieldFilter[];
  /**
   * `content_types`: media types (or `type/*` ranges) taken besides JSON and forms, in lower case,
   * `application/octet-stream` for a request without a Content-Type; absent or empty: none
   * (webhookRequest.ts, takesContentType).
   */
  contentTypes?: readonly string[];
  /** `budget`: the limits of each of its runs and of its runs' cost per day (docs/runs.md, Budgets); absent: `agent.budget`. */
  budget?: RunBudget & { max_cost_per_day?: number | null };
  /** `retry`: how a run that failed for a reason that may pass runs again (docs/runs.md, Retries); absent: never. */
  retry?: RetryPolicy;
  /** `timeout`: the longest one of its runs may take, in seconds (docs/runs.md, Time limits and cancel); absent: no limit. */
  timeoutSeconds?: number;
  /** `coalesce`: events of one rendered key within the window make one run (coalesce.ts); absent: every event runs. */
  coalesce?: RouteCoalesce;
}

export const DEFAULT_WEBHOOK_TOOLSETS: readonly string[] = ['agent-webhook'];

export const WEBHOOK_DELIVERIES: readonly string[] = ['log', 'repo_comment', ...KNOWN_PLATFORMS];
