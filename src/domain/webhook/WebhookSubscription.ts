import { DEFAULT_WEBHOOK_TOOLSETS, type WebhookRoute } from './WebhookRoute.js';

/**
 * A route created with `agent webhook subscribe` (decisions §8) rather than written in
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
  secret: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** ISO 8601 UTC. */
  updatedAt: string;
}

/** Lower-case letters, digits, `_` and `-`, starting with a letter or digit: safe in a URL and a file. */
export const SUBSCRIPTION_NAME = /^[a-z0-9][a-z0-9_-]*$/;

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
    deliver: subscription.deliver,
    deliverExtra,
    filters: [],
  };
}
