import { jsonEqual, lookUpPath } from './payloadPath.js';
import type { FieldFilter } from './WebhookRoute.js';

/**
 * Whether a payload passes a route's filters: every filter must match, and a filter matches
 * when its field exists and equals one of its `in` values as JSON (exactly: `1` is not `"1"`).
 * No filters pass everything.
 */
export function passesFilters(filters: readonly FieldFilter[], payload: Record<string, unknown>): boolean {
  return filters.every((filter) => {
    const lookup = lookUpPath(payload, filter.field);
    return lookup.found && filter.in.some((allowed) => jsonEqual(lookup.value, allowed));
  });
}
