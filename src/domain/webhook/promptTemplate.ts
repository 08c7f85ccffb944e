import { lookUpPath } from './payloadPath.js';

/** `{__raw__}` is cut to this many characters. */
export const RAW_PAYLOAD_LIMIT = 4000;

const RAW = '__raw__';

/** `{` path `}` with no braces or white space inside; anything else is plain text. */
const PLACEHOLDER = /\{([^{}\s]+)\}/g;

/**
 * A route's prompt template filled from a payload. `{a.b.0.c}` takes the value at
 * that path: a string as it is, anything else as JSON indented by 2. `{__raw__}` is the whole
 * payload as 2-space JSON cut at 4000 characters. A placeholder whose path finds nothing stays
 * as written. There is no other syntax, and a value put in is never read again as a template.
 */
export function renderTemplate(template: string, payload: Record<string, unknown>): string {
  let raw: string | undefined;
  return template.replace(PLACEHOLDER, (placeholder, path: string) => {
    if (path === RAW) return (raw ??= rawPayload(payload));
    const lookup = lookUpPath(payload, path);
    if (!lookup.found) return placeholder;
    return typeof lookup.value === 'string' ? lookup.value : JSON.stringify(lookup.value, null, 2);
  });
}

/** The payload as 2-space JSON, cut at 4000 characters (never in the middle of a character). */
export function rawPayload(payload: Record<string, unknown>): string {
  const json = JSON.stringify(payload, null, 2);
  // Every character is one or two UTF-16 units, so a text this short holds at most the limit.
  if (json.length <= RAW_PAYLOAD_LIMIT) return json;
  let end = 0;
  for (let characters = 0; characters < RAW_PAYLOAD_LIMIT && end < json.length; characters += 1) {
    end += isSurrogatePair(json, end) ? 2 : 1;
  }
  return json.slice(0, end);
}

/** Whether `text` holds a high and a low surrogate at `index` (one character in two units). */
function isSurrogatePair(text: string, index: number): boolean {
  const high = text.charCodeAt(index);
  const low = text.charCodeAt(index + 1);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

/** The prompt without a `prompt` template: which event reached which route, and the payload. */
export function defaultPrompt(event: string, route: string, payload: Record<string, unknown>): string {
  return [`A webhook event "${event}" arrived on the route "${route}".`, '', 'Payload (JSON):', JSON.stringify(payload, null, 2)].join(
    '\n',
  );
}

/** The prompt of an accepted event: the route's template filled in, or the default prompt. */
export function webhookPrompt(route: { name: string; prompt: string | null }, event: string, payload: Record<string, unknown>): string {
  return route.prompt === null ? defaultPrompt(event, route.name, payload) : renderTemplate(route.prompt, payload);
}
