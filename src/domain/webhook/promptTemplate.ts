import { lookUpPath } from './payloadPath.js';

/** `{__raw__}` is cut to this many characters. */
export const RAW_PAYLOAD_LIMIT = 4000;

const RAW = '__raw__';

/** `{` path `}` with no braces or white space inside; anything else is plain text. */
const PLACEHOLDER = /\{([^{}\s]+)\}/g;

/**
 * A route's prompt template filled from a payload (decisions §7). `{a.b.0.c}` takes the value at
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
  // Two UTF-16 units per character at most, so this prefix holds the first 4000 characters.
  return Array.from(json.slice(0, RAW_PAYLOAD_LIMIT * 2)).slice(0, RAW_PAYLOAD_LIMIT).join('');
}

/** The prompt without a `prompt` template: which event reached which route, and the payload. */
export function defaultPrompt(event: string, route: string, payload: Record<string, unknown>): string {
  return [
    `A webhook event "${event}" arrived on the route "${route}".`,
    '',
    'Payload (JSON, cut at 4000 characters):',
    rawPayload(payload),
  ].join('\n');
}

/** The prompt of an accepted event: the route's template filled in, or the default prompt. */
export function webhookPrompt(
  route: { name: string; prompt: string | null },
  event: string,
  payload: Record<string, unknown>,
): string {
  return route.prompt === null ? defaultPrompt(event, route.name, payload) : renderTemplate(route.prompt, payload);
}
