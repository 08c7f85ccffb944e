import { isJsonObject } from '../../domain/webhook/payloadPath.js';

/** The longest rendering of a value that messages show; longer ones are cut with "…". */
const MAX_SHOWN_CHARS = 60;

/** A short, safe rendering of what the file holds at a key, for "(got …)". */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (isJsonObject(value)) return 'a mapping';
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return shown.length <= MAX_SHOWN_CHARS ? shown : `${shown.slice(0, MAX_SHOWN_CHARS - 1)}…`;
}
