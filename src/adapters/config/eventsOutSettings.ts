import { DEFAULT_FIRST_RETRY_MS, type EventSubscription } from '../../domain/events/outboundEvents.js';
import type { EventSubscriptions } from '../../application/ports/EventSubscriptions.js';
import type { AgentConfig } from './AgentConfig.js';

const WHSEC_PREFIX = 'whsec_';

/**
 * The HMAC key of a secret as Standard Webhooks gives it: `whsec_<base64>` is the base64's bytes;
 * any other text is used as it is, its UTF-8 bytes (what a receiver written for a plain shared
 * secret expects).
 */
export function secretKey(secret: string): Uint8Array {
  if (secret.startsWith(WHSEC_PREFIX)) return new Uint8Array(Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64'));
  return new Uint8Array(Buffer.from(secret, 'utf8'));
}

/** Why `secret` cannot be a key, or null: an empty one, or a `whsec_` one whose rest is not base64. */
export function secretKeyProblem(secret: string): string | null {
  if (secret.length === 0) return 'it is empty';
  if (!secret.startsWith(WHSEC_PREFIX)) return null;
  const encoded = secret.slice(WHSEC_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return 'what follows whsec_ is not base64';
  return null;
}

/** The `events_out` subscriptions of config.yaml, as the application sees them. */
export function eventSubscriptionsFrom(config: Pick<AgentConfig, 'events_out'>): EventSubscription[] {
  return Object.entries(config.events_out ?? {}).map(([name, entry]) => ({
    name,
    url: entry.url,
    key: secretKey(entry.secret),
    events: [...new Set(entry.events)],
    jobs: entry.jobs ?? null,
    routes: entry.routes ?? null,
    firstRetryMs: entry.first_retry_seconds === undefined ? DEFAULT_FIRST_RETRY_MS : entry.first_retry_seconds * 1000,
  }));
}

/** The EventSubscriptions port over config.yaml as loaded once. */
export class ConfiguredEventSubscriptions implements EventSubscriptions {
  private readonly subscriptions: readonly EventSubscription[];

  constructor(config: Pick<AgentConfig, 'events_out'>) {
    this.subscriptions = eventSubscriptionsFrom(config);
  }

  all(): readonly EventSubscription[] {
    return this.subscriptions;
  }
}
