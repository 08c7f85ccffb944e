import { isJsonObject } from './payloadPath.js';

/** Request headers by lower-case name; a header sent twice arrives joined by `, `. */
export type WebhookHeaders = Readonly<Record<string, string>>;

/** The header's value, or null when it is absent or empty. `name` is lower case. */
export function headerValue(headers: WebhookHeaders, name: string): string | null {
  if (!Object.hasOwn(headers, name)) return null;
  const value = headers[name];
  return typeof value === 'string' && value !== '' ? value : null;
}

/** Event headers, each real name before its neutral alias. */
const EVENT_HEADERS = ['x-github-event', 'x-hosta-event', 'x-gitlab-event', 'x-hostb-event'];
/** Payload fields that name the event when no header does (Stripe-like, Standard Webhooks, GitLab). */
const EVENT_FIELDS = ['type', 'event_type', 'object_kind'];

/**
 * The event kind: the first event header present, else the payload's `type`, `event_type` or
 * `object_kind` (a non-empty string), else `unknown`.
 */
export function eventKindOf(headers: WebhookHeaders, payload: Record<string, unknown>): string {
  for (const name of EVENT_HEADERS) {
    const value = headerValue(headers, name);
    if (value !== null) return value;
  }
  for (const field of EVENT_FIELDS) {
    const value = Object.hasOwn(payload, field) ? payload[field] : undefined;
    if (typeof value === 'string' && value !== '') return value;
  }
  return 'unknown';
}

/** Delivery-id headers in order of preference. */
const DELIVERY_HEADERS = ['x-github-delivery', 'x-hosta-delivery', 'x-request-id', 'webhook-id'];

/** Who a delivery is; `fromSender` false means a timestamp stands in and nothing is deduplicated. */
export interface DeliveryId {
  value: string;
  fromSender: boolean;
}

/**
 * The sender's delivery id. A request signed with `Stripe-Signature` is named by
 * its payload's `id`: Stripe sends no delivery-id header, and an `X-Request-ID` a proxy added
 * would differ on every retry. Otherwise `X-GitHub-Delivery` / `X-Hosta-Delivery`, else
 * `X-Request-ID`, else `webhook-id`; without any, the receipt time in milliseconds since the
 * epoch, and nothing is deduplicated.
 */
export function deliveryIdOf(headers: WebhookHeaders, receivedAtMs: number, payload: Record<string, unknown> = {}): DeliveryId {
  if (headerValue(headers, 'stripe-signature') !== null) {
    const id = Object.hasOwn(payload, 'id') ? payload.id : undefined;
    if (typeof id === 'string' && id !== '') return { value: id, fromSender: true };
  }
  for (const name of DELIVERY_HEADERS) {
    const value = headerValue(headers, name);
    if (value !== null) return { value, fromSender: true };
  }
  return { value: String(receivedAtMs), fromSender: false };
}

/**
 * Deeper payloads are refused as malformed: nothing a real sender posts comes near, and
 * rendering or storing a payload nested thousands deep would exhaust the stack.
 */
export const MAX_PAYLOAD_DEPTH = 256;

/**
 * `json` is the JSON text the payload was parsed from (the body, or a form body's `payload`
 * field), null for a form body made an object of its fields.
 */
export type ParsedBody = { ok: true; payload: Record<string, unknown>; json: string | null } | { ok: false };

const FORM = 'application/x-www-form-urlencoded';

/** The media types every route takes, as the 415 answer and `Accept-Post` name them. */
export const WEBHOOK_BODY_TYPES: readonly string[] = ['application/json', 'application/*+json', FORM];

/**
 * What a request without a Content-Type counts as: `application/octet-stream`, as HTTP lets a
 * receiver assume (RFC 9110, 8.3), so a route takes one only when its `content_types` lists that.
 */
export const MISSING_CONTENT_TYPE = 'application/octet-stream';

/** `type/subtype`, each a token (RFC 9110, 5.6.2, `*` aside), or a `type/*` or `*\/*` range. */
const MEDIA_RANGE = /^(?:\*\/\*|[a-z0-9!#$%&'+.^_`|~-]+\/(?:\*|[a-z0-9!#$%&'+.^_`|~-]+))$/;

/** Whether `text` is a media type or range a route's `content_types` may list (lower case, no parameters). */
export function isMediaRange(text: string): boolean {
  return MEDIA_RANGE.test(text);
}

/**
 * The media type of a Content-Type header in lower case, its parameters (`; charset=…`) left
 * out; null when the header is absent or empty. Lenient on purpose: a stray parameter a sender
 * adds must not cost it its events, and every body is read as UTF-8 whatever its charset says.
 */
export function mediaTypeOf(contentType: string | null): string | null {
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return type === '' ? null : type;
}

/** Whether a media type is JSON: `application/json` or any `application/<name>+json`. */
function isJsonType(type: string): boolean {
  return type === 'application/json' || /^application\/[^/\s]+\+json$/.test(type);
}

/**
 * Whether a route takes a body of this Content-Type: JSON (`application/json`, any
 * `application/*+json`) and forms (`application/x-www-form-urlencoded`) always, with or without
 * parameters, in any case; any other type, and a missing one (MISSING_CONTENT_TYPE), only when
 * the route's `content_types` (`listed`, in lower case) names it or a range holding it.
 */
export function takesContentType(contentType: string | null, listed: readonly string[]): boolean {
  const type = mediaTypeOf(contentType);
  if (type !== null && (isJsonType(type) || type === FORM)) return true;
  const asked = type ?? MISSING_CONTENT_TYPE;
  const family = `${asked.split('/', 1)[0]}/*`;
  return listed.some((range) => range === asked || range === family || range === '*/*');
}

/**
 * The payload of a request body whose Content-Type the route takes (takesContentType). The body
 * must be valid UTF-8. A JSON type's body must be a JSON object. A form body
 * (`application/x-www-form-urlencoded`) whose text is a JSON object (what `curl -d '{…}'` sends,
 * since curl labels every `-d` body a form) is read as JSON; one whose `payload` field is present
 * must hold a JSON object there (the first code host's form mode); any other form body becomes an
 * object of its fields (a field sent more than once becomes a list of its values). A body of any
 * other type (one the route's `content_types` lists, or none) is read as JSON when its text is a
 * JSON object — senders such as Amazon SNS label JSON `text/plain` — (and refused when that
 * object nests too deep), otherwise it becomes `{"body": "<its text>"}`. Anything else is
 * `{ ok: false }`; this never throws.
 */
export function parseWebhookBody(body: Uint8Array, contentType: string | null): ParsedBody {
  const text = decodeUtf8(body);
  if (text === null) return { ok: false };
  const type = mediaTypeOf(contentType);
  if (type !== null && isJsonType(type)) return parseJsonObject(text);
  if (type !== FORM) {
    const json = readJsonObject(text);
    if (json === 'too_deep') return { ok: false };
    return json === 'not_an_object' ? { ok: true, payload: { body: text }, json: null } : json;
  }
  // A real form encodes "{" as %7B, so a body starting with one was meant as JSON.
  if (text.trimStart().startsWith('{')) return parseJsonObject(text);
  const form = new URLSearchParams(text);
  const embedded = form.get('payload');
  if (embedded !== null) return parseJsonObject(embedded);
  const fields = [...new Set(form.keys())].map((key): [string, string | string[]] => {
    const values = form.getAll(key);
    return [key, values.length === 1 ? values[0]! : values];
  });
  // fromEntries defines own properties, so a field named __proto__ is just a field.
  return { ok: true, payload: Object.fromEntries(fields), json: null };
}

/** One decoder for every body: a fatal decoder keeps no state between whole-buffer calls. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(body: Uint8Array): string | null {
  try {
    return UTF8.decode(body);
  } catch {
    return null;
  }
}

function parseJsonObject(text: string): ParsedBody {
  const read = readJsonObject(text);
  return read === 'not_an_object' || read === 'too_deep' ? { ok: false } : read;
}

/** The JSON object `text` holds, or why not: it is no JSON object, or one nested too deep. */
function readJsonObject(text: string): Extract<ParsedBody, { ok: true }> | 'not_an_object' | 'too_deep' {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not_an_object';
  }
  if (!isJsonObject(value)) return 'not_an_object';
  if (depthExceeds(value, MAX_PAYLOAD_DEPTH)) return 'too_deep';
  return { ok: true, payload: value, json: text };
}

/**
 * Whether objects and lists nest deeper than `limit`; iterative, so depth cannot hurt it. Only
 * objects and lists are visited (a payload is mostly strings and numbers), with their depths
 * kept in a second stack rather than a pair allocated per value.
 */
function depthExceeds(root: object, limit: number): boolean {
  const values: object[] = [root];
  const depths: number[] = [1];
  while (values.length > 0) {
    const value = values.pop() as Record<string, unknown>;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    for (const key in value) {
      const child = value[key];
      if (typeof child === 'object' && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
