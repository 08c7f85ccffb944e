import { COALESCE_MODES, COALESCE_WINDOW_RULE, isCoalesceMode, parseCoalesceWindow, type RouteCoalesce } from './coalesce.js';
import { parseDeliveryTargets } from '../DeliveryTarget.js';
import { ERROR_CODES } from '../errorCodes.js';
import { InvalidWebhookError, WebhookError } from '../errors.js';
import {
  DEFAULT_WEBHOOK_TOOLSETS,
  INSECURE_NO_AUTH,
  ROUTE_NAME_RULE,
  WEBHOOK_DELIVERIES,
  isRouteName,
  type WebhookRoute,
} from './WebhookRoute.js';

/**
 * A route created with `agent webhook subscribe` (docs/webhooks.md) rather than written in
 * config.yaml. It carries its own secret, always a real one: `INSECURE_NO_AUTH` means nothing
 * special here.
 */
export interface WebhookSubscription {
  name: string;
  /** Accepted event kinds; empty accepts all. */
  events: readonly string[];
  prompt: string | null;
  skills: readonly string[];
  /** One of WEBHOOK_DELIVERIES; `log` by default. */
  deliver: string;
  /** For chat platforms; null is the home channel. */
  deliverChatId: string | null;
  /** Deliver the rendered prompt as the message, without running the agent; absent is false. */
  deliverOnly?: boolean;
  /** Events of one rendered key within the window make one run (coalesce.ts); absent: every event runs. */
  coalesce?: RouteCoalesce;
  secret: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** ISO 8601 UTC. */
  updatedAt: string;
}

/**
 * Where a subscription's `repo_comment` goes: the pull request the event is about. The command
 * line has no flags for these, and a pull-request event names both.
 */
export const SUBSCRIPTION_REPO_COMMENT_TARGET: Readonly<Record<string, string>> = {
  repo: '{repository.full_name}',
  pr_number: '{pull_request.number}',
};

/** The route the listener serves for a subscription: default toolsets, no field filters. */
export function subscriptionRoute(subscription: WebhookSubscription): WebhookRoute {
  const deliverExtra: Record<string, string> =
    subscription.deliver === 'repo_comment'
      ? { ...SUBSCRIPTION_REPO_COMMENT_TARGET }
      : subscription.deliverChatId !== null
        ? { chat_id: subscription.deliverChatId }
        : {};
  return {
    name: subscription.name,
    source: 'subscription',
    secrets: { kind: 'secrets', values: [subscription.secret] },
    events: [...subscription.events],
    prompt: subscription.prompt,
    skills: [...subscription.skills],
    toolsets: DEFAULT_WEBHOOK_TOOLSETS,
    allowPrivateNetworks: false,
    deliverOnly: subscription.deliverOnly === true,
    deliver: subscription.deliver,
    deliverExtra,
    filters: [],
    ...(subscription.coalesce ? { coalesce: subscription.coalesce } : {}),
  };
}

/** The options of `agent webhook subscribe`; absent ones take their defaults. */
export interface SubscriptionOptions {
  events?: readonly string[];
  prompt?: string | null;
  skills?: readonly string[];
  deliver?: string | null;
  deliverChatId?: string | null;
  deliverOnly?: boolean;
  /** `--coalesce-key`, `--coalesce-window` (`30s`), `--coalesce-mode` (`latest` by default). */
  coalesceKey?: string | null;
  coalesceWindow?: string | null;
  coalesceMode?: string | null;
  secret?: string | null;
}

/** Throws WEBHOOK.NAME_INVALID unless `name` can name a route (ROUTE_NAME, the same rule as config.yaml's routes). */
export function checkSubscriptionName(name: string): void {
  if (!isRouteName(name)) {
    throw new InvalidWebhookError(
      ERROR_CODES.WEBHOOK.NAME_INVALID,
      `The name "${name}" cannot be used for a subscription: ${ROUTE_NAME_RULE}.`,
    );
  }
}

/** WEBHOOK.NOT_FOUND: no subscription has this name. */
export function subscriptionNotFound(name: string): WebhookError {
  return new WebhookError(ERROR_CODES.WEBHOOK.NOT_FOUND, `No webhook subscription is named "${name}"; see "agent webhook list".`);
}

const names = (list: readonly string[] | undefined) => (list ?? []).map((item) => item.trim()).filter((item) => item !== '');

/**
 * The subscription `name` as these options define it. Subscribing again replaces
 * every option with what is given now, but keeps the secret unless a new one is given, and the
 * creation time. Without a secret, `newSecret()` makes one. Throws InvalidInputError for a bad
 * name, delivery, chat id or secret.
 */
export function defineSubscription(
  name: string,
  options: SubscriptionOptions,
  current: WebhookSubscription | null,
  now: Date,
  newSecret: () => string,
): WebhookSubscription {
  checkSubscriptionName(name);
  const deliver = options.deliver?.trim() || 'log';
  if (!WEBHOOK_DELIVERIES.includes(deliver)) {
    throw new InvalidWebhookError(
      ERROR_CODES.WEBHOOK.DELIVER_INVALID,
      `A subscription delivers to one of ${WEBHOOK_DELIVERIES.join(', ')}; "${deliver}" is none of them.`,
    );
  }
  const deliverChatId = options.deliverChatId?.trim() || null;
  if (deliverChatId !== null) {
    if (deliver === 'log' || deliver === 'repo_comment') {
      throw new InvalidWebhookError(
        ERROR_CODES.WEBHOOK.DELIVER_INVALID,
        `--deliver-chat-id applies to chat platforms only, not to "${deliver}".`,
      );
    }
    parseDeliveryTargets(`${deliver}:${deliverChatId}`);
  }
  const secret = options.secret ?? null;
  if (secret !== null && (secret.trim() === '' || secret === INSECURE_NO_AUTH)) {
    throw new InvalidWebhookError(
      ERROR_CODES.WEBHOOK.SECRET_INVALID,
      secret === INSECURE_NO_AUTH
        ? `A subscription always checks signatures; ${INSECURE_NO_AUTH} is honoured only for routes in config.yaml on a loopback listener.`
        : 'The secret must not be empty; leave --secret out to have one generated.',
    );
  }
  const prompt = options.prompt?.trim() ? options.prompt : null;
  const coalesce = subscriptionCoalesce(options);
  return {
    name,
    events: names(options.events),
    prompt,
    skills: names(options.skills),
    deliver,
    deliverChatId,
    ...(options.deliverOnly === true ? { deliverOnly: true } : {}),
    ...(coalesce ? { coalesce } : {}),
    secret: secret ?? current?.secret ?? newSecret(),
    createdAt: current?.createdAt || now.toISOString(),
    updatedAt: now.toISOString(),
  };
}

/** The coalescing the options ask for, or null; throws WEBHOOK.COALESCE_INVALID in one sentence naming the flag. */
function subscriptionCoalesce(options: SubscriptionOptions): RouteCoalesce | null {
  const key = options.coalesceKey?.trim() ? options.coalesceKey : null;
  const invalid = (text: string) => new InvalidWebhookError(ERROR_CODES.WEBHOOK.COALESCE_INVALID, text);
  if (key === null) {
    if (options.coalesceWindow != null || options.coalesceMode != null)
      throw invalid('--coalesce-window and --coalesce-mode need --coalesce-key, the template that names what events share.');
    return null;
  }
  const windowMs = parseCoalesceWindow(options.coalesceWindow ?? undefined);
  if (windowMs === null) {
    throw invalid(
      options.coalesceWindow == null
        ? '--coalesce-key needs --coalesce-window, such as 30s.'
        : `--coalesce-window "${options.coalesceWindow}" is not a duration: ${COALESCE_WINDOW_RULE}.`,
    );
  }
  const mode = options.coalesceMode ?? 'latest';
  if (!isCoalesceMode(mode)) throw invalid(`--coalesce-mode must be ${COALESCE_MODES.join(' or ')}, not "${mode}".`);
  return { key, windowMs, mode };
}
