import { formatCoalesceWindow, isCoalesceMode, parseCoalesceWindow, type RouteCoalesce } from './coalesce.js';
import { ROUTE_NAME_RULE, WEBHOOK_DELIVERIES, isRouteName } from './WebhookRoute.js';
import type { WebhookSubscription } from './WebhookSubscription.js';
import { isJsonObject } from './payloadPath.js';

/**
 * How a subscription is stored, in every store: the object `webhook_subscriptions.json` holds
 * under its name (docs/webhooks.md), with snake_case keys and without the name itself.
 */
export type SubscriptionRecord = Record<string, unknown>;

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** One stored record as a subscription, or one sentence saying why it is not one. Never throws. */
export function readSubscriptionRecord(
  name: string,
  value: unknown,
): { ok: true; subscription: WebhookSubscription } | { ok: false; problem: string } {
  const problem = (why: string) => ({ ok: false as const, problem: `the subscription "${name}" ${why}` });
  // A name written by hand that no route can have: serving it would put its run records outside their directory.
  if (!isRouteName(name)) return problem(`has a name no route can have (${ROUTE_NAME_RULE})`);
  if (!isJsonObject(value)) return problem('is not an object');
  const { events = [], prompt = null, skills = [], deliver = 'log', deliver_extra: extra = {}, secret } = value;
  if (!isStringList(events)) return problem('has "events" that are not a list of strings');
  if (prompt !== null && typeof prompt !== 'string') return problem('has a "prompt" that is not a string');
  if (!isStringList(skills)) return problem('has "skills" that are not a list of strings');
  if (typeof deliver !== 'string' || !WEBHOOK_DELIVERIES.includes(deliver)) {
    return problem(`has a "deliver" that is not one of ${WEBHOOK_DELIVERIES.join(', ')}`);
  }
  if (!isJsonObject(extra) || (extra.chat_id !== undefined && typeof extra.chat_id !== 'string')) {
    return problem('has a "deliver_extra" that is not an object with a string "chat_id"');
  }
  if (typeof secret !== 'string' || secret === '') return problem('has no "secret"');
  const deliverOnly = value.deliver_only ?? false;
  if (typeof deliverOnly !== 'boolean') return problem('has a "deliver_only" that is not true or false');
  const coalesce = value.coalesce === undefined ? null : storedCoalesce(value.coalesce);
  if (coalesce === 'bad') return problem('has a "coalesce" that is not {key, window, mode}');
  return {
    ok: true,
    subscription: {
      name,
      events,
      prompt,
      skills,
      deliver,
      deliverChatId: typeof extra.chat_id === 'string' ? extra.chat_id : null,
      ...(deliverOnly ? { deliverOnly: true } : {}),
      ...(coalesce ? { coalesce } : {}),
      secret,
      createdAt: typeof value.created_at === 'string' ? value.created_at : '',
      updatedAt: typeof value.updated_at === 'string' ? value.updated_at : '',
    },
  };
}

/** The record stored for a subscription (its name is the key it is stored under). */
export function subscriptionRecordOf(subscription: WebhookSubscription): SubscriptionRecord {
  return {
    events: subscription.events,
    prompt: subscription.prompt,
    skills: subscription.skills,
    deliver: subscription.deliver,
    ...(subscription.deliverChatId !== null ? { deliver_extra: { chat_id: subscription.deliverChatId } } : {}),
    ...(subscription.deliverOnly === true ? { deliver_only: true } : {}),
    ...(subscription.coalesce
      ? {
          coalesce: {
            key: subscription.coalesce.key,
            window: formatCoalesceWindow(subscription.coalesce.windowMs),
            mode: subscription.coalesce.mode,
          },
        }
      : {}),
    secret: subscription.secret,
    created_at: subscription.createdAt,
    updated_at: subscription.updatedAt,
  };
}

/** Stored records by name as the subscriptions, sorted by name, and one sentence for each record that is not one. */
export function readSubscriptionRecords(entries: Iterable<readonly [string, unknown]>): {
  subscriptions: WebhookSubscription[];
  problems: string[];
} {
  const subscriptions: WebhookSubscription[] = [];
  const problems: string[] = [];
  for (const [name, value] of entries) {
    const reading = readSubscriptionRecord(name, value);
    if (reading.ok) subscriptions.push(reading.subscription);
    else problems.push(reading.problem);
  }
  subscriptions.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { subscriptions, problems };
}

/** A stored `coalesce` ({key, window, mode}), or 'bad'. */
function storedCoalesce(value: unknown): RouteCoalesce | 'bad' {
  if (!isJsonObject(value) || typeof value.key !== 'string' || value.key === '') return 'bad';
  const windowMs = parseCoalesceWindow(value.window);
  const mode = value.mode ?? 'latest';
  if (windowMs === null || !isCoalesceMode(mode)) return 'bad';
  return { key: value.key, windowMs, mode };
}
