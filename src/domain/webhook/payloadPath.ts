/** What a dotted path finds in a payload: the value, or nothing (which is not the same as `null`). */
export type PathLookup = { found: true; value: unknown } | { found: false };

const LIST_INDEX = /^(?:0|[1-9][0-9]*)$/;

/**
 * The value at a dotted path (`pull_request.labels.0.name`): object keys by name, list elements
 * by index. Only a payload's own keys count, so `constructor` or `__proto__` find nothing unless
 * the sender put them there. An empty segment (`a..b`, a leading or trailing dot) finds nothing.
 */
export function lookUpPath(payload: unknown, path: string): PathLookup {
  let current: unknown = payload;
  for (const segment of path.split('.')) {
    if (segment === '') return { found: false };
    if (Array.isArray(current)) {
      if (!LIST_INDEX.test(segment)) return { found: false };
      const index = Number(segment);
      if (index >= current.length) return { found: false };
      current = current[index];
    } else if (isJsonObject(current)) {
      if (!Object.hasOwn(current, segment)) return { found: false };
      current = current[segment];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

/** A JSON object: not null, not a list. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Exact equality of JSON values: same type and value, lists element by element in order,
 * objects with the same keys (in any order) and equal values. `1` and `"1"` differ.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((element, index) => jsonEqual(element, b[index]));
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
  }
  return false;
}
