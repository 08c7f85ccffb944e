import { KNOWN_PLATFORMS } from '../DeliveryTarget.js';

/** One field filter of a route: the payload value at `field` must equal one of `in` (JSON equality). */
export interface FieldFilter {
  /** Dotted path into the payload; list indexes allowed (`pull_request.labels.0.name`). */
  field: string;
  in: readonly unknown[];
}

/**
 * The `secret` value that turns authentication off for a config.yaml route, for local
 * development; refused unless the listener is bound to a loopback address (decisions §7).
 */
export const INSECURE_NO_AUTH = 'INSECURE_NO_AUTH';

/** Secrets of a route: any one matching authenticates (rotation). */
export type RouteSecrets = { kind: 'secrets'; values: readonly string[] } | { kind: 'insecure_no_auth' };

/**
 * A webhook route as the listener serves it (service-spec "Webhook route", decisions §7–§8),
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
  /** `log`, `repo_comment`, `sms`, `discord`, `slack`, `telegram`, `whatsapp` or `signal`. */
  deliver: string;
  /** For `repo_comment`: `repo`, `pr_number` (templates). For chat platforms: `chat_id`. */
  deliverExtra: Readonly<Record<string, string>>;
  filters: readonly FieldFilter[];
}

export const DEFAULT_WEBHOOK_TOOLSETS: readonly string[] = ['agent-webhook'];

export const WEBHOOK_DELIVERIES: readonly string[] = ['log', 'repo_comment', ...KNOWN_PLATFORMS];
