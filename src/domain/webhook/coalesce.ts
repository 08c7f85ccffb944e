import { durationMs } from '../durations.js';
import { renderTemplate, webhookPrompt } from './promptTemplate.js';
import type { CoalescedDelivery, WebhookEvent } from './WebhookEvent.js';

/**
 * A route's `coalesce` (docs/webhooks.md, Coalescing): events whose `key` template renders to
 * the same text make one run once `windowMs` passed after the last of them (a debounce: every
 * new event of the key pushes the run back). `latest` runs on the last payload, `all` on every
 * payload in order (the newest COALESCE_ALL_LIMIT of them).
 */
export interface RouteCoalesce {
  key: string;
  windowMs: number;
  mode: CoalesceMode;
}

export const COALESCE_MODES = ['latest', 'all'] as const;
export type CoalesceMode = (typeof COALESCE_MODES)[number];

/** How many payloads a run in `all` mode is given at most: the newest ones. */
export const COALESCE_ALL_LIMIT = 20;

/** The longest window taken: a day (the inbox holds a group's events until it runs). */
const LONGEST_WINDOW_MS = 24 * 60 * 60 * 1000;

const WINDOW_UNITS_MS: ReadonlyArray<[string, number]> = [
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
];

/** What a duration such as `30s` or `5m` must look like, said as the end of a refusal. */
export const COALESCE_WINDOW_RULE = 'write a whole number with a unit, such as 500ms, 30s, 5m or 1h, of at most 24h';

/** The milliseconds of a window such as `30s`, `5m`, `1h` or `500ms` (durationMs); null when it is not one (or over a day). */
export function parseCoalesceWindow(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const ms = durationMs(text);
  return typeof ms === 'number' && ms <= LONGEST_WINDOW_MS ? ms : null;
}

/** A window in the shortest words that read back as it: `3s`, `5m`, `1500ms`. */
export function formatCoalesceWindow(ms: number): string {
  for (const [unit, size] of WINDOW_UNITS_MS) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** Whether `mode` is a coalesce mode. */
export function isCoalesceMode(mode: unknown): mode is CoalesceMode {
  return (COALESCE_MODES as readonly unknown[]).includes(mode);
}

/** What an accepted event of a coalescing route is stored with: the key rendered against its payload. */
export function coalesceOf(route: { coalesce?: RouteCoalesce }, payload: Record<string, unknown>): WebhookEvent['coalesce'] {
  if (route.coalesce === undefined) return undefined;
  return { key: renderTemplate(route.coalesce.key, payload), windowMs: route.coalesce.windowMs };
}

/**
 * The prompt of a coalesced run: in `latest` mode (or for a run of one event) the route's prompt
 * rendered on the last payload; in `all` mode the prompt rendered on each payload, oldest first,
 * each under a heading line that says which delivery it is.
 */
export function coalescedPrompt(route: { name: string; prompt: string | null; coalesce?: RouteCoalesce }, event: WebhookEvent): string {
  const members = event.coalesced ?? [];
  if (route.coalesce?.mode !== 'all' || members.length === 0) return webhookPrompt(route, event.event, event.payload);
  const given = members.filter((member) => member.payload !== undefined);
  const parts = [
    `${members.length} webhook events with the same key arrived within the coalescing window; ` +
      (given.length < members.length
        ? `the newest ${given.length} are given here, oldest first.`
        : `all ${given.length} are given here, oldest first.`),
  ];
  given.forEach((member, index) => {
    parts.push(
      '',
      `--- Event ${index + 1} of ${given.length} (delivery ${member.deliveryId}, received ${member.receivedAt}) ---`,
      webhookPrompt(route, member.event, member.payload!),
    );
  });
  return parts.join('\n');
}

/** One event waiting in a group, as CoalesceGroups keeps it. */
interface GroupMember {
  id: string;
  receivedAtMs: number;
}

/** A group of events with one key, not handed out yet. */
export interface OpenGroup {
  /** The id of the group's first event: the id of its run. */
  id: string;
  route: string;
  key: string;
  members: GroupMember[];
  /** When the group's run may start: the last member's receipt plus its window (ms). */
  dueAtMs: number;
}

/**
 * The groups of coalesced events an inbox holds in memory (the in-memory and file inboxes),
 * each rule kept once: an event joins the open group of its route and key, or opens one; each
 * event pushes its group's start to its own receipt plus its window; a group is handed out once
 * its start has come, oldest group first, and closed then: events of the key accepted later open
 * a new group. Pure: the caller says what time it is.
 */
export class CoalesceGroups {
  private readonly open = new Map<string, OpenGroup>();

  get size(): number {
    return this.open.size;
  }

  /** Adds an event to its group (opened when none is open for its route and key). */
  add(event: { id: string; route: string; receivedAtMs: number; coalesce: { key: string; windowMs: number } }): void {
    const name = groupName(event.route, event.coalesce.key);
    const dueAtMs = event.receivedAtMs + event.coalesce.windowMs;
    const group = this.open.get(name);
    if (group === undefined) {
      this.open.set(name, {
        id: event.id,
        route: event.route,
        key: event.coalesce.key,
        members: [{ id: event.id, receivedAtMs: event.receivedAtMs }],
        dueAtMs,
      });
      return;
    }
    group.members.push({ id: event.id, receivedAtMs: event.receivedAtMs });
    group.dueAtMs = Math.max(group.dueAtMs, dueAtMs);
  }

  /** The oldest group whose start has come at `nowMs`, of a route not in `skipRoutes`; null when none. */
  due(nowMs: number, skipRoutes?: ReadonlySet<string>): OpenGroup | null {
    for (const group of this.open.values()) {
      if (group.dueAtMs <= nowMs && !skipRoutes?.has(group.route)) return group;
    }
    return null;
  }

  /** Closes a group (its run is handed out): later events of its key open a new one. */
  close(group: OpenGroup): void {
    const name = groupName(group.route, group.key);
    if (this.open.get(name) === group) this.open.delete(name);
  }

  /** Forgets every group (the inbox starts afresh). */
  clear(): void {
    this.open.clear();
  }
}

function groupName(route: string, key: string): string {
  return `${route}\u0000${key}`;
}

/** The run's event made of a closed group's members (oldest first, each read back whole or without its payload). */
export function groupRunEvent(groupId: string, members: readonly WebhookEvent[], resumed?: boolean): WebhookEvent {
  const last = members.at(-1)!;
  const payloadFrom = Math.max(0, members.length - COALESCE_ALL_LIMIT);
  const coalesced: CoalescedDelivery[] = members.map((member, index) => ({
    id: member.id,
    event: member.event,
    deliveryId: member.deliveryId,
    receivedAt: member.receivedAt,
    ...(index >= payloadFrom ? { payload: member.payload } : {}),
    ...(member.traceparent !== undefined ? { traceparent: member.traceparent } : {}),
  }));
  const { coalesce: _coalesce, ...rest } = last;
  return {
    ...rest,
    id: groupId,
    coalesced,
    ...(resumed === undefined ? {} : { resumed }),
  };
}
