/**
 * What the webhook listener's answer to a delivery means (docs/webhooks.md, "Answers"): 202
 * accepted (a run follows), 200 ignored (for its event kind or a filter; nothing runs) or
 * duplicate (a delivery id it already had; nothing runs again), anything else refused.
 */
export type ListenerVerdict =
  | { kind: 'accepted'; deliveryId: string | null }
  | { kind: 'ignored'; reason: 'event'; event: string | null }
  | { kind: 'ignored'; reason: 'filter' }
  | { kind: 'duplicate'; deliveryId: string | null }
  | { kind: 'refused'; status: number; body: string };

/** Reads the listener's answer (its status and body as received). */
export function listenerVerdict(status: number, body: string): ListenerVerdict {
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) parsed = value as Record<string, unknown>;
  } catch {
    // Not JSON: only the status says what happened.
  }
  const text = (key: string) => (typeof parsed[key] === 'string' ? (parsed[key] as string) : null);
  if (status === 202) return { kind: 'accepted', deliveryId: text('delivery_id') };
  if (status === 200 && parsed.status === 'ignored') {
    return parsed.reason === 'filter' ? { kind: 'ignored', reason: 'filter' } : { kind: 'ignored', reason: 'event', event: text('event') };
  }
  if (status === 200 && parsed.status === 'duplicate') return { kind: 'duplicate', deliveryId: text('delivery_id') };
  if (status >= 200 && status < 300) return { kind: 'accepted', deliveryId: text('delivery_id') };
  return { kind: 'refused', status, body };
}

/**
 * A sentence for a test event's verdict; `events` are the route's event kinds (empty: any),
 * which say why an event was ignored for its kind.
 */
export function testEventSentence(verdict: ListenerVerdict, events: readonly string[] = []): string {
  switch (verdict.kind) {
    case 'accepted':
      return `The test event was accepted (202)${verdict.deliveryId ? ` as delivery ${verdict.deliveryId}` : ''}: the agent runs it, and it shows below once it ran.`;
    case 'ignored':
      if (verdict.reason === 'filter') return "The test event was ignored (200): the route's filters did not match it, so nothing ran.";
      return `The test event was ignored (200): the route takes ${events.length > 0 ? `only the events ${events.join(', ')}` : 'other events'}, not ${verdict.event ? `"${verdict.event}"` : 'this one'}, so nothing ran.`;
    case 'duplicate':
      return `The test event was ignored (200): the listener already had its delivery id${verdict.deliveryId ? ` ${verdict.deliveryId}` : ''}, so nothing ran again.`;
    case 'refused':
      return `The listener refused the test event (${verdict.status})${verdict.body.trim() === '' ? '.' : `: ${verdict.body.trim()}`}`;
  }
}
